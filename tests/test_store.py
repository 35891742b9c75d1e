"""The one store behind every cache (build_support/caching/store.py, cache.py): a fault is
a miss with one line.

Each fault the issue lists is made here for real where it can be (an entry of the wrong shape, a
folder in its place, an entry another user cannot read: a read as the unprivileged ``nobody``)
and, where root cannot make it (a read-only or full disk), raised by the file-system call that
would meet it. One strict build with a store it cannot use shows that no fault fails a build.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from build_support.build_command import CACHE_DIR_ENV
from build_support.caching import cache as cache_module
from build_support.caching import store as store_module
from build_support.caching.cache import Cache, ExecutionCache, key_of
from build_support.caching.store import Entry, FileStore
from testkit.build import mkdocs_build
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page

KEY = key_of("an output")


@pytest.fixture
def files(tmp_path) -> FileStore:
    return FileStore(tmp_path / "store")


@pytest.fixture
def lines(capsys):
    """The lines the store printed since the test began (it prints to stderr)."""

    def printed() -> list[str]:
        return capsys.readouterr().err.splitlines()

    printed()
    return printed


def test_an_entry_reads_back_as_written_checksummed(files, lines):
    cache = Cache("diagrams", files)
    assert cache.read_text(KEY) is None and lines() == []  # a plain miss says nothing
    assert cache.write_text(KEY, "<svg/>", drawn_by="test")
    found = cache.read(KEY, cache_module.as_text)
    assert (found.entry, found.meta, found.fault) == ("<svg/>", {"drawn_by": "test"}, None)
    path = files.path("diagrams", KEY)
    header = json.loads(path.read_bytes().split(b"\n", 1)[0])
    assert header["sha256"] == hashlib.sha256(b"<svg/>").hexdigest()
    path.write_bytes(path.read_bytes().replace(b"<svg/>", b"<svg!>"))  # edited on disk
    assert cache.read_text(KEY) is None
    assert lines() == [
        f"cache warning: diagrams: entry {KEY[:12]} unusable "
        "(checksum mismatch (truncated or edited)): a miss"
    ]


@pytest.mark.parametrize(
    ("make_fault", "cause"),
    [
        (lambda files: files.put("trim", KEY, Entry(b"\xff\xfe not utf-8")), "not UTF-8 text"),
        (lambda files: _raw(files, b"\xff\xfe\n"), "no readable header"),
        (lambda files: files.path("trim", KEY).mkdir(parents=True), "a folder where an entry"),
        (lambda files: files.put("trim", KEY, Entry(b"[1, 2]")), "a JSON list where a mapping"),
        (lambda files: files.put("trim", KEY, Entry(b"{truncated")), "not JSON"),
    ],
    ids=["non-utf8", "garbled-header", "folder", "non-mapping", "not-json"],
)
def test_each_wrong_shaped_entry_is_a_miss_with_one_line(files, lines, make_fault, cause):
    make_fault(files)
    found = Cache("trim", files).read_mapping(KEY)
    assert found.entry is None and cause in found.fault
    [line] = lines()
    assert line.startswith(f"cache warning: trim: entry {KEY[:12]} unusable (") and cause in line


def _raw(files: FileStore, content: bytes) -> None:
    path = files.path("trim", KEY)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)


def test_the_execution_cache_misses_on_a_fault_and_says_corrupt(tmp_path, lines):
    cache = ExecutionCache(tmp_path)
    FileStore(tmp_path).put("execution", KEY, Entry(b'["a list"]'))  # valid checksum, no mapping
    lookup = cache.load(KEY)
    assert lookup.entry is None and lookup.fault is not None
    cache.store(KEY, {"blocks": ["out"]})
    assert cache.load(KEY).entry == {"blocks": ["out"], "key": KEY}
    other = key_of("another output")  # an entry copied under another key is not served
    FileStore(tmp_path).put("execution", other, FileStore(tmp_path).get("execution", KEY))
    assert cache.load(other).fault is not None
    assert len(lines()) == 2


@pytest.fixture(params=[0o022, 0o027], ids=["umask 022", "umask 027"])
def process_umask(request):
    """The process's umask set for the test (022, then 027), and restored after it."""
    before = os.umask(request.param)
    yield request.param
    os.umask(before)


