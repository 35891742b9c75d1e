"""Where the section page's main thread goes on a phone, beside a stock one-page Material site.

Each run loads both pages, in turns, in a fresh headless Chromium context with a phone's
viewport and Lighthouse's mobile CPU throttling (4x, ``Emulation.setCPUThrottlingRate``), served
gzip-compressed from 127.0.0.1, and records two things over CDP until the page has been quiet
for a while after ``load``:

- a Chrome trace (``Tracing``): every style recalculation (``UpdateLayoutTree``, with how many
  elements it restyled) and layout pass, script, parse and paint task on the page's main
  thread, per phase (to DOMContentLoaded, to load, after load); long tasks and an estimate of
  total blocking time (the part of each task over 50 ms after first contentful paint). A style
  or layout pass that a script forced is named by the script's frame.
- a sampling CPU profile (``Profiler``): self time per script, and for Material's bundle per
  source module, by mapping each function's position through ``bundle.*.min.js.map`` (Mozilla's
  ``source-map``, from node_modules, run by node).

Figures are medians of ``--runs`` runs; the section page's are also given as a ratio of the
stock page's from the same runs, which is what to compare when the machine is shared.

    python benchmarks/main_thread.py [--runs 5] [--site DIR] [--top 12]

``--site`` is a built site (default: site/, ``make build``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

from build_support import browser as chrome
from testkit.browser_pages import LIGHTHOUSE_PHONE
from testkit.build import mkdocs_build
from testkit.project import ROOT, SECTION_PAGE
from testkit.serving import serve_gzip

sys.path.insert(0, str(Path(__file__).parent))
from build_time import ONE_PAGE_CONFIG

CPU_SLOWDOWN = 4  # Lighthouse's mobile throttling
QUIET_MS = 3000  # recording goes on this long after load: Material's enhancement work
TRACE_CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.stack",
    "loading",
    "toplevel",
    "v8.execute",
    "blink.user_timing",
]
KINDS = {  # trace event name: what it counts as
    "UpdateLayoutTree": "style",
    "Layout": "layout",
    "ParseHTML": "parse HTML",
    "ParseAuthorStyleSheet": "parse CSS",
    "EvaluateScript": "script",
    "FunctionCall": "script",
    "TimerFire": "script",
    "EventDispatch": "script",
    "FireAnimationFrame": "script",
    "v8.compile": "script",
    "PrePaint": "paint",
    "Paint": "paint",
    "Layerize": "paint",
    "UpdateLayer": "paint",
    "HitTest": "layout",
}
SCRIPT_EVENTS = {"EvaluateScript", "FunctionCall", "TimerFire", "EventDispatch",
                 "FireAnimationFrame"}  # fmt: skip
PHASES = ("to DCL", "to load", "after load")
SUMMARY = (
    "DCL ms",
    "load ms",
    "main thread busy ms",
    "main thread CPU ms",
    "style CPU ms",
    "layout CPU ms",
    "script CPU ms",
    "longest task ms",
    "tasks over 50 ms",
    "blocking ms (after FCP)",
    "largest restyle (elements)",
    "elements restyled, all passes",
    "objects laid out, all passes",
)

# Positions in a minified script -> original source file, by its source map (node's source-map).
_MAP_SCRIPT = """
const fs = require("fs");
const { SourceMapConsumer } = require("source-map");
const [mapPath] = process.argv.slice(1);
const consumer = new SourceMapConsumer(JSON.parse(fs.readFileSync(mapPath, "utf8")));
const positions = JSON.parse(fs.readFileSync(0, "utf8"));
const sources = positions.map(([line, column]) =>
  consumer.originalPositionFor({ line: line + 1, column }).source);
