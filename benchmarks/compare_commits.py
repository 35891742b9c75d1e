"""One benchmark run on two commits in the same run, in turns: each commit's own script and code,
from a ``git worktree`` of it, with this checkout's virtual environment and ``node_modules``.
Every figure a run prints (a line ``label: 1.23 s`` or ``... ms``) is gathered; the medians of
each commit and their ratio are printed. Timings are noisy on a shared machine: read the ratios,
assert nothing.

    python benchmarks/compare_commits.py build_time --commits 17ff4ca HEAD --rounds 2 -- --repeats 1
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ("node_modules",)  # npm's packages (package-lock.json): mermaid, jax-js
FIGURE = re.compile(
    r"^\s*(?P<label>[^\s:=][^:=]*?)\s*[:=]\s+(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|x)\b"
)


def figures(printed: str) -> dict[str, float]:
    """Each ``label: number s`` (``ms``; ``x``: a ratio within the run, the least noisy figure
    on a loaded machine) line's figure, in seconds; a repeated label marked."""
    found: dict[str, float] = {}
    for line in printed.splitlines():
        if match := FIGURE.match(line):
            unit = "x" if match["unit"] == "x" else "s"
            label = f"{match['label'].strip()} ({unit})"
            while label in found:
                label += "'"
            found[label] = float(match["value"]) / (1000 if match["unit"] == "ms" else 1)
    return found


def run(tree: Path, benchmark: str, arguments: list[str], timeout: float) -> str:
    """The benchmark's output, run from ``tree`` with its own code first on the path."""
    env = os.environ | {"PYTHONPATH": f"{tree}{os.pathsep}{tree / 'benchmarks'}"}
    command = [sys.executable, str(tree / "benchmarks" / f"{benchmark}.py"), *arguments]
    done = subprocess.run(
        command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise SystemExit(
            f"{benchmark} failed in {tree}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", help="a script of benchmarks/, without .py")
    parser.add_argument(
        "--commits", nargs=2, default=["17ff4ca", "HEAD"], metavar=("BEFORE", "AFTER")
    )
    parser.add_argument("--rounds", type=int, default=2, help="runs of each commit, in turns")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a run may take")
    given = sys.argv[1:]
    split = given.index("--") if "--" in given else len(given)  # then the benchmark's own
    args, arguments = parser.parse_args(given[:split]), given[split + 1 :]
    shas = [
        subprocess.run(
            ["git", "rev-parse", "--short", c], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        for c in args.commits
    ]
    with tempfile.TemporaryDirectory(prefix="compare-commits-") as tmp:
        trees = [Path(tmp, sha) for sha in shas]
        for sha, tree in zip(shas, trees, strict=True):
            subprocess.run(
                ["git", "worktree", "add", "--detach", "-q", str(tree), sha], cwd=ROOT, check=True
            )
            for ignored in SHARED:  # what git does not hold and a build needs: this checkout's
                if (ROOT / ignored).exists():
                    (tree / ignored).symlink_to(ROOT / ignored)
        seen: dict[str, dict[str, list[float]]] = {sha: defaultdict(list) for sha in shas}
        try:
            for round_ in range(args.rounds):
                order = list(zip(shas, trees, strict=True))
                for sha, tree in order if round_ % 2 == 0 else order[::-1]:
                    printed = run(tree, args.benchmark, arguments, args.timeout)
                    print(f"## round {round_ + 1}, {sha}:\n{printed}", flush=True)
                    for label, value in figures(printed).items():
                        seen[sha][label].append(value)
        finally:
            for tree in trees:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False
                )
    before, after = shas
    print(f"# {args.benchmark} {' '.join(arguments)}: medians of {args.rounds} runs each, in turns")
    print(f"{'figure':<44} {before:>10} {after:>10}  ratio (after / before)")
    for label, values in seen[before].items():
        theirs = seen[after].get(label)
        if not theirs:
            continue
        old, new = statistics.median(values), statistics.median(theirs)
        ratio = f"{new / old:6.3f}" if old else "     -"
        print(f"{label[:44]:<44} {old:10.3f} {new:10.3f}  {ratio}")


if __name__ == "__main__":
    main()