def test_entries_get_the_mode_a_plain_file_gets_group_readable_not_0600(tmp_path, process_umask):
    assert store_module.read_umask() == process_umask
    files = FileStore(tmp_path / "store")  # made under the process's umask
    Cache("wheel", files).write(KEY, b"PK\x03\x04")
    entry = files.path("wheel", KEY)
    plain = entry.with_name("plain")
    plain.write_bytes(b"")  # the mode a plain open() gives
    mode = stat.S_IMODE(entry.stat().st_mode)
    assert mode == stat.S_IMODE(plain.stat().st_mode) == 0o666 & ~process_umask
    assert mode & stat.S_IRGRP


_READ_AS_NOBODY = """
import os, sys
from pathlib import Path
from build_support.caching.cache import Cache
from build_support.caching.store import FileStore
os.setgid(65534)
os.setuid(65534)  # from here on, the reads are another user's
cache = Cache("execution", FileStore(Path(sys.argv[1])))
for key in sys.argv[2:]:
    print(cache.read_text(key))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user needs root")
def test_an_entry_another_user_cannot_read_is_a_miss_and_ours_can_be_read():
    shared = Path(tempfile.mkdtemp(prefix="shared-store-"))  # /tmp: reachable by nobody
    try:
        shared.chmod(0o755)
        cache = Cache("execution", FileStore(shared))
        ours, private = key_of("ours"), key_of("private")
        cache.write_text(ours, "written by this store")
        cache.write_text(private, "written 0600, as the store once did")
        FileStore(shared).path("execution", private).chmod(0o600)
        result = subprocess.run(
            [sys.executable, "-c", _READ_AS_NOBODY, str(shared), ours, private],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        subprocess.run(["rm", "-rf", str(shared)], check=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["written by this store", "None"]
    assert result.stderr.splitlines() == [
        f"cache warning: execution: entry {private[:12]} unusable (permission denied): a miss"
    ]


@pytest.mark.parametrize(
    ("call", "code", "cause"),
    [
        ("mkstemp", errno.EROFS, "read-only file system"),
        ("replace", errno.ENOSPC, "disk full"),
        ("mkstemp", errno.EACCES, "permission denied"),
    ],
)
def test_a_disk_that_cannot_be_written_is_one_line_and_the_old_entry_stays(
    files, lines, monkeypatch, call, code, cause
):
    cache = Cache("diagrams", files)
    cache.write_text(KEY, "<svg>old</svg>")

    def fails(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    target = store_module.tempfile if call == "mkstemp" else store_module.os
    monkeypatch.setattr(target, call, fails)
    assert not cache.write_text(KEY, "<svg>new</svg>")
    assert not cache.write_text(key_of("another"), "<svg>another</svg>")  # same cause: no line
    monkeypatch.undo()
    assert lines() == [
        f"cache warning: diagrams: cannot store entries ({cause}): the build goes on"
    ]
    assert cache.read_text(KEY) == "<svg>old</svg>"  # never half of the new one
    assert [path.name for path, _ in files.entries()] == [KEY]  # no temporary file left


def test_pruning_keeps_the_store_bounded_and_the_recently_used(files, tmp_path):
    keys = [key_of(str(n)) for n in range(10)]
    for age, key in enumerate(keys):
        files.put("execution", key, Entry(b"x" * 1000))
        when = 1_000_000 + age
        os.utime(files.path("execution", key), (when, when))
    files.get("execution", keys[0])  # a hit: the oldest entry becomes the most recently used
    stale_temp = files.path("execution", keys[1]).with_name(".tmp-left-by-a-crash")
    stale_temp.write_bytes(b"half")
    os.utime(stale_temp, (1, 1))
    foreign = [files.root / "reader-venv" / "ab" / "activate_this", files.root / "notes.txt"]
    for path in foreign:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("not the store's")
    assert files.prune(limit_bytes=20_000) == 0  # under the bound: nothing goes
    assert not stale_temp.exists()  # but a temporary file a dead writer left does
    size = sum(stat.st_size for _, stat in files.entries())
    removed = files.prune(limit_bytes=size - 1)
    assert sum(stat.st_size for _, stat in files.entries()) <= (size - 1) * store_module.PRUNE_TO
    kept = {path.name for path, _ in files.entries()}
    assert removed == 10 - len(kept) and keys[0] in kept and keys[9] in kept
    assert keys[1] not in kept  # the least recently used went first
    assert all(path.read_text() == "not the store's" for path in foreign)  # never touched


def test_pruning_a_store_that_cannot_be_changed_leaves_it_and_goes_on(files, monkeypatch):
    for n in range(3):
        files.put("diagrams", key_of(str(n)), Entry(b"x" * 1000))
    stale_temp = files.path("diagrams", key_of("0")).with_name(".tmp-old")
    stale_temp.write_bytes(b"half")
    os.utime(stale_temp, (1, 1))

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Path, "unlink", read_only)
    assert files.prune(limit_bytes=100) == 0  # nothing could go, and the build is not failed
    monkeypatch.undo()
    assert len(files.entries()) == 4


def _stored_bytes(files: FileStore) -> int:
    """The entries' bytes, counted here (not by ``FileStore.entries``, which ``walks`` counts)."""
    return sum(path.stat().st_size for path in files.root.glob("*/??/*"))


