"""Would a cold build gain from running independent outputs in worker processes? The section's
blocks that stand alone (no session, not timed) and the synthetic course pages' blocks
(``course_scale.py``), run as a cold build runs them, each in fresh globals: serially in one
Python, then split over a pool of worker processes (spawned, as JAX needs: it starts threads, so
a forked worker may hang). Each side pays what a build would: its Python, importing JAX and the
package, each new shape's compile. Medians of --repeats, in turns, against the number of CPUs.

The build's workers are forked warm from a template process: the modes ``forked`` and
``forked-pool`` run the same blocks as the build does, each in a worker of its own from
``executor.LocalExecutor`` (no import of JAX to pay, JAX's compilation cache shared), one after
another, then ``--workers`` at a time; the build would run sessions side by side only where the
second pays.

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
    for match in _FENCE.finditer(
        (ROOT / "docs" / f"{SECTION_PAGE}.md").read_text(encoding="utf-8")
    ):
        options, code = match[2], textwrap.dedent(match[3])
        if "session=" in options or 'timed="yes"' in options:
            continue
        found.append(_SNIPPET.sub(lambda m: (ROOT / m[1]).read_text(encoding="utf-8"), code))
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


def run_forked(codes: list[str], workers: int) -> int:
    """Each block in a worker of its own, forked from the build's template, ``workers`` at a
    time (the template's socket is one: workers are taken and closed one at a time)."""
    import tempfile
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from build_support.build_command import CACHE_DIR_ENV, FRESH_ENV
    from build_support.execution import state
    from build_support.execution.executor import LazyWorker

    os.environ[CACHE_DIR_ENV], os.environ[FRESH_ENV] = tempfile.mkdtemp(), ""
    os.chdir(ROOT)
    build, taking = state.start(ROOT), threading.Lock()

    def take(timed: bool, first_code: str):
        with taking:
            return build.take_worker(timed, first_code)

    def run(indexed: tuple[int, str]) -> None:
        worker = LazyWorker(take)
        try:
            worker.run(indexed[1], f"b{indexed[0]}", False, 120)
        finally:
            with taking:
                worker.close()

    try:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, enumerate(codes)))
    finally:
        state.PROCESS.executor.close()
    return len(codes)


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
    parser.add_argument("--run", choices=["serial", "pool", "forked", "forked-pool"])
    args = parser.parse_args()
    codes = independent_blocks(args.pages)
    if args.run == "serial":
        run_blocks(codes)
        return
    if args.run == "pool":
        run_in_pool(codes, args.workers)
        return
    if args.run in ("forked", "forked-pool"):
        run_forked(codes, args.workers if args.run == "forked-pool" else 1)
        return
    times: dict[str, list[float]] = {"serial": [], "pool": [], "forked": [], "forked-pool": []}
    for _ in range(args.repeats):  # in turns, so that a busy spell slows each alike
        for mode in times:
            times[mode].append(timed(mode, args))
    serial, pool = (statistics.median(times[mode]) for mode in ("serial", "pool"))
    forked, forked_pool = (statistics.median(times[mode]) for mode in ("forked", "forked-pool"))
    print(
        f"# benchmarks/parallel_blocks.py: {len(codes)} independent blocks, {os.cpu_count()} "
        f"CPUs, medians of {args.repeats}, load average {os.getloadavg()[0]:.1f}"
    )
    labels = {
        "serial": "one process",
        "pool": f"{args.workers} spawned workers",
        "forked": "a forked worker a block, one at a time",
        "forked-pool": f"a forked worker a block, {args.workers} at a time",
    }
    for mode, label in labels.items():
        runs = ", ".join(f"{seconds:.2f}" for seconds in times[mode])
        print(f"{label + ':':<46} {statistics.median(times[mode]):6.2f} s   (runs: {runs})")
    for name, (alone, together) in {
        "spawned pool / one process": (serial, pool),
        "forked side by side / one at a time": (forked, forked_pool),
    }.items():
        saved = 1 - together / alone
        verdict = "pays" if saved >= 0.2 else "does not pay (the build leaves it out)"
        print(f"{name}: {together / alone:.2f}x ({saved:+.0%} of the time saved): {verdict}")


if __name__ == "__main__":
    main()
