"""Two built sites, file by file and executed block by block: what ``make check-cache`` reports.

A timing (``expected_to_change`` in ``execution-record.json``) differs between any two runs,
even two fresh ones: its numbers, and the sentences and chart axes drawn from them (which of
two methods won, how many ticks a log axis gets). So a timing block is compared only for what
is not a timing: its wrapper (id, source and result options), the label of where it ran, the
machine named by its "Measured on" caption, the shape of each table (the header with numbers
masked, and the row count) and how many charts it draws. Everything else is compared exactly,
but for what a ``mask`` leaves out: ``make check-pythons`` and ``make check-upstream`` compare
builds whose Python, jax and numpy differ by design, so they mask the versions the captions name
(``without_versions``). The two sides are named as the caller names them (``sides``).

A notebook's page is compared cell by cell (``div.notebook-cell`` or mkdocs-jupyter's
``div.jp-Cell``, by its ``cell-N`` id), so a difference names its cell. An output its author
marked as differing run to run (``Varying``: a fence's ``varying="yes"``, a cell's
``varying-output`` tag, read from the project's sources) is masked: a marked block is left
out, a marked cell compared without its outputs, and the wheel's expected output of a marked
block left out. Two things differ between any two runs whoever wrote them, so they are masked
with no mark (a tutorial is compared as its author wrote it): a cell that times its code
(``%timeit``, ``%%time``: its outputs, as a marked cell's), and an object's address in its
default repr (``<object object at 0x7f...>``, on any page).
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bs4 import BeautifulSoup

from ..publishing.record import RECORD_FILE

EXCLUDED = {
    "build-report/index.html": "says what ran and what was reused: differs by design",
    RECORD_FILE: "holds the timings' digests",
    "search/search_index.json": "the pages' text, timings included: the pages are compared",
    "assets/javascripts/try-it/figures.json": "the measured page's timings: the page is compared",
    "sitemap.xml.gz": "gzip stamps the date of the build (sitemap.xml is compared)",
}
_NUMBER = re.compile(r"\d[\d,.]*(?:e[-+]?\d+)?")
_VERSION_NAMED = re.compile(r"""\b(Python|jax|jaxlib|numpy)("?:? "?| )\d+(?:\.\d+)+""")
# ``sha256=<hex>``, and as a highlighted install line shows it (``sha256<span class="o">=</span>``).
_DIGEST = re.compile(r"\bsha256(?:<[^>]+>)*=(?:<[^>]+>)*[\w-]+(?:,\d+)?")
_MACHINE = re.compile(r"(?:on this build|on the machine that built it then): (.*?)(?:\. Reused|$)")


SIDES = ("cached", "fresh")
"""How the two sides are named in what is reported, by default (``make check-cache``)."""

# A notebook's cells on its page: ``notebooks/jupyter_book.py``'s, and mkdocs-jupyter's (a
# jupytext ``.py``), whose ids are ``cell-id=`` and the cell's id (``kernels.read_jupytext``).
_CELLS = 'div.notebook-cell[id^="cell-"], div.jp-Cell[id^="cell-id=cell-"]'
_CELL_OUTPUTS = ".notebook-output, .jp-Cell-outputWrapper"
_EXPECTED_OUTPUTS = "expected-outputs.json"  # the wheel's: each shown block's output
_PLACE = re.compile(
    r"^(.*?): (?:first difference at line \d+|line \d+ only in the|only in the|the archives)"
)


@dataclass
class Varying:
    """The outputs the project's authors marked as differing from run to run, by built page
    (``read``): compared but for those outputs."""

    blocks: dict[str, set[str]] = field(default_factory=dict)  # page's HTML -> block ids
    cells: dict[str, set[int]] = field(default_factory=dict)  # page's HTML -> cell numbers
    expected: set[tuple[str, str]] = field(default_factory=set)  # (page's source, block id)
    timing_cells: int = 0  # of ``cells``: those masked for their ``%timeit``, unmarked

    def count(self) -> int:
        return sum(map(len, self.blocks.values())) + sum(map(len, self.cells.values()))

    def said(self) -> str:
        """How many were masked, in words."""
        blocks, cells = sum(map(len, self.blocks.values())), sum(map(len, self.cells.values()))
        said = (
            f"{blocks + cells} output(s) marked varying masked ({blocks} block(s), {cells} cell(s)"
        )
        timed = f", {self.timing_cells} of them timing their code" if self.timing_cells else ""
        return f"{said}{timed})"

    @classmethod
    def read(cls, docs: Path) -> Varying:
        """The marks in ``docs`` (the project's ``docs_dir``): each Markdown page's fences
        with ``varying="yes"`` (read as the build reads them, ``fences.on_page``) and each
        notebook's cells tagged ``varying-output`` (numbered as the build numbers them), and
        each notebook's cells that time their code (``kernels.TIMING_CELL``), marked or not."""
        from ..execution import fences
        from ..notebooks import formats as notebook_formats
        from ..notebooks import kernels

        found = cls()
        for path in sorted(docs.rglob("*")):
            if path.suffix not in (".md", ".py", ".ipynb") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if fences.VARYING_OPTION not in text and "%time" not in text:  # the tag: the word
                continue
            src_uri = path.relative_to(docs).as_posix()
            page = built_page(src_uri)
            if path.suffix == ".md" and notebook_formats.myst_front_matter(path) is None:
                for fence in fences.on_page(text, None, src_uri):
                    if fences.is_varying(fence.options):
                        found.blocks.setdefault(page, set()).add(fences.block_id(fence.options))
                        found.expected.add((src_uri, fences.block_id(fence.options)))
                continue
            try:
                notebook = kernels.read_notebook(path)
            except Exception:  # not a notebook (a snippet): nothing marked
                continue
            for number, cell in enumerate(notebook.cells, start=1):
                if kernels.VARYING_TAG in (cell.get("metadata", {}).get("tags") or []):
                    found.cells.setdefault(page, set()).add(number)
                elif cell.cell_type == "code" and kernels.TIMING_CELL.search(cell.source):
                    found.cells.setdefault(page, set()).add(number)
                    found.timing_cells += 1
        return found


def built_page(src_uri: str) -> str:
    """Where MkDocs writes the page of ``src_uri`` (``use_directory_urls``, its default and
    the project's): ``a/b.md`` -> ``a/b/index.html``, ``a/index.md`` -> ``a/index.html``."""
    path = PurePosixPath(src_uri)
    folder = path.parent if path.stem in ("index", "README") else path.parent / path.stem
    return (folder / "index.html").as_posix().removeprefix("./")


def place(difference: str) -> str:
    """The file, block or cell a line of ``differences`` names (``x/index.html, block b``)."""
    found = _PLACE.match(difference)
    return found.group(1) if found else difference.split("\n", 1)[0]


def without_versions(text: str) -> str:
    """``text`` with each version a caption names masked ("Python 3.13.0", "jax 0.12.0.1",
    "numpy 2.5.5" become "Python <version>", ..., and so in the wheel's ``"Python": "3.13.0"``),
    the only difference builds on two Pythons, or with two locks, are meant to have; and with the
    digests that follow from them masked: the wheel records the versions, so its members'
    ``sha256=`` in its RECORD (and an install line's ``#sha256=``) change with them. The wheel's
    members are compared one by one, so no difference hides behind a digest."""
    return _DIGEST.sub("sha256=<digest>", _VERSION_NAMED.sub(r"\1\2<version>", text))


def _as_is(text: str) -> str:
    return text


def _without_addresses(text: str) -> str:
    """``text`` with each object's address masked (``at 0x<address>``): it differs between any
    two runs, and says nothing of what the code computed."""
    from ..notebooks.kernels import ADDRESS

    return ADDRESS.sub("at 0x<address>", text)


def differences(
    cached: Path,
    fresh: Path,
    sides: tuple[str, str] = SIDES,
    mask: Callable[[str], str] = _as_is,
    varying: Varying | None = None,
) -> list[str]:
    """One line (or a few) per difference: the file, the block, the first differing line, each
    text compared as ``mask`` leaves it (default: as it is); the sides named by ``sides``; the
    outputs ``varying`` names masked."""
    names = {p.relative_to(side).as_posix() for side in (cached, fresh) for p in _files(side)}
    timings = _timings(cached) | _timings(fresh)
    found = []
    for name in sorted(names - set(EXCLUDED)):
        a, b = cached / name, fresh / name
        if not a.is_file() or not b.is_file():
            found.append(f"{name}: only in the {sides[b.is_file()]} build")
        elif a.read_bytes() != b.read_bytes():
            if name.endswith(".html"):
                texts = [_without_addresses(mask(x.read_text(encoding="utf-8"))) for x in (a, b)]
                found += page_differences(name, *texts, timings, sides, varying)
            elif name.endswith(".whl"):  # the wheel carries the book's expected outputs
                found += _archive_differences(name, a, b, sides, mask, varying)
            elif (lines := [_lines(path, mask) for path in (a, b)])[0] != lines[1]:
                found.append(_first_line(name, *lines, sides))
    return found


def _archive_differences(
    name: str,
    cached: Path,
    fresh: Path,
    sides: tuple[str, str],
    mask: Callable[[str], str],
    varying: Varying | None = None,
) -> list[str]:
    """A zip archive member by member: the member that differs, and its first differing line."""
    with zipfile.ZipFile(cached) as a, zipfile.ZipFile(fresh) as b:
        members = sorted(set(a.namelist()) | set(b.namelist()))
        found = []
        for member in members:
            if member not in a.namelist() or member not in b.namelist():
                found.append(
                    f"{name} ({member}): only in the {sides[member in b.namelist()]} build"
                )
                continue
            texts = [mask(zip_.read(member).decode("utf-8", "replace")) for zip_ in (a, b)]
            if varying and varying.expected and member.endswith(_EXPECTED_OUTPUTS):
                texts = [_without_varying(text, varying) for text in texts]
            if texts[0] != texts[1]:
                lines = [text.splitlines() for text in texts]
                found.append(_first_line(f"{name} ({member})", *lines, sides))
    if found or mask is not _as_is or (varying and varying.expected):  # masks leave some out
        return found
    return [f"{name}: the archives differ, but none of their members does"]


def _without_varying(text: str, varying: Varying) -> str:
    """The wheel's expected outputs with each marked block's output left out."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    for block in data.get("blocks", []) if isinstance(data, dict) else []:
        if (block.get("page"), block.get("block_id")) in varying.expected and "output" in block:
            block["output"] = "(varying: masked)"
    return json.dumps(data, indent=1, sort_keys=True)


def _files(site: Path) -> list[Path]:
    return [path for path in site.rglob("*") if path.is_file()]


def _lines(path: Path, mask: Callable[[str], str] = _as_is) -> list[str]:
    return mask(path.read_bytes().decode("utf-8", "replace")).splitlines()


def _timings(site: Path) -> set[str]:
    record = site / RECORD_FILE
    if not record.is_file():
        return set()
    outputs = json.loads(record.read_text(encoding="utf-8")).get("outputs", [])
    return {output["block_id"] for output in outputs if output.get("expected_to_change")}


def page_differences(
    name: str,
    cached: str,
    fresh: str,
    timings: set[str],
    sides: tuple[str, str] = SIDES,
    varying: Varying | None = None,
) -> list[str]:
    """One built page's differences, block by block, then cell by cell: ``timings`` (block
    ids) compared only for what is not a timing; what ``varying`` marks on it masked."""
    pages = [BeautifulSoup(text, "html.parser") for text in (cached, fresh)]
    blocks = [page.select("div.exec-block[data-exec-id]") for page in pages]
    ids = [[block["data-exec-id"] for block in side] for side in blocks]
    if ids[0] != ids[1]:
        return [_first_line(f"{name}: the executed blocks", *ids, sides)]
    marked = varying.blocks.get(name, set()) if varying else set()
    found = []
    for block_id, a, b in zip(ids[0], *blocks, strict=True):
        if block_id in marked:
            continue  # varying="yes": differs run to run, by its author's word
        timed = block_id in timings
        left, right = (_timing_shape(x) if timed else str(x).splitlines() for x in (a, b))
        if left != right:
            what = "timing block" if timed else "block"
            found.append(_first_line(f"{name}, {what} {block_id}", left, right, sides))
    for side in blocks:  # the rest of the page: each block replaced by its id
        for block in side:
            block.replace_with(f"[block {block['data-exec-id']}]")
    found += _cell_differences(
        name, pages, varying.cells.get(name, set()) if varying else set(), sides
    )
    rest = [str(page).splitlines() for page in pages]
    if rest[0] != rest[1]:
        found.append(_first_line(f"{name}, outside the executed blocks", *rest, sides))
    return found


def _cell_differences(
    name: str, pages: list, marked: set[int], sides: tuple[str, str]
) -> list[str]:
    """A notebook's page cell by cell (none on another page), each cell then replaced by its
    number for the comparison of the rest; a ``marked`` cell's outputs masked."""
    cells = [page.select(_CELLS) for page in pages]
    numbers = [[int(cell["id"].rsplit("cell-", 1)[1]) for cell in side] for side in cells]
    if numbers[0] != numbers[1]:
        return [_first_line(f"{name}: the notebook's cells", *numbers, sides)]
    found = []
    for number, a, b in zip(numbers[0], *cells, strict=True):
        if number in marked:  # tagged varying-output: its code compared, not its outputs
            for output in [*a.select(_CELL_OUTPUTS), *b.select(_CELL_OUTPUTS)]:
                output.replace_with("[varying output]")
        left, right = str(a).splitlines(), str(b).splitlines()
        if left != right:
            found.append(_first_line(f"{name}, cell {number}", left, right, sides))
    for number, a, b in zip(numbers[0], *cells, strict=True):
        a.replace_with(f"[cell {number}]")
        b.replace_with(f"[cell {number}]")
    return found


