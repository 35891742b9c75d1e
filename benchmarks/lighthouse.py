"""Lighthouse on every page of the version that mike deploys, against each page's targets.

The sources are published with ``make publish`` in a throw-away repository (as the browser tests
do), and the gh-pages tree is served from 127.0.0.1 gzip-compressed, as GitHub Pages (where
mike's branch is published) serves it: the scores a reader's phone would see there.
Lighthouse 12.2.3 (package-lock.json; mobile defaults) runs ``--runs`` times on each page, in
turns, in the browser ``build_support.browser`` finds; each figure is the median of those runs.
The section page's main-thread time is printed beside its score, by kind (Lighthouse's
``mainthread-work-breakdown``), with its longest tasks. Then playwright weighs the section page
as a phone loads it, and again once a reader has scrolled to its end, resource by resource.

Performance is CPU sensitive. A stock one-page Material site (benchmarks/build_time.py's) is
measured in the same runs as the reference for what this machine allows now: when its median
performance is under ``REFERENCE_MIN`` the machine was too loaded to judge, and the runs are
repeated (``--attempts`` in all); the figures printed are then the last attempt's, marked as not
judged. The machine's load average is printed too.

``--plain`` serves without compression instead: weights are then raw bytes, and the weight
targets (set for an uncompressed server) are judged too.

    python benchmarks/lighthouse.py [--runs 3] [--attempts 3] [--pages SUBSTRING ...]
                                    [--reports DIR] [--plain]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

# The publish and serving helpers the browser tests use too (the editable install puts the
# repository root on sys.path).
from build_support import browser as chrome
from testkit.author import extract_branch, publish_copy, section_version
from testkit.browser_pages import LIGHTHOUSE_PHONE
from testkit.build import mkdocs_build
from testkit.project import ROOT, SECTION_PAGE
from testkit.serving import serve, serve_gzip
from testkit.site import built_pages, site_prefix

sys.path.insert(0, str(Path(__file__).parent))
from build_time import ONE_PAGE_CONFIG

LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
TARGET_SCORES = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
SECTION_TBT_MS = 200
# A page's own targets, over TARGET_SCORES: the section page's total blocking time too.
PAGE_TARGETS: dict[str, dict[str, float]] = {f"{SECTION_PAGE}/": {"tbt": SECTION_TBT_MS}}
REFERENCE_MIN = 98  # the stock page's performance in a run that may judge the others
KIB = 1024
SECTION_AT_LOAD_KIB = 500
SECTION_AFTER_SCROLL_KIB = 1000


def lighthouse(url: str, report: Path) -> dict[str, float]:
    """One Lighthouse run: the four scores (0-100), total weight (bytes) and TBT (ms)."""
    command = [
        str(LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={report}",
        f"--only-categories={','.join(CATEGORIES)}",
        f"--chrome-flags={' '.join(chrome.LAUNCH_ARGS)}",  # as every browser the project drives
    ]
    env = {**os.environ, "CHROME_PATH": str(chrome.find().path)}  # Lighthouse's own variable
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"lighthouse failed on {url}:\n{result.stderr[-2000:]}")
    data = json.loads(report.read_text(encoding="utf-8"))
    figures = {name: data["categories"][name]["score"] * 100 for name in CATEGORIES}
    figures["weight"] = data["audits"]["total-byte-weight"]["numericValue"]
    figures["tbt"] = data["audits"]["total-blocking-time"]["numericValue"]
    figures["fcp"] = data["audits"]["first-contentful-paint"]["numericValue"]
    figures["lcp"] = data["audits"]["largest-contentful-paint"]["numericValue"]
    breakdown = data["audits"]["mainthread-work-breakdown"]["details"]["items"]
    for item in breakdown:  # main-thread time by kind: style and layout, script evaluation, ...
        figures[f"main thread: {item['groupLabel']}"] = item["duration"]
    figures["main thread"] = data["audits"]["mainthread-work-breakdown"]["numericValue"]
    long_tasks = data["audits"]["long-tasks"]["details"]["items"]
    figures["long tasks"] = len(long_tasks)
    figures["longest task"] = max((task["duration"] for task in long_tasks), default=0)
    figures["failed"] = sorted(
        audit_id
        for name in CATEGORIES[1:]
        for ref in data["categories"][name]["auditRefs"]
        if ref["weight"] > 0
        and (audit_id := ref["id"])
        and data["audits"][audit_id]["score"] is not None
        and data["audits"][audit_id]["score"] < 1
    )
    return figures


def medians(runs: list[dict]) -> dict:
    keys = {key for run in runs for key in run if key != "failed"}
    figures = {key: statistics.median(run.get(key, 0) for run in runs) for key in keys}
    figures["failed"] = sorted({audit for run in runs for audit in run["failed"]})
    figures["runs"] = [(run["performance"], run["tbt"], run["fcp"]) for run in runs]
    return figures


def weigh_section(browser, url: str) -> tuple[dict[str, int], dict[str, int]]:
    """Bytes per resource (body + headers) at load, and after scrolling to the page's end."""
    sizes: dict[str, int] = {}
    context = browser.new_context(viewport=LIGHTHOUSE_PHONE, is_mobile=True, has_touch=True)
    host = urlsplit(url).netloc
    context.route(
        "**/*", lambda r: r.continue_() if urlsplit(r.request.url).netloc == host else r.abort()
    )

    def finished(request):
        size = request.sizes()
        sizes[request.url] = size["responseBodySize"] + size["responseHeadersSize"]

    context.on("requestfinished", finished)  # context level: the search worker's fetches too
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(1000)
    at_load = dict(sizes)
    height = page.evaluate("document.documentElement.scrollHeight")
    step = LIGHTHOUSE_PHONE["height"] // 2
    for y in range(0, height + LIGHTHOUSE_PHONE["height"], step):  # as a reader scrolls
        page.evaluate(f"window.scrollTo(0, {y})")
        page.wait_for_timeout(50)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1000)
    after_scroll = dict(sizes)
    context.close()
    return at_load, after_scroll


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def measure(targets: dict[str, str], runs: int, reports: Path | None, workdir: Path) -> dict:
    """Each target's Lighthouse figures, ``runs`` times, in turns (a busy spell slows every page
    alike); the median of each figure per target."""
    figures: dict[str, list[dict]] = {name: [] for name in targets}
    for run in range(runs):
        for name, url in targets.items():
            report = workdir / "report.json"
            if reports:
                reports.mkdir(parents=True, exist_ok=True)
                slug = name.strip("/").replace("/", "_") or "home"
                report = reports / f"{slug}-{run + 1}.json"
            figures[name].append(lighthouse(url, report))
        print(f"  run {run + 1} of {runs} done on every page", flush=True)
    return {name: medians(page_runs) for name, page_runs in figures.items()}


