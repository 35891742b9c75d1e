"""A course's pages in the navigation (issue 50): every page carries the whole nav, so Material's
templates cost O(N) a page and O(N^2) a build, unless a page's render is reused
(hooks/page_render_cache.py).

For each page count, ``benchmarks/course_scale.py``'s synthetic pages (8 executed blocks each)
are generated into a throw-away copy of the project and listed in its nav, in a section of
their own; the copy is built cold once (its outputs stored), then, in turns, --repeats times:

- ours, nothing changed (every output and every page's render reused);
- ours without the page cache (the same copy and store, ``hooks/page_render_cache.py`` left
  out of a second mkdocs.yml beside the first): what the page cache saves;
- a stock Material site of the same pages in the same nav (no hooks, no executed blocks:
  ``exec="on"`` fences are plain code), the reference;
- ours and stock again after one page's prose is edited (a build each: the edited page's render
  runs, every other page's is reused).

With ``--store-work``, one more nothing-changed build of ours is watched for the project's own
bookkeeping (issue 50): how many files of the store it wrote (a new file, or one replaced: a
new inode; by cache), and how long the store's prune then takes (``FileStore.prune``, as
``hooks/cache_store.py`` calls it at a build's end) and how many files the store holds.

Prints medians and ratios; the issue's targets at 400 pages (nothing changed at most 0.25x
stock; at 40 pages at most 1.0x) are printed as met or missed, never asserted.

    python benchmarks/nav_scale.py [--pages 40,120] [--with-400] [--repeats 3] [--store-work]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from testkit.build import copy_env, mkdocs_build

_HOOK_LINE = re.compile(r"^  - hooks/page_render_cache\.py.*\n", re.MULTILINE)
_RENDERS = re.compile(r"Page renders: (\d+) of (\d+) reused")
TARGETS = {400: 0.25, 40: 1.0}  # nothing changed / stock Material (issue 50)
STOCK_CONFIG = """\
site_name: Stock Material
strict: true
theme:
  name: material
  font: false
markdown_extensions:
  - pymdownx.superfences
plugins:
  - search
