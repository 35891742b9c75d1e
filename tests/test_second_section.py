"""A second section, added as an author adds one, in a throw-away copy of the project: the course
model holds for any number of sections (build_support/section.py, ARCHITECTURE: The course
model), and nothing but the new-section command and the author's own text was needed.

In the copy: ``make new-section``'s command adds a section (P5-9.2, or the first ID of chapter
P5-9 that the project's pages have not taken, and a title whose module is free: the test holds
in a project of any number of sections); the author writes a paragraph, a block
and a notebook (with its nav line), sets the section's version, and the release moves on (each
of the three versions its own, so that a page naming another's is seen); ``repo_url`` names a
GitHub repository, for the Colab links. One fresh build, then one cached build (as ``make
check-cache`` compares them). The real site's pages are never touched.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from build_support import new_section, section
from build_support.caching.compare import differences
from build_support.publishing.release import release
from testkit.author import make_dry_run
from testkit.build import copy_env, copy_project, mkdocs_build
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page, served_wheel

SECTIONS = section.sections()  # the project's own, all kept in the copy


def free_id() -> str:
    """The ID the test adds: the first of P5-9.2, P5-9.3, ... that no page has taken."""
    taken = {one.id for one in SECTIONS}
    return next(f"P5-9.{n}" for n in itertools.count(2) if f"P5-9.{n}" not in taken)


def free_title() -> str:
    """The title the test adds: Batches And Tensors, or Batches And Tensors 2, 3, ... where the
    project holds its module or its test (both named after it) already."""

    def free(title: str) -> bool:
        module = new_section.module_name(title, None)
        written = (ROOT / "examples" / f"{module}.py", ROOT / "tests" / f"test_{module}.py")
        return not any(path.exists() for path in written)

    titles = ("Batches And Tensors" + (f" {n}" if n > 1 else "") for n in itertools.count(1))
    return next(title for title in titles if free(title))


def free_day(taken: set[str]) -> str:
    """A day of August 2026 (``v2026.08.01``) that is none of ``taken``: each version seen on a
    page is one section's only."""
    return next(v for d in range(1, 32) if (v := f"v2026.08.{d:02d}") not in taken)


NEW_ID, NEW_TITLE = free_id(), free_title()
NEW_SLUG, NEW_MODULE = section.slug(NEW_ID), new_section.module_name(NEW_TITLE, None)
NEW_PAGE, NEW_FUNCTION = f"{NEW_SLUG}-{new_section.title_slug(NEW_TITLE)}", f"{NEW_MODULE}_rows"
NEW_VERSION = free_day({one.version for one in SECTIONS})
# The release that adds the section: a version of its own, whose day is no section's version.
RELEASE = free_day({one.version for one in SECTIONS} | {NEW_VERSION}) + ".1"
BLOCK_ID = f"{NEW_SLUG}-batch-shape"
NOTEBOOK = f"notebooks/{NEW_SLUG}-batch-shapes"
REPOSITORY = "course-owner/course-repo"
COLAB = "https://colab.research.google.com/github/"
BLOCK = f"""
A batch is rows of the same length, stacked: its shape is rows by features.

```python exec="on" source="above" result="text" id="{BLOCK_ID}"
import numpy as np

from examples import {NEW_FUNCTION}

print("shape:", np.asarray({NEW_FUNCTION}(3)).shape)
```
"""
NOTEBOOK_TEXT = f"""# %% [markdown]
# # {NEW_ID} batch shapes

# %%
print("rows x features:", (3, 3))
"""


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``command`` run in ``cwd``, with ``env`` added to this environment; it must pass."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | env
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr[-4000:]}"
    return result


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The copy, with the new section added and written; built fresh into ``fresh/``, then with the
    fresh build's cache into ``cached/``."""
    project = copy_project(tmp_path_factory.mktemp("course") / "project")
    for name in ("ARCHITECTURE.md", ".gitignore"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "testkit", project / "testkit", ignore=shutil.ignore_patterns("__*"))
    (project / "tests").mkdir()
    for name in ("test_public_arguments.py", "test_docs_maps.py"):
        shutil.copy(ROOT / "tests" / name, project / "tests" / name)

    # What `make new-section ID=P5-9.2 TITLE="Batches And Tensors"` runs (the free ID and title).
    run([sys.executable, "-m", "build_support.new_section", NEW_ID, NEW_TITLE], project)
    page_file = project / "docs" / f"{NEW_PAGE}.md"
    text = page_file.read_text(encoding="utf-8")
    written = re.sub(r"^version: .*$", f"version: {NEW_VERSION}", text, count=1, flags=re.M)
    # the author's version, paragraph and block
    page_file.write_text(written + BLOCK, encoding="utf-8")
    (project / "docs" / f"{NOTEBOOK}.py").write_text(NOTEBOOK_TEXT, encoding="utf-8")
    config = project / "mkdocs.yml"
    notebook_nav = f'  - "{NEW_ID} Batch Shapes (notebook)": {NOTEBOOK}.py\n'
    replace(config, f": {NEW_PAGE}.md\n", f": {NEW_PAGE}.md\n{notebook_nav}")
    replace(config, "\nsite_url:", f"\nrepo_url: https://github.com/{REPOSITORY}\nsite_url:")
    replace(project / "pyproject.toml", f'release = "{release(ROOT)}"', f'release = "{RELEASE}"')

    env = copy_env(project)
    for name, fresh in (("fresh", True), ("cached", False)):
        result = mkdocs_build(config, project / name, fresh=fresh, env=env)
        assert result.returncode == 0, result.stderr[-5000:]
    return project


