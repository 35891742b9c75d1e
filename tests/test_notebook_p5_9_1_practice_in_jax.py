"""The executed notebook docs/notebooks/p5-9-1-practice-in-jax.py and its download.

The page offers the .ipynb with a relative link; the downloaded notebook runs top to bottom
in a fresh kernel, each cell's code is what the page's copy button gives, and each cell prints
what the page shows under it. A raising cell fails the strict build and the log names it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup
from nbclient import NotebookClient

from testkit.build import mkdocs_build
from testkit.project import ROOT
from testkit.site import page

NOTEBOOK = "p5-9-1-practice-in-jax"
SOURCE = ROOT / "docs" / "notebooks" / f"{NOTEBOOK}.py"


def notebook_page(site: Path) -> tuple[Path, BeautifulSoup]:
    html_file = site / "notebooks" / NOTEBOOK / "index.html"
    return html_file, BeautifulSoup(html_file.read_text(), "html.parser")


def downloaded_notebook(site: Path, tmp_path: Path) -> Path:
    """Follow the page's .ipynb link, relative to the page, and copy the file to tmp_path."""
    html_file, soup = notebook_page(site)
    links = [a["href"] for a in soup.select("p.notebook-download a[download]")]
    ipynb = [href for href in links if href.endswith(".ipynb")]
    assert ipynb == [f"{NOTEBOOK}.ipynb"], links
    target = tmp_path / ipynb[0]
    shutil.copy(html_file.parent / ipynb[0], target)  # raises if the link points nowhere
    return target


def test_every_download_link_resolves_relative_to_the_page(built_site):
    html_file, soup = notebook_page(built_site)
    links = [a["href"] for a in soup.select("p.notebook-download a[download]")]
    assert {Path(href).suffix for href in links} == {".ipynb", ".py"}
    for href in links:
        assert "/" not in href and ":" not in href, f"not a relative link: {href}"
        assert (html_file.parent / href).is_file(), href


def test_the_section_page_links_to_the_notebook(built_site):
    hrefs = [a.get("href") for a in page(built_site)("a")]
    assert f"../notebooks/{NOTEBOOK}/" in hrefs


def test_downloaded_notebook_runs_top_to_bottom_and_prints_what_the_page_shows(
    built_site, tmp_path
):
    path = downloaded_notebook(built_site, tmp_path)
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()  # raises CellExecutionError on the first failing cell

    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    _, soup = notebook_page(built_site)
    shown_cells = soup.select("div.jp-CodeCell[id]")  # each cell sits in a same-class wrapper
    assert len(shown_cells) == len(code_cells) >= 5
    for cell, shown in zip(code_cells, shown_cells, strict=True):
        assert shown.select_one("div.clipboard-copy-txt").get_text() == cell.source
        printed = "".join(
            out.get("text", "") for out in cell.outputs if out.output_type == "stream"
        )
        assert all(out.output_type == "stream" for out in cell.outputs), cell.outputs
        displayed = "".join(pre.get_text() for pre in shown.select("div.jp-OutputArea-output pre"))
        assert printed == displayed, cell.source


def test_notebook_walks_loop_vmap_jit_and_the_count_table(built_site):
    _, soup = notebook_page(built_site)
    headings = [h.get_text().rstrip("¶") for h in soup.select("h2")]
    assert headings[:5] == [
        "1. One row at a time: a Python loop",
        "2. The whole batch at once: vmap",
        "3. Compiled: jit(vmap)",
        "4. How the multiply count grows",
        "5. Many weight settings: a loop, then vmap over the settings",
    ]
    text = soup.get_text()
    assert "in_axes=(0, None)" in text
    assert "in_axes=(None, 0)" in text
    # The loop over settings and the vmap over them print the same scores, and say so.
    assert "setting 0: loop = [0.2, 1.19, 0.35, 1.3], vmap = [0.2, 1.19, 0.35, 1.3]" in text
    assert "same scores = True" in text and "score_settings, same = True" in text
    assert "estimated scalar multiplies when feature count = 6 = [24, 48, 96, 192]" in text


def test_a_raising_cell_fails_the_strict_build_and_names_the_notebook(docs_copy):
    notebook = docs_copy / "docs" / "notebooks" / f"{NOTEBOOK}.py"
    notebook.write_text(
        notebook.read_text() + '\n# %%\nraise RuntimeError("this notebook cell is broken")\n'
    )
    result = mkdocs_build(docs_copy / "mkdocs.yml", docs_copy / "site")
    assert result.returncode != 0
    assert f"notebooks/{NOTEBOOK}.py" in result.stderr
    assert "this notebook cell is broken" in result.stderr


def test_only_notebooks_become_notebook_pages(built_site):
    # The snippet files are .py too; a wide `include` would execute them as notebooks.
    for snippet in (ROOT / "docs" / "snippets").rglob("*.py"):
        relative = snippet.relative_to(ROOT / "docs").with_suffix("")
        assert not (built_site / relative / "index.html").exists(), snippet
