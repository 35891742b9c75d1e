"""Outputs that differ from run to run (build_support/caching/check_cache.py, compare.py).

An author marks such an output (a fence's ``varying="yes"``, a notebook cell's
``varying-output`` tag): ``make check-cache`` compares the rest and masks it, saying how many.
Where an unmarked output differs, a second fresh build tells it apart from a stale entry: the
check says "this output differs between fresh runs (mark it varying: ...)", naming page and
block or cell, instead of blaming the cache.
"""

from __future__ import annotations

from pathlib import Path

from build_support.caching.check_cache import Checked, main, run_check
from build_support.caching.compare import Varying, page_differences, place
from testkit.small_site import hook, site_config

RANDOM = "import os\n\nprint(os.urandom(8).hex())"
PAGE = f"""\
# Varying

```python exec="on" id="steady" result="text"
print(sum(range(10)))
```

```python exec="on" id="address" result="text" varying="yes"
{RANDOM}
```
"""
MYST = f"""\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A MyST notebook

```{{code-cell}} ipython3
print("steady", 6 * 7)
```

```{{code-cell}} ipython3
:tags: [varying-output]

{RANDOM}
```
"""
JUPYTEXT = f"""\
# %% [markdown]
# # A jupytext notebook

# %%
print("steady", 6 * 7)

# %% tags=["varying-output"]
{RANDOM}
"""
FILES = {
    "index.md": "# Home\n",
    "varying.md": PAGE,
    "notebooks/myst.md": MYST,
    "notebooks/jupytext.py": JUPYTEXT,
}


def small_project(root: Path) -> Path:
    for name, text in FILES.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text, encoding="utf-8")
    config = site_config("varying", hooks=(hook("execution"),))
    nav = "".join(f"  - {name}\n" for name in FILES)
    (root / "mkdocs.yml").write_text(config.replace("hooks:\n", f"nav:\n{nav}hooks:\n", 1))
    return root


def unmark(root: Path) -> None:
    for name, mark in (
        ("varying.md", ' varying="yes"'),
        ("notebooks/myst.md", ":tags: [varying-output]\n"),
        ("notebooks/jupytext.py", ' tags=["varying-output"]'),
    ):
        path = root / "docs" / name
        text = path.read_text(encoding="utf-8")
        assert mark in text
        path.write_text(text.replace(mark, ""), encoding="utf-8")


def test_marked_outputs_are_masked_and_unmarked_ones_said_to_differ_between_fresh_runs(
    tmp_path, capsys, monkeypatch
):
    project = small_project(tmp_path / "project")
    marks = Varying.read(project / "docs")
    assert marks.blocks == {"varying/index.html": {"address"}}
    assert marks.cells == {"notebooks/myst/index.html": {3}, "notebooks/jupytext/index.html": {3}}

    checked = run_check(project, tmp_path / "check")
    assert checked.found == [], "\n".join(checked.found)
    assert checked.between_fresh is None  # nothing differed: no second fresh build
    assert not (tmp_path / "check" / "fresh-again").exists()
    assert checked.varying.said().startswith("3 output(s) marked varying masked")
    pages = [tmp_path / "check" / side / "varying/index.html" for side in ("cached", "fresh")]
    assert pages[0].read_text() != pages[1].read_text()  # they did differ: masked, not equal

    unmark(project)
    code = main(["--project", str(project), "--out", str(tmp_path / "check")])
    said = capsys.readouterr().out
    assert code == 1
    assert "0 output(s) marked varying masked" in said
    for where in (
        "varying/index.html, block address",
        "notebooks/myst/index.html, cell 3",
        "notebooks/jupytext/index.html, cell 3",
    ):
        assert f"{where}: this output differs between fresh runs (mark it varying: " in said
    assert 'add varying="yes" to its fence' in said
    assert "tag the notebook's cell varying-output" in said
    assert "a stale entry" not in said  # nothing is blamed on the cache
    assert "block steady" not in said and ", cell 2" not in said


def page(blocks: str, cells: str = "") -> str:
    return f"<html><body>{blocks}{cells}<p>rest</p></body></html>"


def block(block_id: str, output: str) -> str:
    return f'<div class="exec-block" data-exec-id="{block_id}"><pre>{output}</pre></div>'


def test_a_marked_block_or_cell_is_masked_and_nothing_else_is():
    marks = Varying(blocks={"p/index.html": {"b"}}, cells={"p/index.html": {2}})
    cell = (
        '<div class="notebook-cell" id="cell-{n}"><pre>code {n}</pre>'
        '<div class="notebook-output"><pre>{out}</pre></div></div>'
    )
    jupyter = (
        '<div class="jp-Cell jp-CodeCell" id="cell-id=cell-{n}"><pre>code {n}</pre>'
        '<div class="jp-Cell-outputWrapper"><pre>{out}</pre></div></div>'
    )
    for shape in (cell, jupyter):
        left = page(block("a", "1") + block("b", "0x1"), shape.format(n=2, out="0x1"))
        right = page(block("a", "1") + block("b", "0x2"), shape.format(n=2, out="0x2"))
        assert page_differences("p/index.html", left, right, set(), varying=marks) == []
        unmarked = page_differences("p/index.html", left, right, set())
        assert [place(line) for line in unmarked] == [
            "p/index.html, block b",
            "p/index.html, cell 2",
        ]
        # A marked cell's code is still compared; another block is.
        code = page(block("a", "1"), shape.format(n=2, out="0x1").replace("code 2", "code 9"))
        found = page_differences(
            "p/index.html",
            page(block("a", "1"), shape.format(n=2, out="0")),
            code,
            set(),
            varying=marks,
        )
        assert [place(line) for line in found] == ["p/index.html, cell 2"]
        other = page_differences(
            "p/index.html", left, left.replace(">1<", ">2<"), set(), varying=marks
        )
        assert [place(line) for line in other] == ["p/index.html, block a"]


