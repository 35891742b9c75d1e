"""A second section, added as an author adds one, in a throw-away copy of the project: the course
model holds for any number of sections (build_support/section.py, ARCHITECTURE: The course
model), and nothing but the new-section command and the author's own text was needed.

In the copy: ``make new-section``'s command adds P5-9.2; the author writes a paragraph, a block
and a notebook (with its nav line), sets the section's version, and the release moves on (each
of the three versions its own, so that a page naming another's is seen); ``repo_url`` names a
GitHub repository, for the Colab links. One fresh build, then one cached build (as ``make
check-cache`` compares them). The real site's pages are never touched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from build_support import section
from build_support.caching.compare import differences
from build_support.publishing.release import release
from testkit.author import make_dry_run
from testkit.build import copy_env, copy_project, mkdocs_build
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page, served_wheel

NEW_ID, NEW_TITLE, NEW_VERSION = "P5-9.2", "Batches And Tensors", "v2026.08.01"
NEW_PAGE, NEW_MODULE = "p5-9-2-batches-and-tensors", "batches_and_tensors"
RELEASE = "v2026.08.15.1"  # the release that adds P5-9.2: a version of its own
NOTEBOOK = "notebooks/p5-9-2-batch-shapes"
REPOSITORY = "course-owner/course-repo"
COLAB = "https://colab.research.google.com/github/"
BLOCK = """
A batch is rows of the same length, stacked: its shape is rows by features.

```python exec="on" source="above" result="text" id="p5-9-2-batch-shape"
import numpy as np

from examples import batches_and_tensors_rows

print("shape:", np.asarray(batches_and_tensors_rows(3)).shape)
```
"""
NOTEBOOK_TEXT = """# %% [markdown]
# # P5-9.2 batch shapes

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
    """The copy, with P5-9.2 added and written; built fresh into ``fresh/``, then with the
    fresh build's cache into ``cached/``."""
    project = copy_project(tmp_path_factory.mktemp("course") / "project")
    for name in ("ARCHITECTURE.md", ".gitignore"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "testkit", project / "testkit", ignore=shutil.ignore_patterns("__*"))
    (project / "tests").mkdir()
    for name in ("test_public_arguments.py", "test_docs_maps.py"):
        shutil.copy(ROOT / "tests" / name, project / "tests" / name)

    # What `make new-section ID=P5-9.2 TITLE="Batches And Tensors"` runs.
    run([sys.executable, "-m", "build_support.new_section", NEW_ID, NEW_TITLE], project)
    page_file = project / "docs" / f"{NEW_PAGE}.md"
    text = page_file.read_text(encoding="utf-8")
    written = re.sub(r"^version: .*$", f"version: {NEW_VERSION}", text, count=1, flags=re.M)
    # the author's version, paragraph and block
    page_file.write_text(written + BLOCK, encoding="utf-8")
    (project / "docs" / f"{NOTEBOOK}.py").write_text(NOTEBOOK_TEXT, encoding="utf-8")
    config = project / "mkdocs.yml"
    notebook_nav = f'  - "P5-9.2 Batch Shapes (notebook)": {NOTEBOOK}.py\n'
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
    entry = page(site, "course-map").find(id="p5-9-2")
    assert entry.get_text().startswith(f"{NEW_ID} {NEW_TITLE}")
    said = entry.find_next("p")
    assert said.get_text().startswith(f"Published: read {NEW_ID}.")
    assert said.a["href"] == f"../{NEW_PAGE}/"
    assert (
        page(site, "course-map")
        .find(id="p5-14-4")
        .find_next("p")
        .get_text()
        .startswith("Not yet published.")
    )
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
    assert expected["sections"] == {"P5-9.1": "v2026.07.20", NEW_ID: NEW_VERSION}
    reader = {"PYTHONPATH": str(tmp_path / "wheel")}  # the wheel's examples, not the checkout's
    verify = [sys.executable, "-m", "examples", "verify", "p5-9-2-batch-shape"]
    printed = run(verify, tmp_path, **reader).stdout
    assert f"Running the 1 block of {NEW_ID} {NEW_VERSION} shown with its output" in printed
    assert "p5-9-2-batch-shape: same" in printed, printed
    version = run([sys.executable, "-m", "examples", "--version"], tmp_path, **reader).stdout
    assert version.startswith(f"P5-9.1 v2026.07.20, {NEW_ID} {NEW_VERSION} · ")
    assert f"/{RELEASE}/" in version


def test_the_cached_build_shows_what_the_fresh_build_shows(course):
    assert differences(course / "cached", course / "fresh") == []
    report = page(course / "cached", "build-report").select("table.build-report tbody tr")
    outcomes = {row("td")[1].get_text(): row("td")[2].get_text() for row in report}
    assert outcomes["p5-9-2-batch-shape"] == "reused", outcomes
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
