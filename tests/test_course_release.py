"""The course, not a section, names the readers' package: the wheel's distribution is named for
the course, and its version is the release's, in a form no section's version can take
(build_support/publishing/release.py), while each section's page still names its own version as
its own (hooks/wheel.py, hatch_build.py).

A second section is added to a throw-away copy of the course model (pyproject.toml, mkdocs.yml,
the section pages and their readers), as an author adds one; nothing is built.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError
from packaging.version import Version

from build_support import section
from build_support.publishing import release
from hatch_build import CustomMetadataHook
from testkit.hooks import load_hook
from testkit.project import ROOT, SECTION_PAGE, free_section_id

SECOND_ID = free_section_id()  # P5-9.2 where no author added it, else the next free one
SECOND = f"""\
---
section_id: {SECOND_ID}
version: v2026.08.01
---

# {SECOND_ID} Batches And Tensors
"""
SECOND_PAGE = f"{section.slug(SECOND_ID)}-batches-and-tensors.md"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """The course model of this checkout, with a section added beside its own."""
    for name in ("pyproject.toml", "mkdocs.yml"):
        shutil.copy(ROOT / name, tmp_path / name)
    ignore = shutil.ignore_patterns("__pycache__")  # hatch_build.py loads its readers from here
    shutil.copytree(ROOT / "build_support", tmp_path / "build_support", ignore=ignore)
    (tmp_path / "docs").mkdir()
    for one in section.sections():
        shutil.copy(ROOT / "docs" / one.page, tmp_path / "docs" / one.page)
    (tmp_path / "docs" / SECOND_PAGE).write_text(SECOND, encoding="utf-8")
    return tmp_path


def install_boxes(project: Path) -> dict[str, dict[str, str]]:
    """What ``{{ install.* }}`` says on each section's page and on the home page, as the wheel
    hook's ``on_config`` computes it for ``project``."""
    hook = load_hook("wheel")
    config = SimpleNamespace(
        config_file_path=str(project / "mkdocs.yml"), site_url="https://course.example.org/"
    )
    hook.on_config(config)
    pages = [one.page for one in section.sections(project)] + ["index.md"]
    return {page: hook._this_build.install_on(page) for page in pages}


def pyproject(project: Path) -> dict:
    return tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))


def wheel_metadata(project: Path) -> dict:
    """The metadata hatch_build.py gives the wheel of ``project``."""
    metadata = dict(pyproject(project)["project"])
    CustomMetadataHook(str(project), {}).update(metadata)
    return metadata


def test_a_second_sections_readers_install_the_courses_package_at_the_courses_release(course):
    sections = section.sections(course)
    assert [one.id for one in sections] == [*(one.id for one in section.sections()), SECOND_ID]
    box = install_boxes(course)[SECOND_PAGE]
    name, requirement = box["gpu_requirement"].split("[", 1)
    assert requirement.startswith("cuda12] @ ")
    distribution, wheel_version = box["wheel"].split("-")[:2]
    for one in sections:  # the package names no section, and carries no section's version
        assert one.slug not in name and one.slug.replace("-", "_") not in distribution, one
        assert Version(wheel_version) != Version(one.version), one
        assert f"/{one.version}/" not in box["url"], one
    assert box["version"] == "v2026.08.01"  # the page's own version, as its header shows it
    metadata = wheel_metadata(course)
    assert metadata["name"] == name
    assert metadata["version"] == wheel_version
    assert all(Version(metadata["version"]) != Version(one.version) for one in sections)


def test_each_page_names_its_own_sections_version_and_the_home_page_the_release(course):
    boxes = install_boxes(course)
    assert boxes[f"{SECTION_PAGE}.md"]["version"] == section.by_id("P5-9.1", course).version
    assert boxes[SECOND_PAGE]["version"] == "v2026.08.01"
    assert boxes["index.md"]["version"] == pyproject(course)["tool"]["course"]["release"]
    urls = {box["url"] for box in boxes.values()}
    assert len(urls) == 1  # one wheel, the release's, on every page


def test_a_release_in_a_sections_form_is_refused_by_the_build_and_the_wheel(course):
    path = course / "pyproject.toml"
    text = path.read_text(encoding="utf-8")
    as_a_section = re.sub(r"^release = .*$", 'release = "v2026.07.20"', text, count=1, flags=re.M)
    path.write_text(as_a_section, encoding="utf-8")
    with pytest.raises(PluginError, match=r"vYYYY\.MM\.DD\.N"):
        install_boxes(course)
    with pytest.raises(ValueError, match=r"'v2026\.07\.20' is not a release"):
        wheel_metadata(course)


def test_the_release_form():
    assert release.is_release(release.EXAMPLE)
    assert release.is_release("v2026.07.20.12")
    for value in ("v2026.07.20", "2026.07.20.1", "v2026.07.20.0", "v2026.02.30.1", "v2026.7.20.1"):
        assert not release.is_release(value), value
    assert release.is_release(release.release(ROOT))  # this course's own
