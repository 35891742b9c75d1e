"""The state of the gh-pages branch around the versions: the ``latest`` alias and the root's
redirect (mike's default version), as ``make publish`` leaves them after its deploy, and
``make unpublish VERSION=...``, which removes a version.

- **latest** is on the newest version (``aliases.order``). A deploy gives it to the version it
  deploys only where that one is the newest (``aliases.py``); where no version holds it (its
  version was removed), it goes to the newest left.
- **The root's redirect** (``index.html``, written by ``mike set-default``) is an author's
  choice: it is set to ``latest`` only where there is none yet, or where it sends readers to a
  folder that is gone. An author's ``mike set-default v2026.07.20`` survives every publish.
- **Removing a version** with mike alone (``mike delete``) takes its aliases with it and leaves
  the root redirecting to a folder that is gone (``latest/``); ``make unpublish`` deletes it,
  then settles both as above. Removing the only version empties the branch, root page included.

mike's own commands do the work, in this process (the site's ``mkdocs.yml`` configures no mike
plugin: the defaults, gh-pages and symbolic-link aliases, are the deploy's too).

    python -m build_support.publishing.gh_pages settle             # after make publish's deploy
    python -m build_support.publishing.gh_pages unpublish VERSION  # make unpublish
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from mike import commands

from .aliases import BRANCH, LATEST, on_branch, order

ROOT_PAGE = "index.html"
_REDIRECT = re.compile(r'<a href="([^"]*)">')  # mike's redirect template's visible link


def listing(repo: Path) -> dict[str, list[str]]:
    """Each version on gh-pages with its aliases (none: no branch, or no version yet)."""
    text = on_branch(repo, "versions.json")
    return {entry["version"]: entry["aliases"] for entry in json.loads(text)} if text else {}


def default_of(repo: Path) -> str | None:
    """Where the root sends a reader: the folder its redirect names (``latest``,
    ``v2026.07.20``); ``index.html`` where the root page is a page of its own, not mike's
    redirect; None where there is no root page."""
    text = on_branch(repo, ROOT_PAGE)
    if text is None:
        return None
    link = _REDIRECT.search(text)
    return link[1].strip("/") if link else ROOT_PAGE


def settle(repo: Path, said_by: str = "make publish") -> list[str]:
    """Give ``latest`` to the newest version where none holds it, and the root's redirect to
    ``latest`` where there is none or it names a folder that is gone; say what was done."""
    versions = listing(repo)
    if not versions:
        return []
    lines = []
    if not any(LATEST in aliases for aliases in versions.values()):
        newest = max(versions, key=order)
        commands.alias(None, newest, [LATEST], update_aliases=True, branch=BRANCH)
        lines.append(f"{said_by}: {LATEST} is now {newest}, the newest version left")
    folders = {*versions, *(alias for aliases in versions.values() for alias in aliases)}
    current = default_of(repo)
    if current == LATEST:
        return lines
    if current is None:
        commands.set_default(LATEST, branch=BRANCH)
        lines.append(f"{said_by}: the root now redirects to {LATEST}/ (no default version was set)")
    elif current != ROOT_PAGE and current not in folders:
        commands.set_default(LATEST, branch=BRANCH)
        lines.append(f"{said_by}: the root redirected to {current}/, which is gone; now {LATEST}/")
    else:
        kept = "its own page" if current == ROOT_PAGE else f"its default, {current}"
        lines.append(
            f"{said_by}: the root keeps {kept} (an author's; `mike set-default {LATEST}` makes "
            f"it follow {LATEST} again)"
        )
    return lines


def unpublish(repo: Path, version: str) -> list[str]:
    """Remove ``version`` from gh-pages, then settle ``latest`` and the root; ``ValueError``
    where ``version`` is not a version there."""
    versions = listing(repo)
    if version not in versions:
        held = [name for name, aliases in versions.items() if version in aliases]
        named = f"an alias of {held[0]}" if held else "not on gh-pages"
        known = ", ".join(sorted(versions, key=order, reverse=True)) or "none"
        raise ValueError(f"make unpublish: {version} is {named}; the versions: {known}")
    if len(versions) == 1:
        commands.delete(all=True, branch=BRANCH)
        return [f"make unpublish: removed {version}, the only version: gh-pages is now empty"]
    commands.delete([version], branch=BRANCH)
    return [f"make unpublish: removed {version}", *settle(repo, "make unpublish")]


def main(argv: list[str], repo: Path) -> int:
    try:
        if argv == ["settle"]:
            lines = settle(repo)
        elif len(argv) == 2 and argv[0] == "unpublish":
            lines = unpublish(repo, argv[1])
        else:
            raise SystemExit("usage: python -m build_support.publishing.gh_pages settle|unpublish")
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], Path.cwd()))
