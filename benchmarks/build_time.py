"""Build time: the full strict build against a one-page Material build, same venv, same run.

The one-page site is the floor: starting MkDocs and Material and writing the theme's files.
The ratio says what this site's live code adds on top. Target: at most 6x. Also times the
page's turnaround measurement alone (target: at most 3 s of the build).

    python benchmarks/build_time.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from examples import BATCH, WEIGHTS, measure_turnaround, score_batch
from tests.helpers import ROOT, mkdocs_build  # the tests' build command, on the same venv

MAX_RATIO = 6.0
MAX_TURNAROUND_S = 3.0

ONE_PAGE_CONFIG = """\
site_name: One page
theme:
  name: material
  font: false
"""


def build_seconds(config: Path, site_dir: Path) -> tuple[float, str]:
    """Wall-clock seconds of one strict build, and its log."""
    start = time.perf_counter()
    result = mkdocs_build(config, site_dir)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"strict build of {config} failed:\n{result.stderr}")
    return seconds, result.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        one_page = Path(tmp, "one-page")
        (one_page / "docs").mkdir(parents=True)
        (one_page / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
        (one_page / "docs" / "index.md").write_text("# One page\n\nNothing to run.\n")
        builds = {"full site": ROOT / "mkdocs.yml", "one-page Material": one_page / "mkdocs.yml"}
        times: dict[str, list[float]] = {name: [] for name in builds}
        for _ in range(args.repeats):  # in turns, so a busy spell slows both alike
            for name, config in builds.items():
                seconds, log = build_seconds(config, Path(tmp, "site", name.replace(" ", "-")))
                times[name].append(seconds)
                if name == "full site":
                    full_log = log

    full, floor = (statistics.median(times[name]) for name in builds)
    ratio = full / floor
    print(f"# benchmarks/build_time.py: median of {args.repeats} strict builds each")
    for name, median in zip(builds, (full, floor), strict=True):
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"{name + ':':<22} {median:6.2f} s   (runs: {runs})")
    met = "met" if ratio <= MAX_RATIO else "MISSED"
    print(f"ratio full / one page: {ratio:6.2f}x  (target <= {MAX_RATIO:g}x: {met})")
    print(f"the target, in seconds: {MAX_RATIO * floor:5.2f} s for the full build")
    # Where the full build's time goes, from its last run's execution report (the notebook
    # runs in the background: its seconds overlap the pages' blocks).
    for line in full_log.splitlines():
        if "Executed " in line or "Execution report" in line:
            print("  last full build:", line.split("-  ", 1)[-1])

    score_batch(BATCH, WEIGHTS)  # as on the page, where earlier blocks have warmed JAX up
    cost = measure_turnaround().cost_s
    met = "met" if cost <= MAX_TURNAROUND_S else "MISSED"
    print(f"turnaround table:      {cost:6.2f} s   (target <= {MAX_TURNAROUND_S:g} s: {met})")


if __name__ == "__main__":
    main()
