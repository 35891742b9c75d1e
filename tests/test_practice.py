"""Golden test: the practice prints the manuscript's 9 output lines, character for character."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

from build_support import section
from examples import DISTRIBUTION, practice_lines
from testkit.project import ROOT, SECTION_PAGE


def run_python(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    return result.stdout


def test_golden_has_the_manuscripts_nine_lines(expected_practice_output):
    assert len(expected_practice_output.splitlines()) == 9


def test_python_dash_m_examples(expected_practice_output):
    assert run_python("-m", "examples") == expected_practice_output


def test_practice_lines(expected_practice_output):
    assert "\n".join(practice_lines()) + "\n" == expected_practice_output


def test_numpy_listing_as_shown_on_the_page(expected_practice_output):
    listing = ROOT / "docs" / "snippets" / SECTION_PAGE / "practice_numpy.py"
    assert run_python(str(listing)) == expected_practice_output


def test_python_dash_m_examples_names_section_and_version_and_refuses_unknown_commands():
    version = subprocess.run(
        [sys.executable, "-m", "examples", "--version"], cwd=ROOT, capture_output=True, text=True
    )
    every = ", ".join(f"{one.id} {one.version}" for one in section.sections())
    assert version.stdout.startswith(f"{every} · "), (
        version.stdout
    )  # every section at its own version
    try:  # installed (the .venv's editable install); the GPU check may run it from a checkout
        installed = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        installed = "(not installed: version unknown)"
    assert installed in version.stdout
    practice = subprocess.run(
        [sys.executable, "-m", "examples"], cwd=ROOT, capture_output=True, text=True
    )
    assert practice.stderr == version.stdout  # beside the 9 lines, never among them
    wrong = subprocess.run(
        [sys.executable, "-m", "examples", "turnarond"], cwd=ROOT, capture_output=True, text=True
    )
    assert wrong.returncode == 2
    assert "python -m examples turnaround" in wrong.stderr


def test_python_dash_m_examples_turnaround_prints_the_table_here_beside_the_gpus():
    from examples import about, latest_recorded

    printed = run_python("-m", "examples", "turnaround")
    assert printed.startswith(f"{about()}\n")  # every section and version, then the table
    assert "\nMeasured on this machine: computed on " in printed
    assert printed.count("| rows | features | Python loop |") == 2  # here, and the recording
    assert f"\n{latest_recorded().caption()}\n" in printed
    assert "on this machine: " in printed.split(latest_recorded().caption())[1]