def test_make_new_section_runs_the_command(tmp_path):
    """The command, given ID, TITLE and MODULE through the environment: never pasted into the
    shell's command line (tests/test_author_input.py runs it with a quote in the title)."""
    dry = make_dry_run("new-section", "ID=P5-9.2", "TITLE=Batches And Tensors")
    assert 'python -m build_support.new_section "$ID" "$TITLE" "$MODULE"' in dry


def test_the_model_reads_both_sections_from_their_pages(course):
    found = {one.id: one for one in section.sections(course)}
    assert found[NEW_ID] == section.Section(
        NEW_ID, NEW_VERSION, f"{NEW_ID} {NEW_TITLE}", f"{NEW_PAGE}.md"
    )
    assert section.release(course) == RELEASE
    assert section.section_of(f"{NOTEBOOK}.py", course).id == NEW_ID


def test_each_page_shows_its_own_sections_version_and_no_others(course):
    """Header, install box and the versions the page names: its section's; the install line
    installs the release's wheel, which holds every section at its own version."""
    site = course / "fresh"
    wheel = served_wheel(site).name
    sections = section.sections(course)
    for one in sections:
        html = page(site, one.name)
        header = html.select_one("p.section-meta").get_text()
        assert header == f"Section ID: {one.id} Version: {one.version}"
        box = html.select_one("div.install-box")
        assert f"({one.version})" in box.get_text()
        assert all(f"/{RELEASE}/{wheel}#sha256=" in c.get_text() for c in box.select("pre code"))
        for other in sections:
            if other != one:
                assert other.version not in html.get_text(), (one.id, other.version)
                # The install lines name the course's wheel, never another section's.
                assert other.slug not in box.get_text(), (one.id, other.slug)


def test_each_notebooks_colab_link_is_in_its_own_sections_box_and_page(course):
    site = course / "fresh"

    def colab_links(soup) -> list[str]:
        return [a["href"] for a in soup.select("a[href]") if a["href"].startswith(COLAB)]

    own = {SECTION_PAGE: "notebooks/p5-9-1-practice-in-jax", NEW_PAGE: NOTEBOOK}
    for section_page, notebook in own.items():
        name = notebook.rsplit("/", 1)[1]
        wanted = f"{COLAB}{REPOSITORY}/blob/gh-pages/{RELEASE}/{notebook}/{name}.ipynb"
        assert colab_links(page(site, section_page).select_one("div.install-box")) == [wanted]
        assert colab_links(page(site, section_page)) == [wanted]
        assert colab_links(page(site, notebook)) == [wanted]
        assert (site / notebook / f"{name}.ipynb").is_file()