process.stdout.write(JSON.stringify(sources));
"""


def source_files(map_path: Path, positions: list[tuple[int, int]]) -> list[str]:
    """The original source of each (0-based line, column) of the script ``map_path`` maps."""
    if not positions:
        return []
    result = subprocess.run(
        ["node", "-e", _MAP_SCRIPT, str(map_path)],
        input=json.dumps(positions),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return [_short(source) for source in json.loads(result.stdout)]


def _short(source: str | None) -> str:
    if source is None:
        return "(unmapped)"
    source = source.split("node_modules/", 1)[-1] if "node_modules/" in source else source
    if source.startswith(("rxjs/", "tslib/")):
        return source.split("/", 1)[0] + " (library)"
    return source.split("javascripts/", 1)[-1]


def record(browser, url: str) -> tuple[list[dict], dict]:
    """Trace events and CPU profile of one cold load of ``url``."""
    context = browser.new_context(viewport=LIGHTHOUSE_PHONE, is_mobile=True, has_touch=True)
    host = urlsplit(url).netloc
    context.route(
        "**/*", lambda r: r.continue_() if urlsplit(r.request.url).netloc == host else r.abort()
    )
    page = context.new_page()
    page.goto(f"http://{host}/blank.txt")  # same origin first: the renderer stays the same
    cdp = context.new_cdp_session(page)
    events: list[dict] = []
    done: list[bool] = []
    cdp.on("Tracing.dataCollected", lambda message: events.extend(message["value"]))
    cdp.on("Tracing.tracingComplete", lambda _: done.append(True))
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 200})  # µs
    cdp.send(
        "Tracing.start",
        {"traceConfig": {"includedCategories": TRACE_CATEGORIES}, "transferMode": "ReportEvents"},
    )
    cdp.send("Profiler.start")
    page.goto(url, wait_until="load")
    page.wait_for_timeout(QUIET_MS)
    profile = cdp.send("Profiler.stop")["profile"]
    cdp.send("Tracing.end")
    while not done:
        page.wait_for_timeout(50)
    context.close()
    return events, profile


def _main_thread(events: list[dict], url: str) -> tuple[int, int, str]:
    """The process, thread and frame that parsed ``url``."""
    for event in events:
        if event.get("name") == "ParseHTML":
            data = event.get("args", {}).get("beginData", {})
            if data.get("url") == url:
                return event["pid"], event["tid"], data.get("frame", "")
    raise SystemExit(f"no HTML parse of {url} in the trace")


def _initiator(event: dict) -> tuple[str, int, int] | None:
    """The top script frame of a forced style or layout pass (url, line, column)."""
    data = event.get("args", {}).get("beginData", {})
    for frame in data.get("stackTrace") or []:
        if frame.get("url"):
            # 1-based in trace events, 0-based in the profiler's call frames
            return frame["url"], frame.get("lineNumber", 1) - 1, frame.get("columnNumber", 1) - 1
    return None


def analyse(events: list[dict], profile: dict, url: str, site: Path, origin: str) -> dict:
    """One run's figures: per phase and kind (ms, count), passes, long tasks, profile."""
    pid, tid, frame_id = _main_thread(events, url)
    main = [e for e in events if e.get("pid") == pid and e.get("tid") == tid and "ts" in e]
    start = min(e["ts"] for e in main if e["name"] == "ParseHTML")
    marks = {}
    for event in main:  # the page's own frame: blank iframes on the page mark theirs too
        args = event.get("args", {})
        mark = event["name"] in ("MarkDOMContent", "MarkLoad", "firstContentfulPaint")
        if mark and frame_id in (args.get("frame"), args.get("data", {}).get("frame")):
            marks.setdefault(event["name"], event["ts"])
    bounds = (marks["MarkDOMContent"], marks["MarkLoad"])

    def phase(ts: float) -> str:
        return PHASES[sum(ts >= bound for bound in bounds)]

    figures: dict[str, float] = defaultdict(float)
    scripts = [e for e in main if e["name"] in SCRIPT_EVENTS and e.get("ph") == "X"]
    forced_frames = []
    for event in main:
        kind = KINDS.get(event["name"])
        if kind is None or event.get("ph") != "X" or event["ts"] < start:
            continue
        ms = event.get("dur", 0) / 1000
        when = phase(event["ts"])
        figures[f"{kind} ms|{when}"] += ms
        figures[f"{kind} n|{when}"] += 1
        if kind in ("style", "layout", "script") and event["name"] != "v8.compile":
            figures[f"{kind} CPU ms"] += event.get("tdur", 0) / 1000
        if kind in ("style", "layout"):
            inside = any(s["ts"] <= event["ts"] <= s["ts"] + s["dur"] for s in scripts)
            if inside:
                figures[f"forced {kind} ms|{when}"] += ms
                figures[f"forced {kind} n|{when}"] += 1
                frame = _initiator(event)
                if frame:
                    forced_frames.append((kind, frame, ms))
        if event["name"] == "UpdateLayoutTree":
            count = event.get("args", {}).get("elementCount", 0)
            largest = figures["largest restyle (elements)"]
            figures["largest restyle (elements)"] = max(largest, count)
            figures["elements restyled, all passes"] += count
        if event["name"] == "Layout":
            objects = event.get("args", {}).get("beginData", {}).get("dirtyObjects", 0)
            figures["objects laid out, all passes"] += objects
    fcp = marks.get("firstContentfulPaint", start)
    tasks = [e for e in main if e["name"] == "RunTask" and e.get("ph") == "X" and e["ts"] >= start]
    figures["tasks over 50 ms"] = sum(e["dur"] > 50_000 for e in tasks)
    figures["longest task ms"] = max(e["dur"] for e in tasks) / 1000
    figures["blocking ms (after FCP)"] = sum(
        max(0, e["dur"] / 1000 - 50) for e in tasks if e["ts"] >= fcp
    )
    figures["DCL ms"] = (bounds[0] - start) / 1000
    figures["load ms"] = (bounds[1] - start) / 1000
    figures["main thread busy ms"] = sum(e["dur"] for e in tasks) / 1000
    # Thread time: what the main thread itself ran, less the time other processes held the CPU
    # (on a shared machine the wall-clock figures above grow with the load; these much less).
    figures["main thread CPU ms"] = sum(e.get("tdur", 0) for e in tasks) / 1000

    # Self time per script (per source module inside a mapped bundle). A native function's
    # time (queryCommandSupported, setInterval, ...) is named with the script that called it.
    self_ms: dict[int, float] = defaultdict(float)
    for node_id, delta in zip(profile["samples"], [*profile["timeDeltas"][1:], 0], strict=True):
        self_ms[node_id] += delta / 1000
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    parents = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    by_name: dict[str, float] = defaultdict(float)
    to_map: dict[Path, list] = defaultdict(list)  # source map: [(line, column, ms, label)]

    def place(script: str, line: int, column: int, ms: float, label: str) -> None:
        local = site / urlsplit(script).path.split("/", 2)[-1]
        if script.startswith(origin) and local.with_name(local.name + ".map").exists():
            to_map[local.with_name(local.name + ".map")].append((line, column, ms, label))
        else:
            by_name[label.format(Path(urlsplit(script).path).name or "(no script)")] += ms

    for node_id, ms in self_ms.items():
        frame = nodes[node_id]
        if frame["url"]:
            place(frame["url"], frame["lineNumber"], frame["columnNumber"], ms, "self: {}")
            continue
        name = frame["functionName"] or "(anonymous)"
        caller = parents.get(node_id)
        while caller is not None and not nodes[caller]["url"]:
            caller = parents.get(caller)
        if name.startswith("(") or caller is None:
            by_name[f"self: {name}"] += ms
        else:
            called = nodes[caller]
            label = f"self: {{}} -> {name}"
            place(called["url"], called["lineNumber"], called["columnNumber"], ms, label)
    for kind, (script, line, column), ms in forced_frames:
        place(script, line, column, ms, f"forced {kind} by {{}}")

    # The same samples, each given to the nearest frame on its stack that is Material's own
    # source (not rxjs, not a native function): which component the library time serves.
    bundle_nodes = [
        (node_id, frame)
        for node_id, frame in nodes.items()
        if frame["url"].startswith(origin) and "/bundle." in frame["url"]
    ]
    bundle_map = None
    if bundle_nodes:
        local = site / urlsplit(bundle_nodes[0][1]["url"]).path.split("/", 2)[-1]
        bundle_map = local.with_name(local.name + ".map")

    # Every position either part needs, mapped in one node run per source map.
    wanted: dict[Path, set[tuple[int, int]]] = defaultdict(set)
    for map_path, items in to_map.items():
        wanted[map_path].update((line, column) for line, column, _, _ in items)
    if bundle_map is not None:
        wanted[bundle_map].update((f["lineNumber"], f["columnNumber"]) for _, f in bundle_nodes)
    source_at: dict[Path, dict[tuple[int, int], str]] = {}
    for map_path, positions in wanted.items():
        ordered = sorted(positions)
        source_at[map_path] = dict(zip(ordered, source_files(map_path, ordered), strict=True))

    for map_path, items in to_map.items():
        for line, column, ms, label in items:
            by_name[label.format(source_at[map_path][line, column])] += ms
    figures.update(by_name)
    owner_of: dict[int, str] = {}
    if bundle_map is not None:
        for node_id, frame in bundle_nodes:
            source = source_at[bundle_map][frame["lineNumber"], frame["columnNumber"]]
            if "(library)" not in source and source != "(unmapped)":
                owner_of[node_id] = source
    for node_id, ms in self_ms.items():
        if nodes[node_id]["functionName"] in ("(idle)", "(program)", "(garbage collector)"):
            continue
        walker: int | None = node_id
        while walker is not None and walker not in owner_of:
            walker = parents.get(walker)
        if walker is not None:
            figures[f"owner: {owner_of[walker]}"] += ms
    return figures


