"""A course's pages in the navigation (issue 50): every page carries its navigation, so Material's
templates cost O(N) a page and O(N^2) a build, unless a page's render is reused
(hooks/page_render_cache.py) and the navigation is pruned to the page's own section
(``navigation.prune`` in mkdocs.yml).

For each page count, ``benchmarks/course_scale.py``'s synthetic pages (8 executed blocks each)
are generated into a throw-away copy of the project and listed in its nav as a course lists
them: in sections of ``--section-pages`` pages (default 8). The copy is built cold once (its
outputs stored), then, in turns, --repeats times:

- ours, nothing changed (every output and every page's render reused);
- ours without the page cache (the same copy and store, ``hooks/page_render_cache.py`` left
  out of a second mkdocs.yml beside the first): what the page cache saves;
- a stock Material site of the same pages in the same nav (no hooks, no executed blocks:
  ``exec="on"`` fences are plain code), the reference; and the same stock site with
  ``navigation.prune`` (what that one switch does for any Material site);
- ours and stock again after one page's prose is edited (a build each);
- ours after an edit to ``examples/counting.py`` that two of each page's 8 blocks reach
  (``course_scale.edit``): its time beside the re-run outputs' own ("executed in", the log's).

Printed besides: each cold build (ours and stock), the peak memory of the largest process of a
cold and of a nothing-changed build (``ru_maxrss`` of a wrapper's children), the built site's
size and one page's HTML. ``--serve N``: N prose edits under ``mkdocs serve``, ours and stock's
in turns, each timed until the served page shows the edit (``serve_latency.Site``).

With ``--store-work``, one more nothing-changed build of ours is watched for the project's own
bookkeeping (issue 50): how many files of the store it wrote (a new file, or one replaced: a
new inode; by cache), and how long the store's prune then takes (``FileStore.prune``, as
``hooks/cache_store.py`` calls it at a build's end) and how many files the store holds.

Prints medians and ratios and the issue's targets as met or missed, never asserted.

    python benchmarks/nav_scale.py [--pages 40,120] [--with-400] [--repeats 3] [--serve 3]
                                   [--section-pages 8] [--store-work]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from build_support.build_command import BUILD_ENV, CACHE_DIR_ENV, FRESH_ENV, build_command
from testkit.build import copy_env, mkdocs_build

_HOOK_LINE = re.compile(r"^  - hooks/page_render_cache\.py.*\n", re.MULTILINE)
_RENDERS = re.compile(r"Page renders: (\d+) of (\d+) reused")
_EXECUTED = re.compile(
    r"Execution report: (\d+) blocks and \d+ notebooks?: (\d+) ran, .*?; executed in ([\d.]+) s"
)
# nothing changed / stock Material, and a prose edit under serve / stock's (issue 50)
TARGETS = {400: 0.25, 40: 1.0}
SERVE_TARGETS = {400: 0.15, 40: 1.0}
MODULE_EDIT_SLACK_S = 5.0  # a module edit: at most the re-run outputs' own time + 5 s
STOCK_CONFIG = """\
site_name: Stock Material
strict: true
theme:
  name: material
  font: false
{features}markdown_extensions:
  - pymdownx.superfences
plugins:
  - search
