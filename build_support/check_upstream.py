"""``make check-upstream``: what moving the lock would bring. One build with the newest release of
every dependency (``uv.lock`` ignored), compared with the build from the lock.

    python -m build_support.check_upstream [--project DIR] [--out DIR]

The upstream side is a scratch copy of the project (``scratch_builds.py``) whose virtual
environment, on the build's own Python, gets ``uv pip install --upgrade`` of what
``pyproject.toml`` declares: the project (editable, with its ``charts`` extra) and every default
dependency group, each within its declared range, except that an exact pin (``jax==...``) is
lifted (``--override`` with the bare name), so the newest jax and numpy come too. The locked side
builds the same copy with the build's own environment (``uv.lock``'s). Both are fresh, into
``--out`` (default ``.cache/check-upstream/``: ``locked/`` and ``upstream/``), and compared as
``make check-pythons`` compares them (``caching/compare.py``, version captions apart, the
outputs marked varying masked).

It prints the versions that would move, then "same", or each output that would change, named by
page and block with its first differing line. It fails only when the upstream install or either
build fails: a difference is news for the author, not a fault.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.requirements import Requirement

from .caching.check_cache import project_and_out
from .caching.compare import Varying, differences, without_versions
from .scratch_builds import Scratch, versions

SIDES = ("locked", "upstream")


def requirements(pyproject: dict) -> tuple[list[str], list[str]]:
    """What the upstream side installs, and the bare names of exact pins that it overrides:
    every default dependency group's requirements (the project's own reference left to the
    editable install) and the project's dependencies, whose ``==`` pins are lifted."""
    project = pyproject["project"]
    groups = pyproject["dependency-groups"]
    default = pyproject.get("tool", {}).get("uv", {}).get("default-groups", list(groups))
    wanted = [*project.get("dependencies", [])]
    for group in default:
        wanted += [r for r in groups[group] if Requirement(r).name != project["name"]]
    pinned = [Requirement(r) for r in wanted]
    pinned = [r for r in pinned if any(s.operator in ("==", "===") for s in r.specifier)]
    return wanted, sorted({r.name for r in pinned})


def moved(locked: dict[str, str], upstream: dict[str, str]) -> list[str]:
    """``name locked -> upstream`` for each distribution whose version differs, or is new."""
    names = sorted(set(locked) | set(upstream))
    pairs = [(name, locked.get(name, "none"), upstream.get(name, "none")) for name in names]
    return [f"{name} {a} -> {b}" for name, a, b in pairs if a != b]


def report(locked: Path, upstream: Path, varying: Varying | None = None) -> list[str]:
    """The outputs the upstream build changes (empty: the same), named by page and block; those
    ``varying`` names (the project's marks) masked, as ``make check-cache`` masks them."""
    return differences(locked, upstream, SIDES, without_versions, varying)


def _upstream(copy: Scratch, site: Path) -> list[str]:
    """The newest of everything installed in ``copy``'s environment, then its build into
    ``site``: what failed (empty: it built)."""
    wanted, pinned = requirements(
        tomllib.loads((copy.root / "pyproject.toml").read_text(encoding="utf-8"))
    )
    (copy.root / "upstream-requirements.txt").write_text("\n".join(wanted) + "\n", encoding="utf-8")
    (copy.root / "upstream-overrides.txt").write_text("\n".join(pinned) + "\n", encoding="utf-8")
    installed = copy.pip_install(
        *("--upgrade", "-r", "upstream-requirements.txt", "--override", "upstream-overrides.txt"),
        *("--editable", f"{copy.root}[charts]"),
    )
    if installed.returncode != 0:
        return [f"check-upstream: uv pip install failed:\n{installed.stderr[-4000:]}"]
    built = copy.build(site)
    if built.returncode != 0:
        return [f"check-upstream: the upstream build failed:\n{built.stderr[-4000:]}"]
    return []


def check(project: Path, out: Path) -> tuple[list[str], list[str], list[str]]:
    """Both builds into ``out``: what failed, the versions that would move, the outputs that
    would change."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    locked_site, upstream_site = (out / side for side in SIDES)
    with tempfile.TemporaryDirectory(prefix="check-upstream-") as scratch:
        copy = Scratch(project, Path(scratch) / "project", sys.executable)
        with ThreadPoolExecutor(max_workers=1) as pool:  # the install, then its build, meanwhile
            upstream = pool.submit(_upstream, copy, upstream_site)
            locked = copy.build(locked_site, python=sys.executable)
            failed = upstream.result()
        if locked.returncode != 0:
            failed.append(f"check-upstream: the locked build failed:\n{locked.stderr[-4000:]}")
        would_move = moved(versions(sys.executable), versions(copy.python))
    if failed:
        return failed, would_move, []
    return failed, would_move, report(locked_site, upstream_site, Varying.read(project / "docs"))


def main(argv: list[str] | None = None) -> int:
    project, out = project_and_out(__doc__, "check-upstream", argv)
    started = time.perf_counter()
    failed, would_move, changed = check(project, out)
    seconds = time.perf_counter() - started
    print("check-upstream: versions a refresh of the lock would move:")
    print("\n".join(f"  {line}" for line in would_move) or "  none")
    for line in failed or changed:
        print(line)
    if failed:
        verdict = "the upstream side could not be built"
    elif changed:
        verdict = f"{len(changed)} output(s) would change; both sites are in {out}"
    else:
        verdict = "same"
    print(f"check-upstream: {verdict} ({seconds:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
