"""Every build serves this version's wheel, and every page shows the one line that installs it.

The wheel of the ``examples`` package is built (hatchling, locked, in this process) from the same
sources the build's blocks import, and published at the root of the built site, which mike
turns into the version folder: ``<site_url><version>/<wheel>``. The wheel is built, or read
from the store where nothing that goes into it changed, by ``build_support.publishing.wheel_build``.

The wheel also carries the book's expected outputs (``python -m examples verify``): the source
and output of every block shown with a text output, taken from this build's execution record
(``build_support.publishing.record.expected_outputs``). They exist once every page's blocks have
run, so the wheel is built in ``on_env`` (after every page is rendered, before files are
copied); its name, which the pages show, is known from the start. The outputs go to hatchling in
a file outside the source tree (named in the hook settings ``hatch_build.py`` reads) and
into the wheel's digest: written into ``examples/`` they would change the execution cache's key.

``{{ install.name }}`` in a page (and in a notebook's text, its ``.ipynb`` and its jupytext
source) becomes:

- ``command``: the install line, ``python -m pip install <requirement>``;
- ``requirement``: the wheel's address with its SHA-256, ``<url>#sha256=<hex>``: pip and uv
  check it, and refuse a wheel that is not the one this build served;
- ``gpu_command``: the same wheel with its NVIDIA GPU extra: ``python -m pip install
  "<gpu_requirement>"``;
- ``gpu_requirement``: the requirement it installs, ``dl-course[cuda12] @ <requirement>``
  (``gpu_requirement``): the course's distribution, never named for a section;
- ``url``: the wheel's published address;
- ``wheel``: the wheel's file name, which is also a link to it from a page in ``docs/``;
- ``version``: on a page of a section (``build_support.section.section_of``), that section's
  version, as its header shows it; on any other page, the release's, as mike's folder names it
  (the wheel, of the release, holds every section at its own version);
- ``sha256``: the wheel's SHA-256 (``Wheel.sha256``);
- ``python``: the Pythons the wheel's metadata accepts, in words (``3.11 to 3.15``: its
  ``Requires-Python``, ``wheel_build.python_range``).

The SHA-256 and the Pythons are known once the wheel is built (``on_env``), after the pages'
Markdown was rendered: the Markdown gets a token in their place (``AFTER_BUILD``), which
``on_page_context`` replaces in each page's HTML before Material's search or the template read
it; the downloads (``.ipynb``, jupytext source) get the values themselves (``on_post_page``).

An unknown name fails the build; a wheel that is missing when the site is written fails it too.
"""

from __future__ import annotations

import html
import json
import re
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from build_support import progress, section, settings
from build_support.caching.cache import Cache, key_of
from build_support.execution import state
from build_support.publishing import release
from build_support.publishing.wheel_build import (
    Wheel,
    builder_version,
    cached_wheel,
    python_range,
    wheel_digest,
    wheel_name,
)

_PLACEHOLDER = re.compile(r"\{\{\s*install\.(\w+)\s*\}\}")
# What is known of the wheel only once it is built: the token that stands for each in a page
# until then (letters and hyphens: the same in Markdown, HTML, JSON and a shell line).
AFTER_BUILD = {"sha256": "wheel-sha256-once-built", "python": "wheel-pythons-once-built"}


