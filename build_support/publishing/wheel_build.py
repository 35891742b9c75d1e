"""The wheel of the ``examples`` package that every build serves: its file name, a digest of
everything that goes into it, and the wheel itself, built by hatchling or read from the store,
with what its install lines say of it: its SHA-256 (the ``#sha256=`` that pip and uv check) and
the Pythons its metadata accepts (``Requires-Python``, from pyproject.toml's ``requires-python``).

hatchling, pyproject.toml's build backend, is locked in uv.lock and runs in the build's own
process, as ``uv build --wheel`` would run it in an environment of its own (the same bytes): no
environment to make and no registry to ask on every build, which cost a ``mkdocs serve`` module
edit 0.8 s, and the same hatchling on every machine. hatchling writes wheels reproducibly (fixed
timestamps, sorted entries), so a wheel is kept in the store's ``wheel`` cache
(build_support/caching/store.py), keyed on that digest and the versions of hatchling and the
libraries it runs on, and built again only when either changes. ``hooks/wheel.py`` serves it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import io
import re
import tempfile
import tomllib
import traceback
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import NamedTuple

from mkdocs.exceptions import PluginError
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .. import disk_space, section
from ..caching.cache import Cache, log
from ..caching.store import EntryFault
from ..section import PACKAGE

# Everything the wheel is built from (hatch_build.py reads the sections from their pages and
# the URLs from mkdocs.yml: the digest takes those values, not the whole files).
WHEEL_SOURCES = ("pyproject.toml", "hatch_build.py", "build_support/section.py", "README.md")
WHEEL_SOURCES += ("build_support/publishing/release.py",)
WHEEL_SOURCES += (PACKAGE,)
EXPECTED_OUTPUTS_SETTING = "expected-outputs"  # hatch_build.py reads it (its own constant)


class Wheel(NamedTuple):
    name: str
    content: bytes

    @property
    def sha256(self) -> str:
        """The wheel's SHA-256 (hex): every install line's ``#sha256=`` fragment."""
        return hashlib.sha256(self.content).hexdigest()

    @property
    def requires_python(self) -> str:
        """``Requires-Python`` in the wheel's metadata (``>=3.11,<3.16``)."""
        with zipfile.ZipFile(io.BytesIO(self.content)) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = Parser().parsestr(archive.read(name).decode())
        return metadata["Requires-Python"]


def supported_pythons(requires_python: str) -> list[str]:
    """The Python 3 versions (``3.11``, ...) a ``Requires-Python`` accepts, oldest first."""
    accepted = SpecifierSet(requires_python)
    return [f"3.{minor}" for minor in range(100) if accepted.contains(f"3.{minor}")]


def python_range(requires_python: str) -> str:
    """The Pythons a ``Requires-Python`` accepts, in words: ``3.11 to 3.15`` (``3.11 or newer``
    where it sets no upper bound), as the install box says which Python the wheel needs."""
    pythons = supported_pythons(requires_python)
    if not pythons:
        raise PluginError(f"wheel: Requires-Python {requires_python!r} accepts no Python 3")
    if pythons[-1] == "3.99":
        return f"{pythons[0]} or newer"
    return f"{pythons[0]} to {pythons[-1]}"


def wheel_name(project: Path, version: str) -> str:
    """The wheel's file name, as hatchling writes it (``hatch_build.py`` sets its version)."""
    name = section.distribution_name(project)
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{Version(version)}-py3-none-any.whl"


def wheel_digest(project: Path, version: str, folder_url: str, expected: bytes = b"") -> str:
    """A digest of every input of the wheel: its sources, the version, the address its install
    line names, the published address its metadata names, the book's expected outputs, and
    every section (ID, version, title, page: its metadata names them)."""
    digest = hashlib.sha256(f"{version}\n{folder_url}\n{section.site_url(project)}\n".encode())
    digest.update(hashlib.sha256(expected).digest())
    digest.update(repr(section.sections(project)).encode())  # the metadata's sections
    for name in WHEEL_SOURCES:
        path = project / name
        paths = sorted(path.rglob("*")) if path.is_dir() else [path]
        for source in paths:
            if source.is_file() and "__pycache__" not in source.parts and source.suffix != ".pyc":
                digest.update(f"{source.relative_to(project).as_posix()}\n".encode())
                digest.update(hashlib.sha256(source.read_bytes()).digest())
    return digest.hexdigest()[:16]


@functools.cache  # once per process: the hatchling a serve rebuild runs is the one it imported
def builder_version() -> str:
    """The versions of hatchling, the backend that builds the wheel (locked in uv.lock), and of
    the libraries it runs on (packaging normalises the metadata it writes): ``hatchling 1.33.0;
    packaging 25.0; ...``."""
    requirements = map(Requirement, importlib.metadata.requires("hatchling") or [])
    names = ["hatchling", *sorted(req.name for req in requirements if req.marker is None)]
    return "; ".join(f"{name} {importlib.metadata.version(name)}" for name in names)


def _as_wheel(payload: bytes) -> bytes:
    if not payload.startswith(b"PK\x03\x04"):
        raise EntryFault("not a zip archive")
    return payload


def cached_wheel(project: Path, cache: Cache, key: str, expected: Path | None = None) -> Wheel:
    """The wheel for ``key``: from the cache, or built now (with the expected outputs in the
    file ``expected``, where given) and stored there."""
    found = cache.read(key, _as_wheel)
    name = found.meta.get("name")
    if found.entry is not None and isinstance(name, str) and re.fullmatch(r"[\w.+-]+\.whl", name):
        return Wheel(name, found.entry)
    if found.entry is not None:
        log.warning("%s: entry %s names no wheel file (%r): a miss", cache.name, key[:12], name)
    wheel = built_wheel(project, expected)
    cache.write(key, wheel.content, name=wheel.name)
    return wheel


def built_wheel(project: Path, expected: Path | None = None) -> Wheel:
    """The wheel of ``project``, built now by hatchling in this process, as ``uv build --wheel``
    builds it (hatchling's own ``build_wheel`` does the same), with the expected outputs in the
    file ``expected``, where given (hatch_build.py reads the path from its hook's settings)."""
    from hatchling.builders.wheel import WheelBuilder  # on first use: 0.1 s, once a process

    config = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    if expected is not None:
        hook = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]
        hook[EXPECTED_OUTPUTS_SETTING] = str(expected)
    with tempfile.TemporaryDirectory(prefix="wheel-") as staging:
        try:
            builder = WheelBuilder(str(project), config=config)
            built = [Path(path) for path in builder.build(directory=staging, versions=["standard"])]
            wheel = Wheel(built[0].name, built[0].read_bytes())
        except Exception as error:
            if disk_space.full(error):
                path = disk_space.filename_of(error, staging)
                raise PluginError("wheel: " + disk_space.no_space_line(path, "the wheel")) from None
            said = "".join(traceback.format_exception(error)[-4:])
            raise PluginError(
                f"wheel: hatchling could not build {project}'s wheel:\n{said}"
            ) from None
    return wheel
