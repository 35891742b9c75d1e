"""The section page with and without the Try it panel, side by side in the same Lighthouse runs.

One strict build; a copy of it whose section page has the panel's markup and script taken out
(the page as it was before the panel). Both are served gzip-compressed from 127.0.0.1, as GitHub
Pages serves mike's branch, and Lighthouse 12.2.3 (mobile defaults, ``benchmarks/lighthouse.py``'s
runner) loads each page ``--runs`` times, in turns. Printed: the median of each figure for both
pages, the difference, every request the panel's files got at load (there must be none), and
the target: the page with the panel scores no lower than without it.

    python benchmarks/try_it_lighthouse.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lighthouse import CATEGORIES, lighthouse, medians

from testkit.build import mkdocs_build
from testkit.project import ROOT, SECTION_PAGE
from testkit.serving import serve_gzip

PANEL = re.compile(r'<details class="try-it">.*?</details>\s*<script>.*?</script>', re.S)
PANEL_FILES = re.compile(r"/(try-it|vendor/jax-js)/")


def without_panel(site: Path, copy: Path) -> None:
    shutil.copytree(site, copy)
    page = copy / SECTION_PAGE / "index.html"
    html, found = PANEL.subn("", page.read_text(encoding="utf-8"))
    if found != 1:
        raise SystemExit(f"the panel's markup was found {found} times in the section page")
    page.write_text(html, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        built = mkdocs_build(ROOT / "mkdocs.yml", work / "with")
        if built.returncode != 0:
            raise SystemExit(built.stderr[-3000:])
        without_panel(work / "with", work / "without")
        runs: dict[str, list[dict]] = {"with the panel": [], "without": []}
        requested: list[str] = []
        with serve_gzip(work) as base:
            for run in range(arguments.runs):
                for name, folder_name in (("with the panel", "with"), ("without", "without")):
                    report = work / f"{folder_name}-{run}.json"
                    runs[name].append(lighthouse(f"{base}{folder_name}/{SECTION_PAGE}/", report))
                    items = _network(report)
                    requested += [url for url in items if PANEL_FILES.search(url)]
                print(f"  run {run + 1} of {arguments.runs} done", flush=True)
        figures = {name: medians(page_runs) for name, page_runs in runs.items()}
    with_panel, without = figures["with the panel"], figures["without"]
    print(f"Lighthouse (mobile), section page, median of {arguments.runs} runs, in turns:")
    print(f"{'':28}{'with the panel':>16}{'without':>12}{'difference':>14}")
    rows = [*CATEGORIES, "tbt", "fcp", "lcp", "weight"]
    units = {"tbt": "ms", "fcp": "ms", "lcp": "ms", "weight": "B"}
    for key in rows:
        a, b = with_panel[key], without[key]
        unit = units.get(key, "")
        print(f"{key + (f' ({unit})' if unit else ''):28}{a:>16,.0f}{b:>12,.0f}{a - b:>+14,.0f}")
    print(f"requests for the panel's files at load: {len(requested)} {requested[:3]}")
    met = with_panel["performance"] >= without["performance"] and not requested
    print(
        "target (performance with the panel >= without, nothing of it fetched at load): "
        + ("met" if met else "MISSED")
    )
    return 0


def _network(report: Path) -> list[str]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return [item["url"] for item in data["audits"]["network-requests"]["details"]["items"]]


if __name__ == "__main__":
    sys.exit(main())
