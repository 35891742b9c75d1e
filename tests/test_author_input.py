"""What an author types is checked where it is read: a section's front matter (YAML that parses,
a version in the course's form) and ``make new-section``'s ID, title and module name. Each
wrong input fails in one line naming the file or the variable, the field and the form expected;
each right one, however it is spelled, is written so that the site builds. All in throw-away
copies of the project."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from build_support import section
from testkit.author import author_env
from testkit.build import copy_env, copy_project, mkdocs_build
from testkit.hooks import load_hook
from testkit.project import ROOT, SECTION_PAGE, free_section_id

# What make reads besides what a build reads; .venv and node_modules are the checkout's.
MAKE_FILES = ["Makefile", "ARCHITECTURE.md", "package.json", "package-lock.json"]


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of what a build and ``make new-section`` read, with the checkout's .venv."""
    copy = copy_project(tmp_path / "project")
    for name in MAKE_FILES:
        shutil.copy2(ROOT / name, copy / name)
    (copy / "tests").mkdir()
    (copy / ".venv").symlink_to(ROOT / ".venv")
    return copy


FREE = free_section_id()  # P5-9.2 where no author added it, else the next free one
SLUG = section.slug(FREE)


def with_front_matter_line(project: Path, old: str, new: str) -> Path:
    page = project / "docs" / f"{SECTION_PAGE}.md"
    text = page.read_text(encoding="utf-8")
    assert old in text
    page.write_text(text.replace(old, new, 1), encoding="utf-8")
    return page


def build(project: Path) -> subprocess.CompletedProcess[str]:
    return mkdocs_build(project / "mkdocs.yml", project / "site", env=copy_env(project))


def failed_in_one_line(result: subprocess.CompletedProcess[str], pattern: str) -> str:
    """The one line, matching ``pattern``, that a failed command said why in: no traceback."""
    said = result.stdout + result.stderr
    assert result.returncode != 0, said[-3000:]
    assert "Traceback" not in said, said[-3000:]
    lines = [line for line in said.splitlines() if re.search(pattern, line)]
    assert len(lines) == 1, said[-3000:]
    return lines[0]


def front_matter_problem(text: str, where: str) -> str | None:
    return load_hook("section_header").front_matter_problem(text, where)


def new_section(project: Path, *variables: str) -> subprocess.CompletedProcess[str]:
    """``make new-section VARIABLES`` in the copy, as an author types it (the shared .venv and
    node_modules never set up from the copy)."""
    command = ["make", "-o", ".venv/.synced", "-o", "node_modules/.installed", "new-section"]
    return subprocess.run(
        [*command, *variables], cwd=project, env=author_env(), capture_output=True, text=True
    )


