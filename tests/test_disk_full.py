"""A full disk is named in one line: the disk, the path and the step; ``site/`` is kept; no
traceback (build_support/disk_space.py, hooks/disk_full.py, site_swap.py, the wheel's build).

Each case runs in a mount namespace of its own (``unshare -m``) with a small tmpfs: the
project's folder for a build that fills it while it writes its pages, ``TMPDIR`` for the wheel's
build. Where the test cannot make one (not root, no ``unshare``), it is skipped, saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from build_support.build_command import BUILD_ENV
from testkit.project import ROOT
from testkit.small_site import ONE_PAGE_CONFIG, hook, page_with


def _can_mount() -> str:
    """Why a tmpfs cannot be mounted here; "" where it can."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
        text=True,
    )
    return "" if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr.strip()}"


pytestmark = pytest.mark.skipif(bool(why := _can_mount()), reason=why or "-")

# Inside the namespace: a tmpfs at argv[1], the project copied in, one build that fits, the
# disk then filled to 64 KiB of free space, a second build.
FILL_THEN_BUILD = """\
import os, shutil, subprocess, sys
project, source, log = sys.argv[1:4]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", project], check=True)
shutil.copytree(source, project, dirs_exist_ok=True, symlinks=True)
build = [sys.executable, "-m", "build_support.site_swap", "make build", "--",
         sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml"]
first = subprocess.run(build, cwd=project, capture_output=True, text=True)
open(log + ".first", "w").write(first.stdout + first.stderr)
free = os.statvfs(project)
with open(os.path.join(project, "filler"), "wb") as filler:
    filler.write(b"0" * (free.f_bavail * free.f_frsize - 64 * 1024))
with open(os.path.join(project, "docs", "index.md"), "a") as page:
    page.write("\\nMore.\\n")
second = subprocess.run(build, cwd=project, capture_output=True, text=True)
open(log, "w").write(second.stdout + second.stderr)
site = os.path.join(project, "site", "index.html")
open(log + ".site", "w").write(open(site).read() if os.path.exists(site) else "")
sys.exit(second.returncode)
"""


def build_in_namespace(tmp_path: Path, script: str, *arguments: str) -> subprocess.CompletedProcess:
    env = os.environ | BUILD_ENV | {"PYTHONPATH": str(ROOT)}
    command = ["unshare", "-m", sys.executable, "-c", script, *arguments]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)


def one_page_site(folder: Path, config: str) -> None:
    (folder / "docs").mkdir(parents=True)
    (folder / "mkdocs.yml").write_text(config)
    (folder / "docs" / "index.md").write_text(page_with("print('shown')"))


def test_a_full_disk_under_the_project_is_named_and_site_kept(tmp_path):
    source, project = tmp_path / "source", tmp_path / "project"
    project.mkdir()
    hooks = ONE_PAGE_CONFIG.replace("hooks:\n", f"hooks:\n  - {hook('disk_full')}\n")
    config = hooks.replace("cache_dir: !ENV COURSE_CACHE_DIR", f"cache_dir: {tmp_path / 'cache'}")
    one_page_site(source, config)
    log = tmp_path / "build.log"
    result = build_in_namespace(tmp_path, FILL_THEN_BUILD, str(project), str(source), str(log))
    assert "site/ is now this build" in Path(f"{log}.first").read_text(), result.stderr
    said = log.read_text()
    assert result.returncode == 1, said
    assert "Traceback" not in said and "Errno 28" not in said, said
    disk = f"no space left on the disk mounted at {project} (writing {project}/site.builds/"
    assert disk in said, said
    assert said.strip().splitlines()[-1].endswith("; site/ is left as it was"), said
    assert "shown" in Path(f"{log}.site").read_text()  # the first build, still whole


# Inside the namespace: the project copied onto a tmpfs filled to its last byte, then its first
# build: not a byte for the build lock's few.
FULL_BEFORE_THE_FIRST_BUILD = """\
import os, shutil, subprocess, sys
project, source = sys.argv[1:3]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", project], check=True)
shutil.copytree(source, project, dirs_exist_ok=True, symlinks=True)
with open(os.path.join(project, "filler"), "wb") as filler:
    try:
        while True:
            filler.write(b"0" * 4096)
            filler.flush()
    except OSError:
        pass
build = [sys.executable, "-m", "build_support.site_swap", "make build", "--",
         sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml"]
sys.exit(subprocess.run(build, cwd=project).returncode)
"""


def test_a_disk_full_before_the_first_build_is_named_at_the_lock(tmp_path):
    source, project = tmp_path / "source", tmp_path / "project"
    project.mkdir()
    one_page_site(source, ONE_PAGE_CONFIG)
    result = build_in_namespace(tmp_path, FULL_BEFORE_THE_FIRST_BUILD, str(project), str(source))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "Errno 28" not in result.stderr, result.stderr
    lock = project / "site.builds" / "lock"
    disk = f"no space left on the disk mounted at {project} (writing {lock})"
    assert f"{disk} at taking the build lock" in result.stderr, result.stderr


WHEEL_IN_FULL_TMPDIR = """\
import os, subprocess, sys, tempfile
tmp = sys.argv[1]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", tmp], check=True)
os.environ["TMPDIR"] = tmp
tempfile.tempdir = None
from mkdocs.exceptions import PluginError
from build_support.caching.cache import Cache
from build_support.caching.store import FileStore
from build_support.publishing.wheel_build import cached_wheel
cache = Cache("wheel", FileStore(__import__("pathlib").Path(sys.argv[2])))
try:
    cached_wheel(__import__("pathlib").Path(sys.argv[3]), cache, "k" * 64)
except PluginError as error:
    print(error)
    sys.exit(1)
except OSError as error:
    print(f"{type(error).__name__}: {error}")
    sys.exit(2)
"""


def test_a_full_tmpdir_under_the_wheel_build_is_named(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    result = build_in_namespace(
        tmp_path, WHEEL_IN_FULL_TMPDIR, str(tmp), str(tmp_path / "store"), str(ROOT)
    )
    said = result.stdout.strip()
    assert result.returncode == 1, said + result.stderr
    disk = f"wheel: no space left on the disk mounted at {tmp} (writing {tmp}/"
    assert said.startswith(disk), said
    assert said.endswith("at the wheel") and "\n" not in said, said