def test_a_difference_only_the_cache_shows_is_still_blamed_on_it():
    found = [
        "p/index.html, block b: first difference at line 2\n  cached: 1\n  fresh:  2",
        "q/index.html, cell 4: first difference at line 1\n  cached: x\n  fresh:  y",
    ]
    checked = Checked(found, None, between_fresh={"q/index.html, cell 4"})
    varying, stale = checked.diagnosed()
    assert stale == found[:1]
    assert varying == [
        "q/index.html, cell 4: this output differs between fresh runs (mark it varying: tag the "
        "notebook's cell varying-output)"
    ]


def test_check_pythons_and_check_upstream_mask_what_check_cache_masks(tmp_path):
    """The checks across Pythons and across locks read the same marks from ``docs/`` and mask
    the same outputs (an address differs between any two runs, whatever the Python or lock)."""
    from build_support.check_pythons import compared
    from build_support.check_upstream import report

    project = small_project(tmp_path / "project")
    marks = Varying.read(project / "docs")
    cell = (
        '<div class="notebook-cell" id="cell-3"><pre>code</pre>'
        '<div class="notebook-output"><pre>{}</pre></div></div>'
    )
    sites = []
    for side, output in (("a", "0x7f01"), ("b", "0x7f02")):
        for name, html in (
            ("varying/index.html", page(block("steady", "45") + block("address", output))),
            ("notebooks/myst/index.html", page("", cell.format(output))),
        ):
            (tmp_path / side / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / side / name).write_text(html, encoding="utf-8")
        sites.append(tmp_path / side)
    names = ("Python 3.11", "Python 3.13")
    assert compared(*sites, names, marks) == []
    assert report(*sites, marks) == []
    unmarked = [place(line) for line in compared(*sites, names, Varying())]
    assert unmarked == ["notebooks/myst/index.html, cell 3", "varying/index.html, block address"]
    assert [place(line) for line in report(*sites)] == unmarked
    # What is not marked is still compared.
    steady = tmp_path / "b" / "varying/index.html"
    steady.write_text(steady.read_text().replace(">45<", ">46<"), encoding="utf-8")
    assert [place(line) for line in compared(*sites, names, marks)] == [
        "varying/index.html, block steady"
    ]


def test_timings_and_addresses_are_masked_with_no_mark(tmp_path):
    """A tutorial is compared as its author wrote it: a cell that times its code (``%timeit``)
    and an object's address in its repr differ between any two runs, marked or not."""
    from build_support.caching.compare import differences

    notebook = MYST.replace(":tags: [varying-output]\n\n", "").replace(
        RANDOM, "%timeit sum(range(10))"
    )
    docs = tmp_path / "docs" / "notebooks"
    docs.mkdir(parents=True)
    (docs / "timed.md").write_text(notebook, encoding="utf-8")
    marks = Varying.read(tmp_path / "docs")
    assert marks.cells == {"notebooks/timed/index.html": {3}}
    assert marks.said() == (
        "1 output(s) marked varying masked (0 block(s), 1 cell(s), 1 of them timing their code)"
    )
    cell = (
        '<div class="notebook-cell" id="cell-{n}"><pre>code {n}</pre>'
        '<div class="notebook-output"><pre>{out}</pre></div></div>'
    )
    sites = []
    sides = (("a", "1.2 µs", "0x7f3ca5523780"), ("b", "9.9 µs", "0x7f1a217af"))
    for side, timing, address in sides:
        shown = f"&lt;object object at {address}&gt;"
        cells = cell.format(n=2, out=shown) + cell.format(n=3, out=timing)
        for name in ("notebooks/timed/index.html", "page/index.html"):
            path = tmp_path / side / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page(block("b", shown), cells), encoding="utf-8")
        sites.append(tmp_path / side)
    found = [place(line) for line in differences(*sites, varying=marks)]
    assert found == ["page/index.html, cell 3"]  # the timing unmasked where no cell times
    other = tmp_path / "b" / "page/index.html"
    other.write_text(other.read_text().replace("object object", "object thing"))
    assert "page/index.html, block b" in [
        place(line) for line in differences(*sites, varying=marks)
    ]  # what the repr says is still compared, only its address is not


def test_a_publish_names_a_notebook_changed_only_where_a_steady_output_changed():
    """The record a publish compares (``outputs_digest``) leaves out what ``make check-cache``
    masks: a timing cell's outputs, a tagged cell's, an object's address."""
    import nbformat

    from build_support.notebooks.page import outputs_digest

    def notebook(steady: str, timing: str, address: str, tagged: str):
        cells = []
        for source, text, tags in (
            ("print(6 * 7)", steady, []),
            ("%timeit sum(range(10))", timing, []),
            ("object()", f"<object object at {address}>", []),
            ("print(random())", tagged, ["varying-output"]),
        ):
            cell = nbformat.v4.new_code_cell(source, metadata={"tags": tags})
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
            cells.append(cell)
        made = nbformat.v4.new_notebook()
        made.cells = cells
        return made

    first = outputs_digest(notebook("42", "1.2 µs", "0x7f3ca5523780", "0.1"))
    assert outputs_digest(notebook("42", "9.9 µs", "0x7f1a217af740", "0.7")) == first
    assert outputs_digest(notebook("43", "1.2 µs", "0x7f3ca5523780", "0.1")) != first