def test_the_course_map_and_home_page_list_the_new_section(course):
    site = course / "fresh"
    entry = page(site, "course-map").find(id=NEW_SLUG)
    assert entry.get_text().startswith(f"{NEW_ID} {NEW_TITLE}")
    said = entry.find_next("p")
    assert said.get_text().startswith(f"Published: read {NEW_ID}.")
    assert said.a["href"] == f"../{NEW_PAGE}/"
    # Every entry of the map that no page publishes (P5-14.4, ...): still not published.
    text = (course / "docs" / "course-map.md").read_text(encoding="utf-8")
    listed = re.findall(r"\{\{ course\.status (\S+) \}\}", text)
    published = {one.id for one in section.sections(course)}
    assert NEW_ID in listed and published <= set(listed), (listed, published)
    for unpublished in sorted(set(listed) - published):
        said = page(site, "course-map").find(id=section.slug(unpublished)).find_next("p")
        assert said.get_text().startswith("Not yet published."), unpublished
    assert page(site, "").select_one(f'article a[href="{NEW_PAGE}/"]') is not None
    nav = [a.get_text(strip=True) for a in page(site, NEW_PAGE).select(".md-nav a")]
    assert f"{NEW_ID} {NEW_TITLE}" in nav


def test_verify_from_the_served_wheel_compares_the_new_block_at_its_sections_version(
    course, tmp_path
):
    site = course / "fresh"
    with zipfile.ZipFile(served_wheel(site)) as archive:
        archive.extractall(tmp_path / "wheel")
        expected = json.loads(archive.read("examples/expected-outputs.json"))
    # The project's sections, each at its version, and the new one: no other, none left out.
    every = {one.id: one.version for one in SECTIONS} | {NEW_ID: NEW_VERSION}
    assert expected["sections"] == every
    reader = {"PYTHONPATH": str(tmp_path / "wheel")}  # the wheel's examples, not the checkout's
    verify = [sys.executable, "-m", "examples", "verify", BLOCK_ID]
    printed = run(verify, tmp_path, **reader).stdout
    assert f"Running the 1 block of {NEW_ID} {NEW_VERSION} shown with its output" in printed
    assert f"{BLOCK_ID}: same" in printed, printed
    version = run([sys.executable, "-m", "examples", "--version"], tmp_path, **reader).stdout
    named = ", ".join(f"{one} {at}" for one, at in sorted(every.items()))
    assert version.startswith(f"{named} · "), version
    assert f"/{RELEASE}/" in version


def test_the_cached_build_shows_what_the_fresh_build_shows(course):
    assert differences(course / "cached", course / "fresh") == []
    report = page(course / "cached", "build-report").select("table.build-report tbody tr")
    outcomes = {row("td")[1].get_text(): row("td")[2].get_text() for row in report}
    assert outcomes[BLOCK_ID] == "reused", outcomes
    assert outcomes[f"{NOTEBOOK}.py"] == "reused", outcomes


def test_the_authors_copy_passes_the_tests_that_find_new_exports_and_modules(course):
    """The new export's wrong calls found by the walk over ``examples.__all__``, the new module
    on ARCHITECTURE's map before ``git add``, and the stub's own test."""
    run(["git", "init", "--quiet"], course)
    tests = [
        "tests/test_public_arguments.py",
        f"tests/test_{NEW_MODULE}.py",
        "tests/test_docs_maps.py::test_architecture_names_every_module_of_the_build_the_hooks_"
        "and_the_package",
    ]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", *tests]
    result = run(command, course, **copy_env(course))
    assert f"test_a_wrong_argument_is_refused_in_the_courses_own_words[{NEW_MODULE}_rows-0]" in (
        result.stdout
    )
    assert " passed" in result.stdout and "failed" not in result.stdout