def lint_passes(project: Path, module: str) -> None:
    """The Python written for ``module`` passes ``make lint`` as it is."""
    python = [f"examples/{module}.py", "examples/__init__.py", f"tests/test_{module}.py"]
    ruff = str(ROOT / ".venv" / "bin" / "ruff")
    for command in ([ruff, "check", *python], [ruff, "format", "--check", *python]):
        result = subprocess.run(command, cwd=project, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr


def files_of(project: Path) -> set[str]:
    """The project's files, but its virtual environment's and Python's bytecode caches (written
    by any run of the project's Python where PYTHONDONTWRITEBYTECODE is unset, as on most
    machines)."""
    skipped = {".venv", "__pycache__"}
    return {
        p.relative_to(project).as_posix() for p in project.rglob("*") if not skipped & set(p.parts)
    }


def test_a_version_not_in_the_courses_form_fails_the_build_in_one_line(project):
    with_front_matter_line(project, "version: v2026.07.20", "version: banana")
    line = failed_in_one_line(build(project), "banana")
    assert line.startswith(f"docs/{SECTION_PAGE}.md:3: version 'banana'"), line
    assert "vYYYY.MM.DD" in line


@pytest.mark.parametrize("version", ["banana", "2026.07.20", "v2026.7.20", "v2026.02.30"])
def test_the_course_model_refuses_a_version_not_in_its_form(project, version):
    """What hatch_build.py (the wheel's summary) and make publish read, outside any build."""
    with_front_matter_line(project, "version: v2026.07.20", f"version: {version}")
    with pytest.raises(ValueError, match=rf"^docs/{SECTION_PAGE}\.md:3: version '{version}'"):
        section.sections(project)


def test_front_matter_that_is_not_yaml_fails_the_build_naming_its_line_and_field(project):
    with_front_matter_line(project, "description: ", "description: [unclosed ")
    line = failed_in_one_line(build(project), "not YAML")
    assert line.startswith(f"docs/{SECTION_PAGE}.md:4: field 'description' is not YAML"), line
    assert "'name: value'" in line


def test_front_matter_is_checked_as_mkdocs_reads_it():
    assert front_matter_problem("---\ntitle: Fine\nhide:\n  - toc\n---\n# A", "a.md") is None
    assert front_matter_problem("# No front matter\n---\n", "a.md") is None
    said = front_matter_problem("---\na: b\ndescription: x: y\n---\n", "docs/a.md")
    assert said.startswith("docs/a.md:3: field 'description' is not YAML")
    said = front_matter_problem("---\n- a list\n---\n", "docs/a.md")
    assert said.startswith("docs/a.md:2: front matter is not fields")


def test_make_new_section_refuses_an_id_that_is_not_ascii(project):
    wide = "\N{FULLWIDTH DIGIT TWO}"  # as a Japanese input method types 2
    before = files_of(project)
    result = new_section(project, f"ID=P5-9.{wide}", "TITLE=Batches")
    line = failed_in_one_line(result, "^new-section: ")
    assert line.startswith(f"new-section: ID='P5-9.{wide}': '{wide}' (U+FF12) is not ASCII"), line
    assert files_of(project) == before


def test_make_new_section_takes_a_title_with_a_quote_as_typed(project):
    result = new_section(project, f"ID={FREE}", 'TITLE=Batch"es')
    assert result.returncode == 0, result.stdout + result.stderr
    page = (project / "docs" / f"{SLUG}-batch-es.md").read_text(encoding="utf-8")
    assert f'\n# {FREE} Batch"es\n' in page
    assert front_matter_problem(page, "page") is None
    nav = (project / "mkdocs.yml").read_text(encoding="utf-8").splitlines()
    entry = next(line for line in nav if line.endswith(f": {SLUG}-batch-es.md"))
    assert yaml.safe_load(entry) == [{f'{FREE} Batch"es': f"{SLUG}-batch-es.md"}]
    lint_passes(project, "batch_es")
    built = build(project)
    assert built.returncode == 0, built.stderr[-3000:]
    title = (project / "site" / f"{SLUG}-batch-es" / "index.html").read_text(encoding="utf-8")
    assert f"{FREE} Batch&quot;es" in title or f'{FREE} Batch"es' in title


def test_make_new_section_spells_the_module_of_an_accented_title_in_ascii(project):
    result = new_section(project, f"ID={FREE}", "TITLE=Tensörs Und Größen")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (project / "examples" / "tensors_und_grossen.py").is_file()
    assert (project / "docs" / f"{SLUG}-tensors-und-grossen.md").is_file()
    lint_passes(project, "tensors_und_grossen")


def test_make_new_section_takes_the_module_name_where_the_title_has_no_ascii_spelling(project):
    before = files_of(project)
    refused = new_section(project, f"ID={FREE}", "TITLE=Τανυστές")
    line = failed_in_one_line(refused, "^new-section: ")
    assert "MODULE=" in line, line
    assert files_of(project) == before
    result = new_section(project, f"ID={FREE}", "TITLE=Τανυστές", "MODULE=tensors")
    assert result.returncode == 0, result.stdout + result.stderr
    lint_passes(project, "tensors")
    assert f"\n# {FREE} Τανυστές\n" in (project / "docs" / f"{SLUG}-tensors.md").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ([f"ID={FREE}", "TITLE=Batch|es"], "TITLE='Batch|es': '|' is not allowed"),
        ([f"ID={FREE}", "TITLE=Import"], "TITLE='Import': its module name 'import'"),
        ([f"ID={FREE}", "TITLE=Batches", "MODULE=Batches"], "MODULE='Batches': a module name"),
    ],
)
def test_make_new_section_names_the_variable_and_its_form(project, variables, named):
    before = files_of(project)
    line = failed_in_one_line(new_section(project, *variables), "^new-section: ")
    assert line.startswith(f"new-section: {named}"), line
    assert files_of(project) == before
