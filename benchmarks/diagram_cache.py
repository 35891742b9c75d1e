"""What drawing the diagrams at build time costs, with and without the cache of drawn SVGs.

hooks/mermaid_svg.py has mermaid draw each diagram in headless chromium when the site is built,
and keeps the SVG in the store's diagrams cache (build_support/caching/store.py). This times, in
turns, full strict builds with no diagram in the store (every diagram drawn: chromium started,
mermaid loaded; the store's other caches warm) and with every one (no browser started), and the
drawing step alone. Target: with a warm cache the drawing step takes at most 0.05 s (no browser
starts).

    python benchmarks/diagram_cache.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import material

from build_support.build_command import CACHE_DIR_ENV
from examples import BATCH, sequential_vs_parallel_flowchart
from testkit.build import mkdocs_build
from testkit.hooks import load_hook
from testkit.project import ROOT

MAX_WARM_DRAW_S = 0.05  # reading cached SVGs: no browser may start


def build_seconds(site_dir: Path, cache: Path) -> float:
    start = time.perf_counter()
    result = mkdocs_build(ROOT / "mkdocs.yml", site_dir, cache_dir=cache)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"strict build failed:\n{result.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    hook = load_hook("mermaid_svg")
    source = sequential_vs_parallel_flowchart(BATCH)
    times: dict[str, list[float]] = {
        "cold build": [],
        "warm build": [],
        "cold draw": [],
        "warm draw": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        warm_cache = Path(tmp, "warm")
        build_seconds(Path(tmp, "site"), warm_cache)  # fills the warm cache
        for run in range(args.repeats):  # in turns, so a busy spell slows both alike
            cold_cache = Path(tmp, f"cold-{run}")  # the warm store without its diagrams
            shutil.copytree(warm_cache, cold_cache, ignore=shutil.ignore_patterns("diagrams"))
            times["cold build"].append(build_seconds(Path(tmp, "site"), cold_cache))
            times["warm build"].append(build_seconds(Path(tmp, "site"), warm_cache))
            for name, cache in (("cold draw", Path(tmp, f"draw-{run}")), ("warm draw", warm_cache)):
                os.environ[CACHE_DIR_ENV] = str(cache)
                config = SimpleNamespace(
                    config_file_path=str(ROOT / "mkdocs.yml"),
                    theme=SimpleNamespace(dirs=[str(Path(material.__file__).parent / "templates")]),
                )
                drawing = hook.Drawing(config)
                if name == "warm draw":
                    hook.svgs_for(drawing, [source], "benchmark")  # make sure it is in the cache
                start = time.perf_counter()
                hook.svgs_for(drawing, [source], "benchmark")
                times[name].append(time.perf_counter() - start)
    os.environ.pop(CACHE_DIR_ENV)

    print(
        f"# benchmarks/diagram_cache.py: median of {args.repeats}, load average {os.getloadavg()}"
    )
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        runs = ", ".join(f"{t:.2f}" for t in values)
        print(f"{name + ':':<22} {medians[name]:6.2f} s   (runs: {runs})")
    print(f"the cache saves per build: {medians['cold build'] - medians['warm build']:6.2f} s")
    met = "met" if medians["warm draw"] <= MAX_WARM_DRAW_S else "MISSED"
    print(f"warm drawing step <= {MAX_WARM_DRAW_S} s (no browser started): {met}")


if __name__ == "__main__":
    main()
