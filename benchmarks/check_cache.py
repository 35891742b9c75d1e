"""The cost of ``make check-cache`` (a cached and a fresh build side by side, then the
comparison), against one fresh build alone, same run, in turns. No target: the issue asks for
the cost to be printed. The first check may run what the cache lacks; the median is over
``--repeats`` checks (default 3; each is two builds, so 3 take about a minute here).

    python benchmarks/check_cache.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from build_support.caching.check_cache import check_sides, page_renders
from testkit.build import mkdocs_build
from testkit.project import ROOT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    checks, fresh, renders = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(args.repeats):
            started = time.perf_counter()
            found, cached = check_sides(ROOT, Path(tmp) / "check")
            checks.append(time.perf_counter() - started)
            renders.append(page_renders(cached.stderr))
            if found:
                raise SystemExit("check-cache found differences:\n" + "\n".join(found))
            started = time.perf_counter()
            result = mkdocs_build(ROOT / "mkdocs.yml", Path(tmp) / f"fresh-{turn}")
            fresh.append(time.perf_counter() - started)
            if result.returncode != 0:
                raise SystemExit(f"the fresh build failed:\n{result.stderr[-3000:]}")
    check_s, fresh_s = statistics.median(checks), statistics.median(fresh)
    print(f"## make check-cache ({args.repeats} runs, median)")
    print(f"check-cache:        {check_s:6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in checks)})")
    print(f"one fresh build:    {fresh_s:6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in fresh)})")
    print(f"check-cache costs {check_s / fresh_s:.2f}x a fresh build (no target; printed only)")
    print(f"the cached side's page renders, each check: {'; '.join(renders)}")


if __name__ == "__main__":
    main()
