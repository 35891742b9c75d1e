"""A cache shared between users (``COURSE_CACHE_DIR`` on a team's volume, CI's restored cache):
an entry's recorded reads never fail another user's build (build_support/execution/reads.py).

The reads under a user's own caches (``~/.cache``, ``$XDG_CACHE_HOME``, matplotlib's font list)
are not recorded: they once made every entry that drew a chart name the first user's
``~/.cache/matplotlib/fontlist-*.json``, which a colleague could not open. A recorded read that
another user cannot open is a miss with one ``cache warning``, checked as the unprivileged
``nobody``, as tests/test_store.py does.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from build_support.execution import reads
from testkit.project import ROOT


def test_reads_under_the_users_caches_are_not_recorded(tmp_path, monkeypatch):
    caches, config = tmp_path / "cache", tmp_path / "mplconfig"
    monkeypatch.setenv("XDG_CACHE_HOME", str(caches))
    monkeypatch.setenv("MPLCONFIGDIR", str(config))
    (caches / "matplotlib").mkdir(parents=True)
    config.mkdir()
    font_cache = caches / "matplotlib" / "fontlist-v390.json"
    other_cache = caches / "some-tool" / "data.bin"
    other_cache.parent.mkdir()
    font_list = config / "fontlist-v390.json"
    settings = config / "matplotlibrc"
    data = tmp_path / "docs" / "data.csv"
    data.parent.mkdir()
    for path in (font_cache, other_cache, font_list, settings, data):
        path.write_text(path.name)
    read = [str(path) for path in (font_cache, other_cache, font_list, settings, data)]
    assert sorted(reads.digests(read, [], tmp_path)) == ["docs/data.csv", "mplconfig/matplotlibrc"]
    # An entry recorded before: its cache reads are no longer inputs.
    assert reads.changed({str(font_cache): "0" * 64}, tmp_path) == []


_CHECK_AS_NOBODY = """
import os, sys
from pathlib import Path
import build_support.caching.cache  # the "cache warning:" lines
from build_support.execution import reads
os.setgid(65534)
os.setuid(65534)  # from here on, the reads are another user's
for reason in reads.changed({sys.argv[1]: sys.argv[2]}, Path("/")):
    print(reason)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user (nobody) needs root")
def test_a_recorded_read_another_user_cannot_open_is_a_miss_with_one_warning():
    shared = Path(tempfile.mkdtemp(prefix="shared-reads-"))  # /tmp: reachable by nobody
    try:
        shared.chmod(0o755)
        private = shared / "fontlist-like.dat"  # not a cache's name: it is recorded
        private.write_text("the first user's file")
        private.chmod(0o600)
        digest = hashlib.sha256(private.read_bytes()).hexdigest()
        result = subprocess.run(
            [sys.executable, "-c", _CHECK_AS_NOBODY, str(private), digest],
            cwd=ROOT,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
        )
    finally:
        subprocess.run(["rm", "-rf", str(shared)], check=True)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout
        == f"`{private}` cannot be read here (Permission denied) (read by the block)\n"
    )
    warnings = [line for line in result.stderr.splitlines() if line.startswith("cache warning:")]
    assert len(warnings) == 1 and str(private) in warnings[0], result.stderr
    assert "Traceback" not in result.stderr


def test_builds_sharing_a_store_never_prune_it_at_once(tmp_path):
    import fcntl

    from build_support.caching.store import PRUNE_LOCK, Entry, FileStore

    store = FileStore(tmp_path)
    for n in range(4):
        store.put("execution", f"key{n:08d}", Entry(b"x" * 1000))
    other = os.open(tmp_path / PRUNE_LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(other, fcntl.LOCK_EX)  # another build is pruning
    try:
        assert store.prune(limit_bytes=1000) == 0
        assert len(store.entries()) == 4
    finally:
        os.close(other)
    assert store.prune(limit_bytes=1000) == 4  # each entry is past 3/4 of the bound alone
    assert store.entries() == []