class ThisBuild:
    """This build's wheel: what ``on_env`` builds it from, the values of ``{{ install.name }}``
    (with ``AFTER_BUILD``'s tokens until the wheel is built), the wheel as a file of the site
    (its content set by ``on_env``), and the wheel once built. A plain class, as
    ``mermaid_svg.Drawing``: dataclasses need the module in ``sys.modules``, and a hook loaded by
    file (tests/testkit) is not."""

    def __init__(self, project: Path, version: str, folder_url: str, install: dict[str, str]):
        self.project, self.version, self.folder_url = project, version, folder_url
        self.install = install
        self.sections: list[section.Section] = []
        self.file: File | None = None
        self.wheel: Wheel | None = None
        self.known: dict[str, str] = {}  # AFTER_BUILD's names: their values, once built

    def after_build(self, text: str) -> str:
        """``text`` with ``AFTER_BUILD``'s tokens replaced by the built wheel's values."""
        if self.wheel is None:
            raise PluginError("wheel: a page asked for the wheel's SHA-256 before it was built")
        for name, token in AFTER_BUILD.items():
            text = text.replace(token, self.known[name])
        return text

    def built(self, wheel: Wheel) -> None:
        """The wheel is built: what the tokens stand for is read from it, once (its metadata is
        in the zip: 10 ms a page when read for each)."""
        self.wheel = wheel
        self.known = {"sha256": wheel.sha256, "python": python_range(wheel.requires_python)}

    def built_install(self, page: str) -> dict[str, str]:
        """The values of ``{{ install.name }}`` on ``page`` once the wheel is built."""
        return {name: self.after_build(value) for name, value in self.install_on(page).items()}

    def install_on(self, page: str) -> dict[str, str]:
        """The values of ``{{ install.name }}`` on ``page`` (relative to docs/): ``version`` is
        its section's, where it belongs to one, else the release's."""
        held = section.section_of(page, known=self.sections)
        return self.install if held is None else dict(self.install, version=held.version)


_this_build: ThisBuild | None = None  # made anew by each build's on_config


def version_folder_url(
    site_url: str, version: str, deployed: str | None, serving: bool = False
) -> str:
    """The published address of the version folder, ending in ``/``.

    Under ``mike deploy`` the build's ``site_url`` already ends in the folder it deploys
    (``deployed``, from ``build_support.settings``; mike's plugin appends it); that folder must
    be the page's version, or the line would install another version's wheel. Under ``mkdocs
    serve`` (``serving``) the wheel is served from the dev server's root, so the line the
    author previews installs it from there.
    """
    if serving:  # the dev server's site_url, with no version folder: its root
        return site_url.rstrip("/") + "/"
    if deployed is None:
        return f"{site_url.rstrip('/')}/{version}/"
    if deployed != version:
        raise PluginError(
            f"wheel: mike deploys the folder {deployed!r}, but the release is {version!r} "
            "([tool.course] release in pyproject.toml): the install line would not match the "
            "wheel the folder serves"
        )
    return site_url.rstrip("/") + "/"


def on_config(config):
    project = Path(config.config_file_path).parent
    if not (project / "pyproject.toml").is_file():
        raise PluginError(f"wheel: no pyproject.toml beside {config.config_file_path}")
    try:
        version, sections = release.release(project), section.sections(project)
    except (OSError, KeyError, ValueError) as error:
        raise PluginError(f"wheel: the course model: {error!r}") from None
    deployed = settings.deployed_version()
    folder_url = version_folder_url(config.site_url, version, deployed, state.PROCESS.serving)
    name = wheel_name(project, version)
    url = f"{folder_url}{name}"
    requirement = f"{url}#sha256={AFTER_BUILD['sha256']}"  # pip and uv check the hash
    install = dict(AFTER_BUILD, version=version, wheel=name, url=url, requirement=requirement)
    install["command"] = f"python -m pip install {requirement}"
    gpu = gpu_requirement(project, requirement)
    install.update(gpu_requirement=gpu, gpu_command=f'python -m pip install "{gpu}"')
    global _this_build
    _this_build = ThisBuild(project, version, folder_url, install)
    _this_build.sections = sections
    return config


def gpu_requirement(project: Path, url: str) -> str:
    """The wheel at ``url`` (with its ``#sha256=``) with its extra for NVIDIA GPUs
    (pyproject.toml's ``[tool.course] gpu-extra``; hatch_build.py pins it to the wheel's own jax
    versions), as a direct reference: ``dl-course[cuda12] @ <url>``. The install line
    quotes it for the shell (brackets, spaces)."""
    name = section.distribution_name(project)
    return f"{name}[{section.gpu_extra(project)}] @ {url}"


def on_files(files, config):
    # The wheel is a file of the site: pages link to it, and mkdocs copies it to the site's root
    # once on_env has built it (its content is set there).
    _this_build.file = File.generated(config, _this_build.install["wheel"], content=b"")
    files.append(_this_build.file)
    return files


