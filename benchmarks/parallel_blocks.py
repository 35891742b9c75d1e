"""Would a cold build gain from running independent outputs in worker processes (issue 24,
item 3)? The section's blocks that stand alone (no session, not timed) and the synthetic
course pages' blocks (``course_scale.py``), run as a cold build runs them, each in fresh
globals: serially in one Python, then split over a pool of worker processes (spawned, as
JAX needs: it starts threads, so a forked worker may hang). Each side pays what a build would:
its Python, importing JAX and the package, each new shape's compile. Medians of --repeats,
in turns, against the number of CPUs.

    python benchmarks/parallel_blocks.py [--pages 40] [--workers 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import statistics
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from course_scale import BLOCKS  # benchmarks/ is on sys.path when a script of it runs

from testkit.project import ROOT, SECTION_PAGE

_FENCE = re.compile(r'^( *)```python exec="on"([^\n]*)\n(.*?)\n\1```', re.S | re.M)
_SNIPPET = re.compile(r'^--8<-- "([^"]+)"$', re.M)


def independent_blocks(pages: int) -> list[str]:
    """The code of every block a cold build could run on its own, in any order."""
    found = []
    for match in _FENCE.finditer((ROOT / "docs" / f"{SECTION_PAGE}.md").read_text()):
        options, code = match[2], textwrap.dedent(match[3])
        if "session=" in options or 'timed="yes"' in options:
            continue
        found.append(_SNIPPET.sub(lambda m: (ROOT / m[1]).read_text(), code))
    found += [block.format(n=n) for n in range(1, pages + 1) for block in BLOCKS]
    return found


def run_blocks(codes: list[str]) -> int:
    """Run each block in fresh globals, its printed output kept; how many ran."""
    os.chdir(ROOT)  # blocks read files relative to the project, as in a build
    for code in codes:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<block>", "exec"), {"__name__": "__main__"})
    return len(codes)


def run_in_pool(codes: list[str], workers: int) -> int:
    chunks = [codes[index::workers] for index in range(workers)]
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return sum(pool.map(run_blocks, chunks))


def timed(mode: str, args: argparse.Namespace) -> float:
    """Seconds of a fresh Python that runs every block ``mode`` (serial or pool)."""
    command = [sys.executable, __file__, "--run", mode, "--pages", str(args.pages)]
    command += ["--workers", str(args.workers)]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=ROOT)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--run", choices=["serial", "pool"])
    args = parser.parse_args()
    codes = independent_blocks(args.pages)
    if args.run == "serial":
        run_blocks(codes)
        return
    if args.run == "pool":
        run_in_pool(codes, args.workers)
        return
    times: dict[str, list[float]] = {"serial": [], "pool": []}
    for _ in range(args.repeats):  # in turns, so that a busy spell slows each alike
        for mode in times:
            times[mode].append(timed(mode, args))
    serial, pool = (statistics.median(times[mode]) for mode in ("serial", "pool"))
    print(
        f"# benchmarks/parallel_blocks.py: {len(codes)} independent blocks, {os.cpu_count()} "
        f"CPUs, medians of {args.repeats}"
    )
    for mode, label in (("serial", "one process"), ("pool", f"{args.workers} workers")):
        runs = ", ".join(f"{seconds:.2f}" for seconds in times[mode])
        print(f"{label + ':':<14} {statistics.median(times[mode]):6.2f} s   (runs: {runs})")
    saved = 1 - pool / serial
    verdict = "pays" if saved >= 0.2 else "does not pay (the build leaves it out)"
    print(f"pool / serial: {pool / serial:.2f}x ({saved:+.0%} of the time saved): {verdict}")


if __name__ == "__main__":
    main()