nav:
  - Home: index.md
{nav}"""


def _course_scale():
    """benchmarks/course_scale.py, whose pages these are (a script, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "course_scale", Path(__file__).with_name("course_scale.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nav_lines(pages: int) -> str:
    lines = ["  - Course pages:\n"]
    lines += [f"    - course/page-{number:02d}.md\n" for number in range(1, pages + 1)]
    return "".join(lines)


def with_pages_in_nav(project: Path, pages: int) -> None:
    """The copy's mkdocs.yml with the generated pages in its nav, and a second one without the
    page cache's hook (``mkdocs-no-page-cache.yml``)."""
    config = project / "mkdocs.yml"
    text = config.read_text(encoding="utf-8").rstrip("\n") + "\n" + nav_lines(pages)
    config.write_text(text, encoding="utf-8")
    without, found = _HOOK_LINE.subn("", text)
    if found != 1:
        raise SystemExit("benchmarks/nav_scale.py: hooks/page_render_cache.py not in mkdocs.yml")
    (project / "mkdocs-no-page-cache.yml").write_text(without, encoding="utf-8")


def stock_site(where: Path, course_scale, pages: int) -> Path:
    docs = where / "docs"
    (docs / "course").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\nA stock Material site.\n", encoding="utf-8")
    for number in range(1, pages + 1):
        text = course_scale.page(number).replace('exec="on" ', "")
        (docs / "course" / f"page-{number:02d}.md").write_text(text, encoding="utf-8")
    (where / "mkdocs.yml").write_text(STOCK_CONFIG.format(nav=nav_lines(pages)), encoding="utf-8")
    return where


def build(config: Path, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Seconds of one strict build (with ``env``'s store, FRESH unset), and what it logged."""
    started = time.perf_counter()
    site = config.parent / f"site-{config.stem}"
    result = mkdocs_build(config, site, fresh=False, cache_dir=config.parent / ".cache", env=env)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"strict build of {config} failed:\n{result.stderr[-4000:]}")
    return seconds, result.stderr


def edit_prose(page: Path, turn: int) -> None:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"\n\nEdited prose \d+\.\n", "\n", text)
    page.write_text(text.replace("\n", f"\n\nEdited prose {turn}.\n", 1), encoding="utf-8")


def _inodes(store: Path) -> dict[Path, int]:
    found = {}
    for path in store.rglob("*"):
        try:
            if path.is_file():
                found[path] = path.stat().st_ino
        except OSError:
            continue
    return found


def store_work(config: Path, env: dict[str, str]) -> dict:
    """One nothing-changed build: the store's files it wrote, by cache; then one prune."""
    from build_support.caching.store import LIMIT_BYTES, FileStore

    store = config.parent / ".cache"
    before = _inodes(store)
    build(config, env)
    after = _inodes(store)
    written: dict[str, int] = {}
    for path, inode in after.items():
        if before.get(path) != inode:
            cache = path.relative_to(store).parts[0]
            written[cache] = written.get(cache, 0) + 1
    started = time.perf_counter()
    pruned = FileStore(store).prune(LIMIT_BYTES)
    return {
        "written": written,
        "prune_s": time.perf_counter() - started,
        "pruned": pruned,
        "files": len(after),
    }


def measure(where: Path, course_scale, pages: int, repeats: int, watch: bool = False) -> dict:
    ours = course_scale.make_copy(where / "ours", pages, executed=True)
    with_pages_in_nav(ours, pages)
    stock = stock_site(where / "stock", course_scale, pages)
    env = copy_env(ours)
    configs = {
        "ours": ours / "mkdocs.yml",
        "no page cache": ours / "mkdocs-no-page-cache.yml",
        "stock": stock / "mkdocs.yml",
    }
    cold, log = build(configs["ours"], env)
    print(f"# {pages} pages: cold build {cold:.1f} s", flush=True)
    build(configs["stock"])  # its search plugin's and the theme's first run
    work = store_work(configs["ours"], env) if watch else None
    times: dict[str, list[float]] = {name: [] for name in [*configs, "ours, edit", "stock, edit"]}
    reused = []
    for turn in range(1, repeats + 1):
        for name, config in configs.items():
            seconds, log = build(config, None if name == "stock" else env)
            times[name].append(seconds)
            if name == "ours":
                reused.append(_RENDERS.search(log))
        for name, project in (("ours, edit", ours), ("stock, edit", stock)):
            edit_prose(project / "docs" / "course" / "page-01.md", turn)
            seconds, log = build(configs[name.split(",")[0]], None if project == stock else env)
            times[name].append(seconds)
            if project == ours:
                reused.append(_RENDERS.search(log))
    counts = [f"{found[1]}/{found[2]}" if found else "?" for found in reused]
    return {"times": times, "reused": counts, "store work": work}


def report(pages: int, found: dict, repeats: int) -> None:
    times = found["times"]
    median = {name: statistics.median(runs) for name, runs in times.items()}
    print(f"## {pages} pages in the nav (medians of {repeats}; runs in brackets)")
    for name, runs in times.items():
        print(f"{name + ':':<22} {median[name]:6.2f} s   ({', '.join(f'{t:.2f}' for t in runs)})")
    ratio = median["ours"] / median["stock"]
    target = TARGETS.get(pages)
    verdict = (
        ""
        if target is None
        else f"; target <= {target}x: " + ("met" if ratio <= target else "MISSED")
    )
    print(f"nothing changed / stock Material:        {ratio:.2f}x{verdict}")
    without = median["no page cache"] / median["stock"]
    print(f"without the page cache / stock Material: {without:.2f}x")
    print(
        f"prose edit, a build / stock's:            "
        f"{median['ours, edit'] / median['stock, edit']:.2f}x"
    )
    print(f"page renders reused (ours; then after each edit): {', '.join(found['reused'])}")
    work = found.get("store work")
    if work is not None:
        written = ", ".join(f"{cache} {count}" for cache, count in sorted(work["written"].items()))
        print(
            f"store files written by a nothing-changed build: {sum(work['written'].values())}"
            f" ({written or 'none'})"
        )
        print(
            f"the store's prune after it: {work['prune_s'] * 1000:.1f} ms, "
            f"{work['pruned']} pruned, {work['files']} files in the store"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="40,120", help="page counts, comma-separated")
    parser.add_argument("--with-400", action="store_true", help="also 400 pages (cold: minutes)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--store-work",
        action="store_true",
        help="also the store files a nothing-changed build writes and the prune's time",
    )
    args = parser.parse_args()
    counts = [int(count) for count in args.pages.split(",") if count]
    if args.with_400 and 400 not in counts:
        counts.append(400)
    course_scale = _course_scale()
    load_before = os.getloadavg()[0]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for pages in counts:
            results[pages] = measure(
                Path(tmp, f"n{pages}"), course_scale, pages, args.repeats, args.store_work
            )
            shutil.rmtree(Path(tmp, f"n{pages}"), ignore_errors=True)
    print(
        f"# benchmarks/nav_scale.py; Python {sys.version.split()[0]}; {os.cpu_count()} cores; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    for pages, found in results.items():
        report(pages, found, args.repeats)


if __name__ == "__main__":
    main()
