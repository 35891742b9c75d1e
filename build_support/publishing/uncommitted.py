"""What the site would be built from that is not in the commit mike names: ``make publish``
refuses to deploy it, naming the files, unless told to (``ALLOW_DIRTY=1``), and then the deploy's
commit message on gh-pages says so (``mike_builder.py``).

mike names the version it deploys after ``HEAD`` (``Deployed da88029 to v2026.08.01``) but builds
the working tree: an uncommitted edit was published under the hash of a commit without it.

What the site is built from: what a build reads (``BUILD_READS_*``; the tests' copies hold the
same, ``testkit/build.py``), and what ``make`` sets it up from. An untracked file there counts
(a new page is built); a file ``.gitignore`` ignores does not.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

BUILD_READS_DIRS = ("docs", "hooks", "examples", "build_support", "overrides")
BUILD_READS_FILES = ("mkdocs.yml", "uv.lock", "pyproject.toml", "hatch_build.py", "README.md")
"""What a build reads (README.md: the wheel's long description); the tests' copies hold it."""
BUILT_FROM = (
    *BUILD_READS_DIRS,
    *BUILD_READS_FILES,
    "Makefile",
    "package.json",
    "package-lock.json",
)
ALLOW = "ALLOW_DIRTY=1"


def uncommitted(repo: Path) -> list[str]:
    """The paths under ``BUILT_FROM`` that differ from ``HEAD`` (staged or not) or that git does
    not track, relative to ``repo``, sorted."""
    status = subprocess.run(
        ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *BUILT_FROM],
        cwd=repo,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    if status.returncode != 0:
        raise RuntimeError(f"git status in {repo}: {status.stderr.strip()}")
    paths, entries = set(), iter(status.stdout.split("\0"))
    for entry in entries:
        if not entry:
            continue
        paths.add(entry[3:])
        if entry[0] in "RC":  # a rename or copy: its source path follows, a change too
            paths.add(next(entries))
    return sorted(paths)


def refusal(paths: list[str], version: str) -> str:
    """What ``make publish`` says when it refuses to deploy ``paths``."""
    listed = "".join(f"\n  {path}" for path in paths)
    return (
        f"make publish: refusing to deploy {version}: these files differ from the last commit "
        f"(HEAD), which gh-pages would name as its source:{listed}\n"
        f"Commit them (or stash them), or publish them anyway: make publish {ALLOW}"
    )


def uncommitted_note(paths: list[str]) -> str:
    """The words the deploy's commit message adds for ``paths``."""
    return f"with uncommitted changes: {', '.join(paths)}"
