"""A ``.venv`` (or another folder make keeps) that another user made, as ``sudo make build`` in
a user's checkout makes it again as root: the owner's next make says so in one line, with the
owner and the fix, and removes nothing (build_support/writable.py, asked by the Makefile).

The real case needs two users: where the tests run as root, the checkout is given to ``nobody``
and root keeps the ``.venv``, then make runs as ``nobody``."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from build_support import writable
from testkit.project import ROOT

NOBODY = 65534


@pytest.fixture
def shared_tmp():
    """A folder another user can reach (pytest's own is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="course-other-user-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


AS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root (to give a checkout to another user and run make as them) and setpriv",
)


def as_nobody(command: list[str], cwd: Path) -> str:
    """What ``command`` printed, run as user nobody (its own HOME, the system's PATH)."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(cwd.parent), "LANG": "C.UTF-8"}
    as_owner = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    result = subprocess.run([*as_owner, *command], cwd=cwd, env=env, capture_output=True, text=True)
    said = (result.stdout + result.stderr).strip()
    if "No such file" in said and "python" in said:
        pytest.skip(f"no Python that nobody can run: {said[-300:]}")
    assert result.returncode != 0, said
    return said


@AS_ROOT
def test_make_says_whose_venv_it_cannot_remove_in_one_line(shared_tmp):
    checkout = shared_tmp / "checkout"
    checkout.mkdir()
    for name in ("Makefile", "pyproject.toml", "uv.lock", "hatch_build.py", "package.json"):
        shutil.copy2(ROOT / name, checkout / name)
    shutil.copytree(ROOT / "build_support", checkout / "build_support")
    venv = checkout / ".venv" / "lib" / "python3.99" / "site-packages"
    venv.mkdir(parents=True)
    (venv / "module.py").write_text("", encoding="utf-8")
    (checkout / ".venv" / ".made-with-python3.99").touch()  # made by root, for root's Python
    for path in [checkout, *checkout.rglob("*")]:
        if ".venv" not in path.relative_to(checkout).parts:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)

    said = as_nobody(["make", "setup"], checkout)
    assert "Permission denied" not in said, said[-3000:]
    assert said.count("\n") == 0, said[-3000:]
    assert ".venv belongs to root (made by another user)" in said, said
    assert "`sudo rm -rf .venv`" in said, said
    assert (venv / "module.py").is_file()  # nothing removed


def test_a_folder_of_ones_own_or_none_is_no_problem(tmp_path):
    assert writable.problem(tmp_path / "absent") is None
    (tmp_path / "own" / "lib").mkdir(parents=True)
    assert writable.problem(tmp_path / "own") is None


@AS_ROOT
def test_a_cache_another_user_made_is_given_back_not_removed(shared_tmp):
    checkout = shared_tmp / "checkout"
    shutil.copytree(ROOT / "build_support", checkout / "build_support")
    (checkout / ".cache" / "store").mkdir(parents=True)  # root's
    os.chown(checkout, NOBODY, NOBODY)
    said = as_nobody(["python3", "-m", "build_support.writable", ".venv", ".cache"], checkout)
    assert said == (
        ".cache belongs to root (made by another user): take it back with "
        "`sudo chown -R nobody .cache` and run make again"
    )


@AS_ROOT
def test_a_read_only_folder_of_ones_own_is_said_with_its_fix(shared_tmp):
    checkout = shared_tmp / "checkout"
    shutil.copytree(ROOT / "build_support", checkout / "build_support")
    (checkout / ".cache" / "store").mkdir(parents=True)
    for path in [checkout, *checkout.rglob("*")]:
        os.chown(path, NOBODY, NOBODY)
    (checkout / ".cache" / "store").chmod(0o555)
    said = as_nobody(["python3", "-m", "build_support.writable", ".cache"], checkout)
    assert said == ".cache/store is read-only: run `chmod -R u+w .cache` and then make again"
