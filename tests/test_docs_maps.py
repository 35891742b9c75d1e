"""The maps a newcomer reads stay true: the README names every folder of the repository, and
ARCHITECTURE.md every module of the build, the hooks and the package, and nothing that is gone."""

from __future__ import annotations

import re
import subprocess

from testkit.project import ROOT

MAPPED = ("build_support", "hooks", "examples")  # ARCHITECTURE.md: a line per module


def tracked_files() -> list[str]:
    """The project's files, as git sees them: tracked, and new ones not yet added (a module an
    author just wrote is on the map before ``git add``); ignored ones left out."""
    command = ["git", "ls-files", "--cached", "--others", "--exclude-standard"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def folders_in_table(text: str, heading: str) -> set[str]:
    """The folders named in the first column of the table under ``heading``."""
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([^`/]+)/`", section, re.MULTILINE))


def test_the_readme_names_every_folder_of_the_repository_once():
    folders = {name.split("/")[0] for name in tracked_files() if "/" in name}
    named = folders_in_table((ROOT / "README.md").read_text(), "Where things are")
    assert named == folders


def test_architecture_names_every_module_of_the_build_the_hooks_and_the_package():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    modules = [
        name
        for name in tracked_files()
        if name.startswith(tuple(f"{folder}/" for folder in MAPPED))
        and name.endswith((".py", ".js"))
        and not name.endswith("__init__.py")
    ]
    missing = [name for name in modules if f"`{name.rsplit('/', 1)[1]}`" not in text]
    assert missing == []


def test_every_module_architecture_names_exists():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    existing = {name.rsplit("/", 1)[-1] for name in tracked_files()}
    named = set(re.findall(r"`([\w.]+\.(?:py|js|sh))`", text))
    assert named - existing == set()