@pytest.fixture
def walks(files, monkeypatch) -> list[int]:
    """How many times ``prune`` walked every entry of ``files`` (``FileStore.entries``); folder
    mtimes trusted at once (a test writes within the racy interval)."""
    walked: list[int] = []
    every_entry = FileStore.entries

    def counted(self, cache="*"):
        walked.append(1)
        return every_entry(self, cache)

    monkeypatch.setattr(FileStore, "entries", counted)
    monkeypatch.setattr(store_module, "RACY_S", 0.0)
    return walked


def test_a_prune_that_cannot_pass_the_bound_walks_no_entry_and_one_that_does_prunes(files, walks):
    """Issue 50: pruning in proportion to what changed. The store's size is kept per folder in
    ``.usage.json``; a prune counts again only the folders whose mtime moved, and walks every
    entry only when the total may pass the bound."""
    keys = [key_of(str(n)) for n in range(40)]
    for key in keys[:30]:
        files.put("execution", key, Entry(b"x" * 1000))
    assert files.prune(limit_bytes=100_000) == 0 and len(walks) == 1  # no record yet: a walk
    assert (files.root / store_module.USAGE).exists()

    counted = files.folders_counted
    assert files.prune(limit_bytes=100_000) == 0  # nothing written since: no entry walked,
    assert len(walks) == 1 and files.folders_counted == counted  # no folder counted again

    files.put("diagrams", keys[30], Entry(b"y" * 1000))  # a build that stores one entry
    assert files.prune(limit_bytes=100_000) == 0
    assert len(walks) == 1 and files.folders_counted == counted + 1  # its folder, only

    for key in keys[31:]:  # entries that take the store past the bound
        files.put("execution", key, Entry(b"z" * 1000))
    assert _stored_bytes(files) > 35_000
    removed = files.prune(limit_bytes=35_000)
    assert len(walks) == 2 and removed > 0  # passed: every entry walked, the least used pruned
    assert _stored_bytes(files) <= 35_000 * store_module.PRUNE_TO
    assert files.prune(limit_bytes=35_000) == 0 and len(walks) == 2  # counted after pruning:
    assert files.prune(limit_bytes=35_000) == 0 and len(walks) == 2  # no walk again


