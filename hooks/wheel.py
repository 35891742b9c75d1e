"""Every build serves this version's wheel, and every page shows the one line that installs it.

The wheel of the ``examples`` package is built (``uv build --wheel``, hatchling) from the same
sources the build's blocks import, and published at the root of the built site, which mike
turns into the version folder: ``<site_url><version>/<wheel>``. hatchling writes wheels
reproducibly (fixed timestamps, sorted entries), so the wheel is kept in the store's ``wheel``
cache (build_support/store.py), keyed on a digest of everything that goes into it and uv's
version, and rebuilt only when that changes. (hatchling itself is resolved by uv within
pyproject.toml's ``build-system.requires``, which is in the digest.)

The wheel also carries the book's expected outputs (``python -m examples verify``): the source
and output of every block shown with a text output, taken from this build's execution record
(``build_support.record.expected_outputs``). They exist once every page's blocks have run, so
the wheel is built in ``on_env`` (after every page is rendered, before files are copied); its
name, which the pages show, is known from the start. The outputs go to hatchling in a file
outside the source tree (``COURSE_EXPECTED_OUTPUTS``, read by ``hatch_build.py``) and into the
wheel's digest: written into ``examples/`` they would change the execution cache's key.

``{{ install.name }}`` in a page (and in a notebook's text, its ``.ipynb`` and its jupytext
source) becomes:

- ``command``: the install line, e.g. ``python -m pip install <site_url><version>/<wheel>``;
- ``url``: the wheel's published address;
- ``wheel``: the wheel's file name, which is also a link to it from a page in ``docs/``;
- ``version``: the version, as the section page's front matter and mike's folder name it.

An unknown name fails the build; a wheel that is missing when the site is written fails it too.
"""

from __future__ import annotations

import functools
import hashlib
import html
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import NamedTuple
from unittest import mock

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils.meta import get_data
from packaging.version import Version

from build_support.named_cache import Cache, log
from build_support.store import EntryFault, key_of

SECTION_PAGE = "p5-9-1-gpus-and-parallel-processing.md"  # holds `version:` (see the Makefile)
# Everything the wheel is built from (hatch_build.py reads the version from the section page
# and the URLs from mkdocs.yml: the digest takes those two values, not the whole files).
WHEEL_SOURCES = ("pyproject.toml", "hatch_build.py", "README.md", "examples")
_PLACEHOLDER = re.compile(r"\{\{\s*install\.(\w+)\s*\}\}")
EXPECTED_OUTPUTS_ENV = "COURSE_EXPECTED_OUTPUTS"  # hatch_build.py reads it

_install: dict[str, str] = {}  # this build's values for {{ install.name }}


class Wheel(NamedTuple):
    name: str
    content: bytes


_wheel: Wheel | None = None  # this build's wheel
_file: File | None = None  # the wheel as a file of the site (its content set by on_env)
_inputs: dict = {}  # what on_env builds the wheel from
_command: str | None = None  # "build" or "serve" (mkdocs' on_startup)


def on_startup(command, dirty):
    global _command
    _command = command


def section_version(docs_dir: Path) -> str:
    """The version in the section page's front matter, as mike's version folder names it."""
    _, meta = get_data((docs_dir / SECTION_PAGE).read_text())
    if not meta.get("version"):
        raise PluginError(f"wheel: no 'version:' in the front matter of {SECTION_PAGE}")
    return str(meta["version"])


def version_folder_url(site_url: str, version: str) -> str:
    """The published address of the version folder, ending in ``/``.

    Under ``mike deploy`` the build's ``site_url`` already ends in the deployed folder (mike's
    plugin appends it); that folder must be the page's version, or the line would install
    another version's wheel. Under ``mkdocs serve`` the wheel is served from the dev server's
    root, so the line the author previews installs it from there.
    """
    deployed = os.environ.get("MIKE_DOCS_VERSION")
    if _command == "serve":  # the dev server's site_url, with no version folder: its root
        return site_url.rstrip("/") + "/"
    if deployed is None:
        return f"{site_url.rstrip('/')}/{version}/"
    if deployed != version:
        raise PluginError(
            f"wheel: mike deploys the folder {deployed!r}, but {SECTION_PAGE} says version "
            f"{version!r}: the install line would not match the wheel the folder serves"
        )
    return site_url.rstrip("/") + "/"


def wheel_name(project: Path, version: str) -> str:
    """The wheel's file name, as hatchling writes it (``hatch_build.py`` sets its version)."""
    name = tomllib.loads((project / "pyproject.toml").read_text())["project"]["name"]
    return f"{re.sub(r'[-_.]+', '_', name).lower()}-{Version(version)}-py3-none-any.whl"