def median_figures(runs: list[dict]) -> dict[str, float]:
    keys = {key for run in runs for key in run}
    return {key: statistics.median(run.get(key, 0) for run in runs) for key in keys}


def report(section: dict[str, float], stock: dict[str, float], top: int) -> None:
    def ratio(key: str) -> str:
        base = stock.get(key, 0)
        return f"{section.get(key, 0) / base:7.1f}x" if base else f"{'':>8}"

    print(f"{'':<44} {'section':>9} {'stock':>9} {'ratio':>8}")
    for key in SUMMARY:
        print(f"{key:<44} {section.get(key, 0):9.0f} {stock.get(key, 0):9.0f} {ratio(key)}")
    print("\nper phase (ms / passes):")
    kinds = sorted({key.split(" ms|")[0] for key in section if " ms|" in key})
    print(f"{'':<22}" + "".join(f"{p:>22}" for p in PHASES))
    for kind in kinds:
        cells = []
        for when in PHASES:
            ms, n = section.get(f"{kind} ms|{when}", 0), section.get(f"{kind} n|{when}", 0)
            sms, sn = stock.get(f"{kind} ms|{when}", 0), stock.get(f"{kind} n|{when}", 0)
            cells.append(f"{ms:6.0f}/{n:<3.0f}({sms:4.0f}/{sn:<2.0f})")
        print(f"{kind:<22}" + "".join(f"{c:>22}" for c in cells))
    print("(section page; the stock page's figures in brackets)")
    for prefix, title in (
        ("self: ", "CPU profile, self time by script (Material's bundle by source module)"),
        ("owner: ", "CPU profile, time under each Material module (rxjs and natives included)"),
        ("forced ", "style and layout passes forced by a script, by its top frame"),
    ):
        keys = [k for k in section if k.startswith(prefix) and not k.endswith("|")]
        keys = [k for k in keys if "|" not in k]
        keys = sorted(keys, key=section.get, reverse=True)[:top]
        print(f"\n{title} (ms, medians; section, stock):")
        for key in keys:
            name = key.removeprefix(prefix)
            print(f"  {name[:60]:<60} {section[key]:8.1f} {stock.get(key, 0):8.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", type=Path, default=ROOT / "site")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    if not (args.site / SECTION_PAGE / "index.html").exists():
        raise SystemExit(f"no built section page in {args.site}: run `make build`")
    with tempfile.TemporaryDirectory() as tmp:
        stock = Path(tmp, "stock")
        (stock / "docs").mkdir(parents=True)
        (stock / "mkdocs.yml").write_text(ONE_PAGE_CONFIG, encoding="utf-8")
        (stock / "docs" / "index.md").write_text(
            "# One page\n\nNothing to run.\n", encoding="utf-8"
        )
        served = Path(tmp, "served")
        served.mkdir()
        (served / "blank.txt").write_text("", encoding="utf-8")
        (served / "site").symlink_to(args.site.resolve())
        if mkdocs_build(stock / "mkdocs.yml", served / "stock").returncode != 0:
            raise SystemExit("the stock one-page Material site did not build")
        runs: dict[str, list[dict]] = {"section": [], "stock": []}
        with serve_gzip(served) as origin, sync_playwright() as playwright:
            browser = chrome.launch(playwright)
            urls = {"section": f"{origin}site/{SECTION_PAGE}/", "stock": f"{origin}stock/"}
            roots = {"section": served / "site", "stock": served / "stock"}
            for run in range(args.runs):  # in turns, so a busy spell slows both alike
                for name, url in urls.items():
                    events, profile = record(browser, url)
                    runs[name].append(analyse(events, profile, url, roots[name], origin))
                print(f"  run {run + 1} of {args.runs} done", flush=True)
            browser.close()
    print(f"\n# benchmarks/main_thread.py: {CPU_SLOWDOWN}x CPU slowdown, phone viewport, "
          f"gzip served, median of {args.runs} run(s)")  # fmt: skip
    report(median_figures(runs["section"]), median_figures(runs["stock"]), args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
