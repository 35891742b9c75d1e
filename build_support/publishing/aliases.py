"""Which aliases ``make publish`` gives the version it deploys: ``latest`` only where that
version is the newest on the gh-pages branch, by version order.

mike moves an alias to whichever version is deployed with it: re-publishing an older version
(a fix to v2026.07.20 after v2026.08.01) with ``latest`` would move it back to that version, and
leave the newest with no alias in ``versions.json``. Version order: PEP 440's (``packaging``),
after a leading ``v``, so ``v2026.08.01`` is newer than ``v2026.07.20`` and ``v2026.10.01``
newer than ``v2026.9.30``; a name that is not a version is never placed above one that is.

Before any build, the command refuses a working tree whose files the site is built from differ
from ``HEAD`` (``uncommitted.py``), naming them, unless given ``--allow-dirty`` (``make publish
ALLOW_DIRTY=1``).

    python -m build_support.publishing.aliases VERSION [--allow-dirty]  # mike deploy's arguments
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .uncommitted import refusal, uncommitted, uncommitted_note

LATEST = "latest"
BRANCH = "gh-pages"


def order(name: str) -> tuple[int, Version | str]:
    """A sort key: versions by PEP 440, after every name that is not one."""
    try:
        return (1, Version(name.removeprefix("v")))
    except InvalidVersion:
        return (0, name)


def on_branch(repo: Path, path: str, branch: str = BRANCH) -> str | None:
    """The text of ``path`` on ``branch`` (None: no branch, or no such file on it)."""
    shown = subprocess.run(
        ["git", "show", f"{branch}:{path}"],
        cwd=repo,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    return shown.stdout if shown.returncode == 0 else None


def published(repo: Path, branch: str = BRANCH) -> list[str]:
    """The versions on ``branch``'s ``versions.json`` (none: no branch, or no file yet)."""
    listing = on_branch(repo, "versions.json", branch)
    return [entry["version"] for entry in json.loads(listing)] if listing else []


def deploy_arguments(version: str, versions: list[str]) -> list[str]:
    """``mike deploy``'s arguments for ``version``: with ``latest`` where it is the newest."""
    newest = max([*versions, version], key=order)
    if order(version) >= order(newest):
        return ["--update-aliases", version, LATEST]
    return [version]


def main(argv: list[str], repo: Path) -> int:
    if not argv or argv[1:] not in ([], ["--allow-dirty"]):
        raise SystemExit("usage: python -m build_support.publishing.aliases V [--allow-dirty]")
    try:
        version, changed = argv[0], uncommitted(repo)
    except RuntimeError as error:  # not a git repository: mike could not deploy either
        print(f"make publish: {error}", file=sys.stderr)
        return 1
    if changed and argv[1:] != ["--allow-dirty"]:
        print(refusal(changed, version), file=sys.stderr)
        return 1
    if changed:
        print(f"make publish: deploying {version} {uncommitted_note(changed)}", file=sys.stderr)
    print(" ".join(deploy_arguments(version, published(repo))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], Path.cwd()))
