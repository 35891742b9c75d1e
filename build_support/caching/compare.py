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
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

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


def differences(
    cached: Path, fresh: Path, sides: tuple[str, str] = SIDES, mask: Callable[[str], str] = _as_is
) -> list[str]:
    """One line (or a few) per difference: the file, the block, the first differing line, each
    text compared as ``mask`` leaves it (default: as it is); the sides named by ``sides``."""
    names = {p.relative_to(side).as_posix() for side in (cached, fresh) for p in _files(side)}
    timings = _timings(cached) | _timings(fresh)
    found = []
    for name in sorted(names - set(EXCLUDED)):
        a, b = cached / name, fresh / name
        if not a.is_file() or not b.is_file():
            found.append(f"{name}: only in the {sides[b.is_file()]} build")
        elif a.read_bytes() != b.read_bytes():
            if name.endswith(".html"):
                texts = (mask(a.read_text(encoding="utf-8")), mask(b.read_text(encoding="utf-8")))
                found += page_differences(name, *texts, timings, sides)
            elif name.endswith(".whl"):  # the wheel carries the book's expected outputs
                found += _archive_differences(name, a, b, sides, mask)
            elif (lines := [_lines(path, mask) for path in (a, b)])[0] != lines[1]:
                found.append(_first_line(name, *lines, sides))
    return found


def _archive_differences(
    name: str, cached: Path, fresh: Path, sides: tuple[str, str], mask: Callable[[str], str]
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
            if texts[0] != texts[1]:
                lines = [text.splitlines() for text in texts]
                found.append(_first_line(f"{name} ({member})", *lines, sides))
    if found or mask is not _as_is:  # a mask may leave two members' differences out
        return found
    return [f"{name}: the archives differ, but none of their members does"]


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
    name: str, cached: str, fresh: str, timings: set[str], sides: tuple[str, str] = SIDES
) -> list[str]:
    """One built page's differences, block by block: ``timings`` (block ids) compared only for
    what is not a timing."""
    pages = [BeautifulSoup(text, "html.parser") for text in (cached, fresh)]
    blocks = [page.select("div.exec-block[data-exec-id]") for page in pages]
    ids = [[block["data-exec-id"] for block in side] for side in blocks]
    if ids[0] != ids[1]:
        return [_first_line(f"{name}: the executed blocks", *ids, sides)]
    found = []
    for block_id, a, b in zip(ids[0], *blocks, strict=True):
        timed = block_id in timings
        left, right = (_timing_shape(x) if timed else str(x).splitlines() for x in (a, b))
        if left != right:
            what = "timing block" if timed else "block"
            found.append(_first_line(f"{name}, {what} {block_id}", left, right, sides))
    for side in blocks:  # the rest of the page: each block replaced by its id
        for block in side:
            block.replace_with(f"[block {block['data-exec-id']}]")
    rest = [str(page).splitlines() for page in pages]
    if rest[0] != rest[1]:
        found.append(_first_line(f"{name}, outside the executed blocks", *rest, sides))
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
