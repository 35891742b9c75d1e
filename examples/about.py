"""What this package is: the section it belongs to, its version, and the site it came from."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, metadata

DISTRIBUTION = "dl-course-p5-9-1"
"""The distribution's name; the import name is ``examples`` (PyPI's ``examples`` is unrelated)."""

SECTION = "P5-9.1 GPUs And Parallel Processing"


def about() -> str:
    """One line naming the section, this package's version and its version of the site."""
    try:
        meta = metadata(DISTRIBUTION)
    except PackageNotFoundError:  # imported from a checkout without installing it
        return f"{SECTION} · examples (not installed: version unknown)"
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [])
    site = urls.get("Documentation", urls.get("Homepage", "no site in the metadata"))
    return f"{SECTION} · {DISTRIBUTION} {meta['Version']} · {site}"
