"""The snippet files of docs/snippets/p5-9-1-gpus-and-parallel-processing/ and their tabs.

Each file is included into the page of the same name and executed there; the practice's two
listings, NumPy and JAX, print the manuscript's 9 lines on their own and on the page.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from bs4 import BeautifulSoup

from examples import backend_report
from testkit.project import GOLDEN, ROOT, SECTION_PAGE
from testkit.site import page

SNIPPETS = ROOT / "docs" / "snippets" / SECTION_PAGE
PAGE_SOURCE = ROOT / "docs" / f"{SECTION_PAGE}.md"
PRACTICE = {"practice_numpy.py": "NumPy (as in the text)", "practice_jax.py": "JAX (jit + vmap)"}


def included_snippets() -> set[str]:
    return set(re.findall(r'--8<-- "([^"]+)"', PAGE_SOURCE.read_text()))


def test_every_snippet_file_is_included_into_its_page():
    files = {f"docs/snippets/{SECTION_PAGE}/{path.name}" for path in SNIPPETS.glob("*.py")}
    assert files, "the page's snippet folder is empty"
    assert files <= included_snippets()


@pytest.mark.parametrize("name", sorted(PRACTICE))
def test_practice_snippet_prints_the_manuscript_output(name, tmp_path):
    run = subprocess.run(
        [sys.executable, str(SNIPPETS / name)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert run.stdout == (GOLDEN / "practice_output.txt").read_text()


def tabs(site) -> dict[str, BeautifulSoup]:
    # the practice's tabs: the first set that holds executed blocks (the install box's come first)
    tab_set = page(site).select_one("div.tabbed-set:has(div.exec-block)")
    labels = [label.get_text() for label in tab_set.select("div.tabbed-labels > label")]
    return dict(zip(labels, tab_set.select("div.tabbed-content > div.tabbed-block"), strict=True))


def test_the_practice_shows_numpy_and_jax_side_by_side(built_site, expected_practice_output):
    shown = tabs(built_site)
    assert list(shown) == list(PRACTICE.values())
    for tab in shown.values():
        block = tab.select_one("div.exec-block")
        output = block.select("div.highlight")[-1].get_text()
        assert output == expected_practice_output  # the 9 lines, and nothing else


def test_each_output_carries_where_it_ran_beside_it(built_site):
    shown = tabs(built_site)
    numpy_label = shown["NumPy (as in the text)"].select_one("p.run-label").get_text()
    jax_label = shown["JAX (jit + vmap)"].select_one("p.run-label").get_text()
    assert numpy_label.startswith("computed on cpu · numpy ")
    assert jax_label == backend_report().label()


def test_the_numpy_listing_keeps_its_line_numbers_and_the_note_on_line_28(built_site):
    numpy_tab = tabs(built_site)["NumPy (as in the text)"]
    assert numpy_tab.select_one("td.linenos") is not None
    line_28 = (SNIPPETS / "practice_numpy.py").read_text().splitlines()[27]
    assert "round(float(score), 3)" in line_28
    assert "Line 28 reads" in numpy_tab.select_one("div.admonition.note").get_text()
