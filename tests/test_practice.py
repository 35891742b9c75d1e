"""Golden test: the practice prints the manuscript's 9 output lines, character for character."""

from __future__ import annotations

import subprocess
import sys

from examples import practice_lines

from .helpers import ROOT, SECTION_PAGE


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
