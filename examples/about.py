"""What this package is: the course sections it holds, each at its own version, the release it
came with, and the site it came from.

The wheel's metadata names each section in a Project-URL labelled with the section's ID and
version (``P5-9.1 v2026.07.20``, its page in the release: hatch_build.py, from the course model
in build_support/section.py); nothing here names a section."""

from __future__ import annotations

import json
import re
from importlib.metadata import PackageNotFoundError, distribution, metadata

DISTRIBUTION = "dl-course"
"""The distribution's name; the import name is ``examples`` (PyPI's ``examples`` is unrelated)."""

_SITE_LABELS = ("Homepage", "Documentation")


def about() -> str:
    """One line naming every section with its version (``P5-9.1 v2026.07.20``), this package's
    version and its release's folder of the site."""
    try:
        meta = metadata(DISTRIBUTION)
    except PackageNotFoundError:  # imported from a checkout without installing it
        return "examples (not installed: its sections and version unknown)"
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [])
    site = urls.get("Documentation", urls.get("Homepage", "no site in the metadata"))
    sections = ", ".join(label for label in urls if label not in _SITE_LABELS) or "no section"
    return f"{sections} · {DISTRIBUTION} {meta['Version']} · {site}"


def gpu_install_line() -> str:
    """The line that installs this version with its NVIDIA GPU extra, as the install box's GPU
    tab prints it: ``python -m pip install "dl-course[cuda12] @ <site><wheel>#sha256=…"``.
    The extra is the one whose requirements add a ``jax[...]`` extra."""
    try:
        meta = metadata(DISTRIBUTION)
    except PackageNotFoundError:
        return "the NVIDIA GPU line of the install box on this section's page"
    extras = [
        extra
        for extra in meta.get_all("Provides-Extra") or []
        for requirement in meta.get_all("Requires-Dist") or []
        if requirement.startswith("jax[") and f"extra == '{extra}'" in requirement
    ]
    return install_line(extras[0] if extras else "")


def install_line(extra: str) -> str:
    """The line that installs this version's wheel from its site with ``extra`` (none: ""): the
    wheel lies in the version's folder of the site (the ``Documentation`` URL); its SHA-256 is
    the one the installer checked, where it recorded it (pip does, in ``direct_url.json``)."""
    brackets = f"[{extra}]" if extra else ""
    try:
        meta = metadata(DISTRIBUTION)
    except PackageNotFoundError:  # a checkout: the wheel's site is not known here
        return f'python -m pip install "{DISTRIBUTION}{brackets}"'
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [])
    wheel = f"{re.sub(r'[-_.]+', '_', DISTRIBUTION)}-{meta['Version']}-py3-none-any.whl"
    checked = _checked_sha256(wheel)
    fragment = f"#sha256={checked}" if checked else ""
    url = f"{urls.get('Documentation', '')}{wheel}{fragment}"
    return f'python -m pip install "{DISTRIBUTION}{brackets} @ {url}"'


def _checked_sha256(wheel: str) -> str | None:
    """The SHA-256 of ``wheel`` that the installer checked, as PEP 610's ``direct_url.json``
    records it (pip: ``archive_info.hashes``), where this installation came from that file."""
    try:
        recorded = json.loads(distribution(DISTRIBUTION).read_text("direct_url.json") or "null")
    except (PackageNotFoundError, ValueError):
        return None
    if not isinstance(recorded, dict) or not str(recorded.get("url", "")).endswith(f"/{wheel}"):
        return None
    hashes = (recorded.get("archive_info") or {}).get("hashes") or {}
    checked = hashes.get("sha256")
    return checked if isinstance(checked, str) and re.fullmatch(r"[0-9a-f]{64}", checked) else None