nav:
  - Home: index.md
{nav}"""
PRUNE = "  features:\n    - navigation.prune\n"
# A wrapper that runs a build and says the peak memory of its largest process (kilobytes on
# Linux, bytes on macOS: ru_maxrss's unit).
_PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:])\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(f'peak-rss {peak * (1 if sys.platform == \"darwin\" else 1024)}', file=sys.stderr)\n"
    "sys.exit(done.returncode)\n"
)


def _course_scale():
    """benchmarks/course_scale.py, whose pages these are (a script, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "course_scale", Path(__file__).with_name("course_scale.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nav_lines(pages: int, section_pages: int) -> str:
    """The pages in sections of ``section_pages``, as a course's sections list theirs."""
    lines = []
    for number in range(1, pages + 1):
        if (number - 1) % section_pages == 0:
            lines.append(f"  - Section {(number - 1) // section_pages + 1}:\n")
        lines.append(f"    - course/page-{number:02d}.md\n")
    return "".join(lines)


def with_pages_in_nav(project: Path, pages: int, section_pages: int) -> None:
    """The copy's mkdocs.yml with the generated pages in its nav, and a second one without the
    page cache's hook (``mkdocs-no-page-cache.yml``)."""
    config = project / "mkdocs.yml"
    text = config.read_text(encoding="utf-8").rstrip("\n") + "\n"
    text += nav_lines(pages, section_pages)
    config.write_text(text, encoding="utf-8")
    without, found = _HOOK_LINE.subn("", text)
    if found != 1:
        raise SystemExit("benchmarks/nav_scale.py: hooks/page_render_cache.py not in mkdocs.yml")
    (project / "mkdocs-no-page-cache.yml").write_text(without, encoding="utf-8")


def stock_site(where: Path, course_scale, pages: int, section_pages: int) -> Path:
    """A stock Material site of the same pages (``mkdocs.yml``), and the same with
    ``navigation.prune`` (``mkdocs-prune.yml``)."""
    docs = where / "docs"
    (docs / "course").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n\nA stock Material site.\n", encoding="utf-8")
    for number in range(1, pages + 1):
        text = course_scale.page(number).replace('exec="on" ', "")
        (docs / "course" / f"page-{number:02d}.md").write_text(text, encoding="utf-8")
    nav = nav_lines(pages, section_pages)
    for name, features in (("mkdocs.yml", ""), ("mkdocs-prune.yml", PRUNE)):
        text = STOCK_CONFIG.format(nav=nav, features=features)
        (where / name).write_text(text, encoding="utf-8")
    return where


def _site_of(config: Path) -> Path:
    return config.parent / f"site-{config.stem}"


def build(config: Path, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Seconds of one strict build (with ``env``'s store, FRESH unset), and what it logged."""
    started = time.perf_counter()
    result = mkdocs_build(
        config, _site_of(config), fresh=False, cache_dir=config.parent / ".cache", env=env
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"strict build of {config} failed:\n{result.stderr[-4000:]}")
    return seconds, result.stderr


def peak_build(config: Path, env: dict[str, str] | None = None) -> tuple[float, str, int]:
    """``build``, run under a wrapper that reads the peak memory of its largest process
    (bytes)."""
    cache = {CACHE_DIR_ENV: str(config.parent / ".cache"), FRESH_ENV: ""}
    command = [sys.executable, "-c", _PEAK, *build_command(config, _site_of(config))]
    started = time.perf_counter()
    result = subprocess.run(
        command,
        cwd=config.parent,
        env={**os.environ, **BUILD_ENV, **cache, **(env or {})},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"strict build of {config} failed:\n{result.stderr[-4000:]}")
    peak = re.search(r"^peak-rss (\d+)$", result.stderr, re.MULTILINE)
    assert peak is not None, result.stderr[-2000:]
    return seconds, result.stderr, int(peak[1])


def site_size(config: Path) -> tuple[int, int]:
    """The built site's bytes, and the first synthetic page's HTML's."""
    site = _site_of(config)
    total = sum(path.stat().st_size for path in site.rglob("*") if path.is_file())
    return total, (site / "course" / "page-01" / "index.html").stat().st_size


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


def serve_edits(ours: Path, stock: Path, env: dict[str, str], edits: int) -> dict:
    """``edits`` prose edits to the first synthetic page under ``mkdocs serve``, ours and
    stock's in turns, each timed until the served page shows it."""
    import serve_latency  # beside this script, on the path as it runs

    marker = "Served prose to edit."
    sites = []
    for name, project, site_env in (("ours", ours, env), ("stock", stock, {})):
        page = project / "docs" / "course" / "page-01.md"
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("\n", f"\n\n{marker}\n", 1), encoding="utf-8")
        sites.append(serve_latency.Site(name, project, page, "course/page-01/", marker, site_env))
    times: dict[str, list[float]] = {"ours": [], "stock": []}
    try:
        for site in sites:  # each serve's first build
            serve_latency._wait_for(site.url, marker, timeout_s=1800)
        for turn in range(edits):
            for site in sites:
                times[site.name].append(site.edit(f"servededit{turn}word"))
    finally:
        for site in sites:
            site.stop()
    return times


def measure(where: Path, course_scale, pages: int, args) -> dict:
    ours = course_scale.make_copy(where / "ours", pages, executed=True)
    with_pages_in_nav(ours, pages, args.section_pages)
    stock = stock_site(where / "stock", course_scale, pages, args.section_pages)
    env = copy_env(ours)
    configs = {
        "ours": ours / "mkdocs.yml",
        "no page cache": ours / "mkdocs-no-page-cache.yml",
        "stock": stock / "mkdocs.yml",
        "stock, pruned": stock / "mkdocs-prune.yml",
    }
    found: dict = {"cold": {}, "peak": {}, "size": {}}
    for name, config, config_env in (
        ("ours", configs["ours"], env),
        ("stock", configs["stock"], None),
    ):
        seconds, _, peak = peak_build(config, config_env)
        found["cold"][name], found["peak"][f"{name}, cold"] = seconds, peak
        found["size"][name] = site_size(config)
    print(f"# {pages} pages: cold build {found['cold']['ours']:.1f} s", flush=True)
    for name in ("ours", "stock"):
        config = configs[name]
        found["peak"][f"{name}, nothing changed"] = peak_build(
            config, env if name == "ours" else None
        )[2]
    build(configs["stock, pruned"])
    found["size"]["stock, pruned"] = site_size(configs["stock, pruned"])
    found["store work"] = store_work(configs["ours"], env) if args.store_work else None
    times: dict[str, list[float]] = {name: [] for name in [*configs, "ours, edit", "stock, edit"]}
    reused = []
    for turn in range(1, args.repeats + 1):
        for name, config in configs.items():
            seconds, log = build(config, None if name.startswith("stock") else env)
            times[name].append(seconds)
            if name == "ours":
                reused.append(_RENDERS.search(log))
        for name, project in (("ours, edit", ours), ("stock, edit", stock)):
            edit_prose(project / "docs" / "course" / "page-01.md", turn)
            seconds, log = build(configs[name.split(",")[0]], None if project == stock else env)
            times[name].append(seconds)
            if project == ours:
                reused.append(_RENDERS.search(log))
    found["module edits"] = []
    for turn in range(1, args.repeats + 1):
        course_scale.edit(ours, turn)
        seconds, log = build(configs["ours"], env)
        executed = _EXECUTED.search(log)
        assert executed is not None, log[-2000:]
        blocks, ran, own = int(executed[1]), int(executed[2]), float(executed[3])
        found["module edits"].append((seconds, ran, blocks + 1, own))
    found["serve"] = serve_edits(ours, stock, env, args.serve) if args.serve else None
    found["times"] = times
    found["reused"] = [f"{match[1]}/{match[2]}" if match else "?" for match in reused]
    return found


def _runs(values: list[float]) -> str:
    return ", ".join(f"{value:.2f}" for value in values)


def _verdict(ratio: float, target: float | None) -> str:
    if target is None:
        return ""
    return f"; target <= {target}x: " + ("met" if ratio <= target else "MISSED")


def _line(label: str, text: str) -> None:
    print(f"{label + ':':<42} {text}")


def report(pages: int, found: dict, args) -> None:
    times = found["times"]
    median = {name: statistics.median(runs) for name, runs in times.items()}
    print(
        f"## {pages} pages in the nav, in sections of {args.section_pages} "
        f"(medians of {args.repeats}; runs in brackets)"
    )
    cold = found["cold"]
    _line("cold build", f"ours {cold['ours']:.2f} s, stock {cold['stock']:.2f} s")
    for name, runs in times.items():
        _line(name, f"{median[name]:6.2f} s   ({_runs(runs)})")
    ratio = median["ours"] / median["stock"]
    _line("nothing changed / stock Material", f"{ratio:.2f}x{_verdict(ratio, TARGETS.get(pages))}")
    without = median["no page cache"] / median["stock"]
    _line("without the page cache / stock Material", f"{without:.2f}x")
    _line(
        "stock with navigation.prune / stock", f"{median['stock, pruned'] / median['stock']:.2f}x"
    )
    _line("prose edit, a build / stock's", f"{median['ours, edit'] / median['stock, edit']:.2f}x")
    _line("page renders reused (then after each edit)", ", ".join(found["reused"]))
    edits = found["module edits"]
    seconds = statistics.median(edit[0] for edit in edits)
    own = statistics.median(edit[3] for edit in edits)
    ran = ", ".join(f"{edit[1]} of {edit[2]}" for edit in edits)
    met = "met" if seconds <= own + MODULE_EDIT_SLACK_S else "MISSED"
    _line(
        "module edit (counting.py)",
        f"{seconds:.2f} s ({_runs([edit[0] for edit in edits])}); outputs re-ran: {ran}; "
        f"their own run {own:.2f} s; target <= own + {MODULE_EDIT_SLACK_S:g} s: {met}",
    )
    if found["serve"] is not None:
        served = found["serve"]
        ours, stock = (statistics.median(served[name]) for name in ("ours", "stock"))
        _line(
            "prose edit under serve, until it shows",
            f"ours {ours:.2f} s ({_runs(served['ours'])}), stock {stock:.2f} s "
            f"({_runs(served['stock'])}): {ours / stock:.2f}x"
            + _verdict(ours / stock, SERVE_TARGETS.get(pages)),
        )
    peaks = ", ".join(f"{name} {peak / 2**20:.0f} MiB" for name, peak in found["peak"].items())
    _line("peak memory of a build's largest process", peaks)
    sizes = ", ".join(
        f"{name} {total / 1e6:.1f} MB (a page {page / 1e3:.0f} KB)"
        for name, (total, page) in found["size"].items()
    )
    _line("the built site", sizes)
    work = found.get("store work")
    if work is not None:
        written = ", ".join(f"{cache} {count}" for cache, count in sorted(work["written"].items()))
        _line(
            "store files a nothing-changed build wrote",
            f"{sum(work['written'].values())} ({written or 'none'})",
        )
        _line(
            "the store's prune after it",
            f"{work['prune_s'] * 1000:.1f} ms, {work['pruned']} pruned, "
            f"{work['files']} files in the store",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="40,120", help="page counts, comma-separated")
    parser.add_argument("--with-400", action="store_true", help="also 400 pages (cold: minutes)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--section-pages", type=int, default=8, help="pages a nav section")
    parser.add_argument("--serve", type=int, default=0, help="prose edits under mkdocs serve")
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
            results[pages] = measure(Path(tmp, f"n{pages}"), course_scale, pages, args)
            shutil.rmtree(Path(tmp, f"n{pages}"), ignore_errors=True)
    print(
        f"# benchmarks/nav_scale.py; Python {sys.version.split()[0]}; {os.cpu_count()} cores; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    for pages, found in results.items():
        report(pages, found, args)


if __name__ == "__main__":
    main()
