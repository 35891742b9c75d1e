"""Whether this user can write the folders make keeps in the checkout, said in one line where it
cannot: a ``sudo make build`` in a user's checkout makes ``.venv`` again as root, for root's
Python, and the owner's next make would otherwise try ``rm -rf .venv`` and print one "Permission
denied" per file, with no advice. The Makefile asks before any rule runs (``make_vars.py``);
standard library only, since it runs before ``.venv`` exists.

    python3 -m build_support.writable .venv node_modules .cache site.builds
    # prints nothing, or: .venv belongs to root (made by another user): remove it with
    # `sudo rm -rf .venv` and run make again
"""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

REMADE = {".venv"}
"""What make makes again from its lock files, and so removing is the fix: the others (the
store, the npm packages) are kept, taken back with chown."""


def user_name(uid: int) -> str:
    """The name of user ``uid`` (its number where the system has none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def problem(folder: Path) -> str | None:
    """Why this user cannot write ``folder`` or an entry directly in it (what ``rm -rf`` and the
    tools meet first), with the fix; None where it can, or ``folder`` does not exist. Links in it
    are not followed: ``.venv/bin/python`` links to a Python no user but root writes."""
    if not folder.exists():
        return None
    entries = [folder]
    if folder.is_dir():
        entries += [entry for entry in folder.iterdir() if not entry.is_symlink()]
    stuck = next((entry for entry in entries if not os.access(entry, os.W_OK)), None)
    if stuck is None:
        return None
    owner, me = stuck.stat().st_uid, os.geteuid()
    if owner == me:
        return f"{stuck} is read-only: run `chmod -R u+w {folder}` and then make again"
    it = "it" if stuck == folder else folder
    if folder.name in REMADE:
        fix = f"remove {it} with `sudo rm -rf {folder}`"
    else:
        fix = f"take {it} back with `sudo chown -R {user_name(me)} {folder}`"
    return f"{stuck} belongs to {user_name(owner)} (made by another user): {fix} and run make again"


def main(folders: list[str]) -> int:
    for folder in folders:
        said = problem(Path(folder))
        if said:
            print(said)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