def wheel_digest(project: Path, version: str, folder_url: str, expected: bytes = b"") -> str:
    """A digest of every input of the wheel: its sources, the version, the site's address and
    the book's expected outputs."""
    digest = hashlib.sha256(f"{version}\n{folder_url}\n".encode())
    digest.update(hashlib.sha256(expected).digest())
    for name in WHEEL_SOURCES:
        path = project / name
        paths = sorted(path.rglob("*")) if path.is_dir() else [path]
        for source in paths:
            if source.is_file() and "__pycache__" not in source.parts and source.suffix != ".pyc":
                digest.update(f"{source.relative_to(project).as_posix()}\n".encode())
                digest.update(hashlib.sha256(source.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _uv() -> str:
    uv = Path(sys.executable).with_name("uv")
    return str(uv) if uv.exists() else "uv"


@functools.cache  # once per process: a serve rebuild does not start uv again
def builder_version() -> str:
    """uv's version: the front end that builds the wheel (and resolves hatchling)."""
    result = subprocess.run([_uv(), "--version"], capture_output=True, text=True)
    return result.stdout.strip() or "uv: no version"


def _as_wheel(payload: bytes) -> bytes:
    if not payload.startswith(b"PK\x03\x04"):
        raise EntryFault("not a zip archive")
    return payload


def cached_wheel(project: Path, cache: Cache, key: str) -> Wheel:
    """The wheel for ``key``: from the cache, or built now and stored there."""
    found = cache.read(key, _as_wheel)
    name = found.meta.get("name")
    if found.value is not None and isinstance(name, str) and re.fullmatch(r"[\w.+-]+\.whl", name):
        return Wheel(name, found.value)
    if found.value is not None:
        log.warning("%s: entry %s names no wheel file (%r): a miss", cache.name, key[:12], name)
    with tempfile.TemporaryDirectory(prefix="wheel-") as staging:
        result = subprocess.run(
            [_uv(), "build", "--wheel", "--quiet", "--out-dir", staging, str(project)],
            capture_output=True,
            text=True,
        )
        wheels = sorted(Path(staging).glob("*.whl"))
        if result.returncode != 0 or len(wheels) != 1:
            raise PluginError(f"wheel: `uv build --wheel` failed in {project}:\n{result.stderr}")
        wheel = Wheel(wheels[0].name, wheels[0].read_bytes())
    cache.write(key, wheel.content, name=wheel.name)
    return wheel


def on_config(config):
    project = Path(config.config_file_path).parent
    if not (project / "pyproject.toml").is_file():
        raise PluginError(f"wheel: no pyproject.toml beside {config.config_file_path}")
    version = section_version(Path(config.docs_dir))
    folder_url = version_folder_url(config.site_url, version)
    _inputs.update(project=project, version=version, folder_url=folder_url)
    name = wheel_name(project, version)
    url = f"{folder_url}{name}"
    _install.clear()
    _install.update(version=version, wheel=name, url=url, command=f"python -m pip install {url}")
    return config


def on_files(files, config):
    # The wheel is a file of the site: pages link to it, and mkdocs copies it to the site's root
    # once on_env has built it (its content is set there).
    global _file
    _file = File.generated(config, _install["wheel"], content=b"")
    files.append(_file)
    return files


def on_env(env, config, files):
    """Every page's blocks have run: build the wheel with their expected outputs."""
    global _wheel
    expected = json.dumps(_expected_outputs(), indent=1, sort_keys=True).encode()
    project = _inputs["project"]
    digest = wheel_digest(project, _inputs["version"], _inputs["folder_url"], expected)
    key, cache = key_of(digest, builder_version()), Cache.for_project("wheel", project)
    with tempfile.TemporaryDirectory(prefix="expected-outputs-") as folder:
        path = Path(folder) / "expected-outputs.json"
        path.write_bytes(expected)
        # Set for the `uv build` that cached_wheel may start (hatch_build.py reads it).
        with mock.patch.dict(os.environ, {EXPECTED_OUTPUTS_ENV: str(path)}):
            _wheel = cached_wheel(project, cache, key)
    if _wheel.name != _install["wheel"]:
        raise PluginError(f"wheel: built {_wheel.name}, but the pages name {_install['wheel']}")
    _file.content_bytes = _wheel.content
    return env


def _expected_outputs() -> dict:
    if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from build_support import record, runner

    def current_environment():
        from examples.verify import environment

        return environment()

    outputs = runner.current_build().outputs()
    return record.expected_outputs(outputs, _install["version"], current_environment)


def _fill(text: str, where: str, escape=lambda value: value) -> str:
    def substitute(match: re.Match[str]) -> str:
        if match[1] not in _install:
            raise PluginError(
                f"{where}: unknown placeholder {match[0]!r}; known: {sorted(_install)}"
            )
        return escape(_install[match[1]])

    return _PLACEHOLDER.sub(substitute, text)


def on_page_markdown(markdown, page, config, files):
    return _fill(markdown, page.file.src_uri)


def on_page_content(content, page, config, files):
    # Notebook pages are rendered from the notebook by mkdocs-jupyter, never as Markdown.
    return _fill(content, page.file.src_uri, html.escape)


def on_post_page(output, page, config):
    if getattr(page, "nb_url", None):  # the .ipynb and jupytext source offered for download
        for path in Path(page.file.abs_dest_path).parent.iterdir():
            if path.suffix in {".ipynb", ".py"}:
                escape = (lambda value: json.dumps(value)[1:-1]) if path.suffix == ".ipynb" else str
                path.write_text(_fill(path.read_text(), str(path), escape))
    return output


def on_post_build(config):
    served = Path(config.site_dir) / _wheel.name
    if not served.is_file():
        raise PluginError(f"wheel: {_wheel.name} is missing from the built site ({served})")