def test_a_replaced_entry_or_a_lost_record_is_counted_and_a_walk_comes_every_so_often(
    files, walks, monkeypatch
):
    key = key_of("one")
    files.put("execution", key, Entry(b"x" * 1000))
    assert files.prune(limit_bytes=5_000) == 0 and len(walks) == 1
    files.put("execution", key, Entry(b"x" * 9000))  # the same key, larger: counted again
    assert files.prune(limit_bytes=5_000) == 1 and len(walks) == 2
    (files.root / store_module.USAGE).write_text("not JSON")  # a record that cannot be read
    assert files.prune(limit_bytes=5_000) == 0 and len(walks) == 3  # costs a walk, no more
    monkeypatch.setattr(store_module, "WALK_EVERY", 3)
    for _ in range(2):
        files.prune(limit_bytes=5_000)
    assert len(walks) == 3
    files.prune(limit_bytes=5_000)  # the WALK_EVERY-th: stale temporary files go then
    assert len(walks) == 4


def test_make_clean_empties_the_store_wherever_it_is(tmp_path):
    elsewhere = tmp_path / "shared-cache"
    FileStore(elsewhere).put("wheel", KEY, Entry(b"PK"))
    (elsewhere / "someone-elses").write_text("kept")
    env = {**os.environ, CACHE_DIR_ENV: str(elsewhere)}
    result = subprocess.run(
        [sys.executable, "-m", "build_support.caching.store", "clear"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["someone-elses"]
    dry_run = subprocess.run(["make", "-n", "clean"], cwd=ROOT, capture_output=True, text=True)
    assert "-m build_support.caching.store clear" in dry_run.stdout


def test_a_key_the_store_cannot_name_a_file_by_is_refused(files):
    with pytest.raises(ValueError, match="a store key is 8-128 letters"):
        files.path("execution", "../../etc/passwd")


def test_the_fault_line_is_outside_the_logger_tree_that_strict_counts():
    assert cache_module.log.name == "course.store"
    assert logging.getLogger("mkdocs") not in _ancestors(cache_module.log)


def _ancestors(logger: logging.Logger) -> list[logging.Logger]:
    found = []
    while logger.parent is not None:
        logger = logger.parent
        found.append(logger)
    return found


def test_a_strict_build_with_a_store_it_cannot_use_succeeds_and_says_why(tmp_path):
    """Every read and write meets a file where the store's folder should be: the build runs
    everything, passes --strict, shows the same page, and each cache says what happened."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the store's root should be")
    site = tmp_path / "site"
    result = mkdocs_build(ROOT / "mkdocs.yml", site, fresh=False, cache_dir=blocked / "store")
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("cache warning:")]
    for cache in ("execution", "diagrams", "notebook-trim", "wheel"):
        assert (
            f"cache warning: {cache}: cannot store entries (a file where a folder should be): "
            "the build goes on" in warnings
        )
    assert "Aborted" not in result.stderr and "WARNING -" not in result.stderr  # mkdocs' own
    assert "scalar multiply count = 12" in page(site, SECTION_PAGE).get_text()


def test_the_tests_builds_each_start_from_an_empty_store_of_their_own(tmp_path, monkeypatch):
    from testkit import author, build

    seen = []
    monkeypatch.setattr(build.subprocess, "run", lambda *a, env, **k: seen.append(env))
    monkeypatch.setenv(CACHE_DIR_ENV, str(ROOT / ".cache"))  # an author's own setting
    mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert seen[0][CACHE_DIR_ENV] == str(tmp_path / "site-cache")
    assert not (tmp_path / "site-cache").exists()  # empty: nothing drawn, trimmed or built yet
    assert build.copy_env(tmp_path)[CACHE_DIR_ENV] == str(tmp_path / ".cache")
    assert CACHE_DIR_ENV not in author.author_env()  # make in a copy: the copy's own