def on_env(env, config, files):
    """Every page's blocks have run: build the wheel with their expected outputs."""
    progress.note("the wheel")
    this = _this_build
    outputs = with_sections(_expected_outputs(this.version), this.sections)
    expected = json.dumps(outputs, indent=1, sort_keys=True).encode()
    digest = wheel_digest(this.project, this.version, this.folder_url, expected)
    key, cache = key_of(digest, builder_version()), Cache.for_project("wheel", this.project)
    with tempfile.TemporaryDirectory(prefix="expected-outputs-") as folder:
        path = Path(folder) / "expected-outputs.json"
        path.write_bytes(expected)
        this.built(cached_wheel(this.project, cache, key, expected=path))
    named = this.install["wheel"]
    if this.wheel.name != named:
        raise PluginError(f"wheel: built {this.wheel.name}, but the pages name {named}")
    this.file.content_bytes = this.wheel.content
    progress.note("writing the pages")
    return env


def _expected_outputs(version: str) -> dict:
    from build_support.publishing import record

    def current_environment():
        from examples.verify import environment

        return environment()

    outputs = state.current().outputs()
    return record.expected_outputs(outputs, version, current_environment)


def with_sections(expected: dict, sections: list[section.Section]) -> dict:
    """The expected outputs with each block's section (``"section": "P5-9.1"``, where its page
    belongs to one) and every section's version (``"sections": {"P5-9.1": "v2026.07.20"}``):
    ``verify`` names the version of the section whose blocks it compares."""
    for block in expected["blocks"]:
        held = section.section_of(block["page"], known=sections)
        if held is not None:
            block["section"] = held.id
    return expected | {"sections": {one.id: one.version for one in sections}}


def fill_placeholders(
    text: str, where: str, values: dict[str, str], escape=lambda value: value
) -> str:
    """``text`` with each ``{{ install.name }}`` replaced by ``values[name]`` (this build's:
    ``command``, ``url``, ``wheel``, ``version``), passed through ``escape`` (HTML, JSON); an
    unknown name raises ``PluginError`` naming ``where``."""

    def substitute(match: re.Match[str]) -> str:
        if match[1] not in values:
            raise PluginError(f"{where}: unknown placeholder {match[0]!r}; known: {sorted(values)}")
        return escape(values[match[1]])

    return _PLACEHOLDER.sub(substitute, text)


def on_page_markdown(markdown, page, config, files):
    return fill_placeholders(markdown, page.file.src_uri, _this_build.install_on(page.file.src_uri))


def on_page_content(content, page, config, files):
    # Notebook pages are rendered from the notebook by mkdocs-jupyter, never as Markdown.
    install = _this_build.install_on(page.file.src_uri)
    return fill_placeholders(content, page.file.src_uri, install, html.escape)


@event_priority(100)  # before Material's search indexes the page
def on_page_context(context, page, config, nav):
    # The wheel is built (on_env): its SHA-256 and Pythons replace their tokens in the page.
    if page.content:
        page.content = _this_build.after_build(page.content)
    return context


def on_post_page(output, page, config):
    if getattr(page, "nb_url", None):  # the .ipynb and jupytext source offered for download
        install = _this_build.built_install(page.file.src_uri)
        for path in Path(page.file.abs_dest_path).parent.iterdir():
            if path.suffix in {".ipynb", ".py"}:
                escape = (lambda value: json.dumps(value)[1:-1]) if path.suffix == ".ipynb" else str
                text = fill_placeholders(
                    path.read_text(encoding="utf-8"), str(path), install, escape
                )
                path.write_text(text, encoding="utf-8")
    return output


def check_served(site_dir: Path, wheel_name: str) -> None:
    """Raise ``PluginError`` when the wheel ``wheel_name`` is not in the built site."""
    served = site_dir / wheel_name
    if not served.is_file():
        raise PluginError(f"wheel: {wheel_name} is missing from the built site ({served})")


def on_post_build(config):
    check_served(Path(config.site_dir), _this_build.wheel.name)