def page_targets(page: str) -> dict[str, float]:
    """The page's targets: scores it must reach, and its total blocking time at most (``tbt``)."""
    return {**TARGET_SCORES, **PAGE_TARGETS.get(page, {})}


def _target_text(targets: dict[str, float]) -> str:
    scores = " ".join(f"{targets[name]:.0f}" for name in CATEGORIES)
    tbt = f", TBT <= {targets['tbt']:.0f} ms" if "tbt" in targets else ""
    return f"scores >= {scores}{tbt}"


def main_thread_lines(row: dict) -> list[str]:
    """The page's main-thread time by kind (medians, ms), largest first, and its long tasks."""
    kinds = sorted(
        (key for key in row if key.startswith("main thread: ")), key=row.get, reverse=True
    )
    parts = [f"{key.removeprefix('main thread: ')} {row[key]:,.0f}" for key in kinds]
    # Each run's score, TBT and FCP: Lantern places FCP before or after the bundle's long tasks
    # by where the observed first paint fell, so one build's TBT can differ twofold between runs.
    runs = row["runs"]
    return [
        f"main thread {row['main thread']:,.0f} ms: " + ", ".join(parts[:4]),
        ", ".join(parts[4:]),
        f"long tasks {row['long tasks']:.0f}, the longest {row['longest task']:,.0f} ms",
        "each run: performance "
        + ", ".join(f"{performance:.0f}" for performance, _, _ in runs)
        + "; TBT "
        + ", ".join(f"{tbt:,.0f}" for _, tbt, _ in runs)
        + " ms; FCP "
        + ", ".join(f"{fcp / 1000:.2f}" for _, _, fcp in runs)
        + " s",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--attempts", type=int, default=3, help="repeat the runs while the reference is too low"
    )
    parser.add_argument("--pages", nargs="*", help="only pages whose path holds one of these")
    parser.add_argument("--reports", type=Path, help="keep every run's JSON report in this folder")
    parser.add_argument(
        "--plain", action="store_true", help="serve without compression (judge the weights)"
    )
    args = parser.parse_args()
    if not LIGHTHOUSE.exists():
        print(f"{LIGHTHOUSE} is missing: run `make setup` (npm ci)", file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        print("publishing with mike into a throw-away repository ...", flush=True)
        repo = publish_copy(workdir)
        served = workdir / "served"
        extract_branch(repo, "gh-pages", served / site_prefix())
        version_root = served / site_prefix() / section_version()
        stock = workdir / "stock"
        (stock / "docs").mkdir(parents=True)
        (stock / "mkdocs.yml").write_text(ONE_PAGE_CONFIG, encoding="utf-8")
        (stock / "docs" / "index.md").write_text(
            "# One page\n\nNothing to run.\n", encoding="utf-8"
        )
        if mkdocs_build(stock / "mkdocs.yml", served / "stock-material").returncode != 0:
            raise SystemExit("the stock one-page Material site did not build")
        pages = built_pages(version_root)
        if args.pages:
            pages = [p for p in pages if any(part in p for part in args.pages)]
        load_before = os.getloadavg()
        with (serve if args.plain else serve_gzip)(served) as origin:
            base = f"{origin}{site_prefix()}{section_version()}/"
            targets = {"stock": f"{origin}stock-material/"}
            targets |= {page: base + page for page in pages}
            for attempt in range(1, args.attempts + 1):
                rows = measure(targets, args.runs, args.reports, workdir)
                reference = rows.pop("stock")
                judged = reference["performance"] >= REFERENCE_MIN
                state = "judged" if judged else f"under {REFERENCE_MIN}: the machine is too busy"
                score = reference["performance"]
                print(f"attempt {attempt}: the stock page's performance {score:.0f} ({state})")
                if judged:
                    break
            with sync_playwright() as playwright:
                browser = chrome.launch(playwright)
                at_load, after_scroll = weigh_section(browser, f"{base}{SECTION_PAGE}/")
                browser.close()
        load_after = os.getloadavg()

    print(f"\n# benchmarks/lighthouse.py: Lighthouse 12.2.3, mobile, median of {args.runs} run(s)")
    served_as = "uncompressed" if args.plain else "gzip-compressed, as GitHub Pages"
    print(f"served by a static server on 127.0.0.1, {served_as}")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {load_after}")
    print(
        f"reference: the stock one-page Material site, performance {reference['performance']:.0f}"
        f" in the same runs (>= {REFERENCE_MIN} to judge; attempt {attempt} of {args.attempts})"
    )
    scores = " ".join(f"{name:>5}" for name in ("perf", "a11y", "b.p.", "seo"))
    print(f"{'page':<40} {scores} {'weight KiB':>11} {'TBT ms':>7} {'FCP s':>6} {'LCP s':>6}")
    missed = []
    for page, row in [("(stock one-page Material site)", reference), *rows.items()]:
        scores = " ".join(f"{row[name]:5.0f}" for name in CATEGORIES)
        times = f"{row['tbt']:7.0f} {row['fcp'] / 1000:6.2f} {row['lcp'] / 1000:6.2f}"
        print(f"{page or '(home)':<40} {scores} {row['weight'] / KIB:11.1f} {times}")
        if row is reference:
            continue
        wanted = page_targets(page)
        print(f"{'':<40} targets: {_target_text(wanted)}")
        for name in CATEGORIES:
            if row[name] < wanted[name]:
                missed.append(f"{page or '(home)'} {name} {row[name]:.0f} < {wanted[name]:.0f}")
        if "tbt" in wanted and row["tbt"] > wanted["tbt"]:
            missed.append(f"{page} total blocking time {row['tbt']:.0f} ms > {wanted['tbt']:.0f}")
        if page == f"{SECTION_PAGE}/":
            for line in main_thread_lines(row):
                print(f"{'':<40} {line}")
        if row["failed"]:
            print(f"{'':<40} audits not passed: {', '.join(row['failed'])}")
    for name in CATEGORIES:
        worst = min(rows.values(), key=lambda row: row[name])[name]
        target = min(page_targets(page)[name] for page in rows)
        met = verdict(worst >= target)
        print(f"{name + ' on every page':<40} >= {target:.0f}: {met} (lowest {worst:.0f})")

    print(f"\nsection page ({SECTION_PAGE}/), phone viewport, bytes with headers, by resource:")
    print(f"{'resource':<60} {'at load KiB':>12} {'after scroll KiB':>17}")
    for url in sorted(after_scroll, key=after_scroll.get, reverse=True):
        name = urlsplit(url).path.removeprefix(f"/{site_prefix()}{section_version()}/") or "/"
        load = f"{at_load[url] / KIB:12.1f}" if url in at_load else f"{'-':>12}"
        print(f"{name[:60]:<60} {load} {after_scroll[url] / KIB:17.1f}")
    load_kib = sum(at_load.values()) / KIB
    scroll_kib = sum(after_scroll.values()) / KIB
    print(f"{'total':<60} {load_kib:12.1f} {scroll_kib:17.1f}")
    checks = []
    if args.plain:  # the weight targets are set for an uncompressed server
        checks = [
            (f"section at load: {load_kib:.1f} KiB <= {SECTION_AT_LOAD_KIB}",
             load_kib <= SECTION_AT_LOAD_KIB),
            (f"section after scroll: {scroll_kib:.1f} KiB <= {SECTION_AFTER_SCROLL_KIB}",
             scroll_kib <= SECTION_AFTER_SCROLL_KIB),
        ]  # fmt: skip
        if f"{SECTION_PAGE}/" in rows:
            weight = rows[f"{SECTION_PAGE}/"]["weight"] / KIB
            checks.append(
                (
                    f"section weight (Lighthouse): {weight:.1f} KiB <= {SECTION_AT_LOAD_KIB}",
                    weight <= SECTION_AT_LOAD_KIB,
                )
            )
    else:
        print("(gzip: weights are compressed transfer sizes, not judged; --plain judges them)")
    for text, met in checks:
        print(f"{text}: {verdict(met)}")
        if not met:
            missed.append(text)
    if not judged:
        print(
            f"NOT JUDGED: the reference scored {reference['performance']:.0f} < {REFERENCE_MIN} "
            f"in each of {args.attempts} attempt(s); run again on a quieter machine"
        )
        return 0
    print(f"targets missed: {len(missed)}")
    for text in missed:
        print(f"  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