def _timing_shape(block) -> list[str]:
    """What a timing block shows that is not a timing, as lines."""
    shape = [f"wrapper {block.get('data-source')!r} {block.get('data-result')!r}"]
    shape += [f"ran on: {label.get_text()}" for label in block.select("p.run-label")]
    for caption in block.select("p.measured-label"):
        machine = _MACHINE.search(caption.get_text())
        shape.append(f"measured on: {machine.group(1) if machine else caption.get_text()}")
    for table in block.select("table"):
        header = " | ".join(cell.get_text(" ", strip=True) for cell in table.select("th"))
        shape.append(f"table: {_NUMBER.sub('#', header)}; {len(table.select('tbody tr'))} rows")
    shape.append(f"charts: {len(block.select('svg'))}")
    return shape


def _first_line(where: str, cached: list[str], fresh: list[str], sides=SIDES) -> str:
    width = max(map(len, sides)) + 1
    for number, (a, b) in enumerate(zip(cached, fresh, strict=False), start=1):
        if a != b:
            first, second = (f"{side}:".ljust(width) for side in sides)
            return f"{where}: first difference at line {number}\n  {first} {a}\n  {second} {b}"
    number = min(len(cached), len(fresh)) + 1
    longer, side = (cached, sides[0]) if len(cached) > len(fresh) else (fresh, sides[1])
    return f"{where}: line {number} only in the {side} build: {longer[number - 1]}"
