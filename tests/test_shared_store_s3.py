"""One store shared by every machine that builds the course, on S3 (issue 51:
build_support/caching/shared_store.py, ``extra.build.shared_store``, ``$COURSE_SHARED_STORE``).

An S3 server of our own: moto's ``ThreadedMotoServer`` on 127.0.0.1 (a free port), s3fs pointed
at it by ``$COURSE_SHARED_STORE_OPTIONS`` (``client_kwargs.endpoint_url``). "Machine A" builds a
small site with a local store of its own and the shared store read-write; "machine B", with an
empty local store and the shared store read-only, reuses every output from it, writes nothing
there and shows the same pages. A shared entry edited after it was written (its output changed,
its checksum not) is a miss with one warning, and the block runs again; a store that cannot be
reached is a miss with one warning for the whole build. The whole course built on B from the
store equals A's (as ``make check-cache`` compares). A build that names no shared store imports
neither fsspec nor s3fs.
"""

from __future__ import annotations

import errno
import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from build_support.caching.compare import differences
from build_support.caching.shared_store import OPTIONS_ENV
from build_support.settings import SHARED_STORE_ENV, SHARED_STORE_MODE_ENV
from testkit.build import copy_env, copy_project, mkdocs_build
from testkit.s3_store import (
    AWS_ENV,
    BUCKET,
    SESSIONS_PAGE,
    build_env,
    endpoint_options,
    free_port,
    s3_server,
)
from testkit.small_site import DATA_FILE, EXECUTION_HOOK, build_on, checkout_elsewhere, from_env
from testkit.small_site import write_site as write_small_site

PAGE = (
    SESSIONS_PAGE
    + """
```python exec="on" id="reads"
print(open("docs/data.txt").read())
```
"""
)
BLOCKS = {"alone", "first", "second", "reads"}


@pytest.fixture(scope="module")
def s3() -> Iterator:
    """The S3 server, its bucket, and an s3fs file system of this process on it."""
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as fs:
        yield fs


def write_site(root: Path) -> Path:
    settings = from_env("shared_store", "shared_store_mode")
    return write_small_site(root, "shared", {"a.md": PAGE}, settings, files=DATA_FILE)


def build(site: Path, machine: str, url: str, mode: str, port: int):
    """A build of ``site`` on ``machine`` (its own local store), the shared store at ``url``."""
    result = build_on(site, machine, build_env(url, mode, port), timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def executed(stderr: str) -> dict[str, str]:
    """Each block of the build's log: ran or reused."""
    return dict(re.findall(r"Executed a\.md (\S+): (ran|reused)", stderr))


def shown(site: Path, machine: str) -> str:
    """The built page, whole."""
    return (site / f"site-{machine}" / "a" / "index.html").read_text()


def objects(fs, prefix: str) -> dict[str, bytes]:
    fs.invalidate_cache()
    return {path: fs.cat_file(path) for path in fs.find(f"{BUCKET}/{prefix}")}


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("cache warning:")]


def one_unreadable_warning(stderr: str, url: str, error: str) -> None:
    """The build warned once, that the store at ``url`` cannot be read (``error``: a regex)."""
    lines = warnings_of(stderr)
    assert len(lines) == 1, lines
    assert re.fullmatch(
        rf"cache warning: shared store {re.escape(url)}: cannot be read \({error}\): a miss, "
        "and not asked again this build",
        lines[0],
    ), lines


@pytest.fixture(scope="module")
def filled(s3, tmp_path_factory):
    """Machine A's build, the shared store read-write: it ran every block and stored them."""
    site = write_site(tmp_path_factory.mktemp("shared"))
    url = f"s3://{BUCKET}/course"
    result = build(site, "a", url, "read-write", s3.port)
    assert executed(result.stderr) == dict.fromkeys(BLOCKS, "ran")
    assert warnings_of(result.stderr) == []
    return site, url


def test_machine_b_reuses_every_output_from_the_shared_store_and_writes_none(s3, filled, tmp_path):
    site, url = filled
    stored = objects(s3, "course")
    assert any("/execution/" in path for path in stored), sorted(stored)
    assert not any("/pages/" in path or "/reach/" in path for path in stored)  # local caches

    other = checkout_elsewhere(site, tmp_path)  # at another path, its store empty
    result = build(other, "b", url, "read-only", s3.port)
    assert executed(result.stderr) == dict.fromkeys(BLOCKS, "reused"), result.stderr[-3000:]
    assert warnings_of(result.stderr) == []
    assert shown(other, "b") == shown(site, "a")
    assert "second sees 42" in shown(other, "b")
    assert objects(s3, "course") == stored  # read-only: nothing written, nothing changed
    # Each shared hit was copied into B's own store: a build of B without the store reuses them.
    local = build(other, "b", "", "read-write", s3.port)
    assert executed(local.stderr) == dict.fromkeys(BLOCKS, "reused")
    # What a block read is checked on B as on A: a changed file there runs that block alone.
    (other / "docs" / "data.txt").write_text("changed on B")
    changed = build(other, "b2", url, "read-only", s3.port)
    assert executed(changed.stderr) == dict.fromkeys(BLOCKS, "reused") | {"reads": "ran"}
    assert "changed on B" in shown(other, "b2")


def test_the_course_built_on_b_from_the_shared_store_equals_as_built_on_a(s3, tmp_path):
    """The whole course (its blocks, notebook, diagrams and wheel): B runs nothing, and its
    site equals A's as ``make check-cache`` compares them (timings aside)."""
    url, sites = f"s3://{BUCKET}/the-course", {}
    for machine, mode in (("a", "read-write"), ("b", "read-only")):
        project = copy_project(tmp_path / machine)  # each its own checkout and local store
        env = copy_env(project) | AWS_ENV
        env |= {SHARED_STORE_ENV: url, SHARED_STORE_MODE_ENV: mode}
        env[OPTIONS_ENV] = json.dumps(endpoint_options(s3.port))
        result = mkdocs_build(project / "mkdocs.yml", project / "site", fresh=False, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        assert warnings_of(result.stderr) == []
        outcomes = {
            o for _, _, o in re.findall(r"Executed (\S+) (\S+): (ran|reused)", result.stderr)
        }
        assert outcomes == {"ran" if machine == "a" else "reused"}, result.stderr[-3000:]
        sites[machine] = project / "site"
    caches = {path.split("/")[2] for path in objects(s3, "the-course")}
    assert caches == {"execution", "diagrams", "wheel"}
    assert differences(sites["a"], sites["b"]) == []


def test_an_edited_shared_entry_is_a_miss_with_a_warning_never_a_wrong_output(s3, filled):
    site, _ = filled
    url = f"s3://{BUCKET}/edited"
    s3.invalidate_cache()
    s3.copy(f"{BUCKET}/course", f"{BUCKET}/edited", recursive=True)
    edited = [p for p, data in objects(s3, "edited").items() if b"alone says 45" in data]
    assert len(edited) == 1, edited
    data = s3.cat_file(edited[0])
    s3.pipe_file(edited[0], data.replace(b"alone says 45", b"alone says 99"))
    stored = objects(s3, "edited")

    result = build(site, "c", url, "read-only", s3.port)
    assert executed(result.stderr) == dict.fromkeys(BLOCKS, "reused") | {"alone": "ran"}
    key = edited[0].rsplit("/", 1)[1]
    assert warnings_of(result.stderr) == [
        f"cache warning: shared store {url}: execution entry {key[:12]} unusable "
        "(checksum mismatch (truncated or edited)): a miss"
    ]
    assert shown(site, "c") == shown(site, "a")
    assert "alone says 99" not in shown(site, "c")
    assert objects(s3, "edited") == stored  # read-only: what ran here is not written there


def test_an_unreachable_shared_store_is_a_miss_with_one_warning(s3, filled):
    site, url = filled
    dead = free_port()  # nothing listens there
    result = build(site, "d", url, "read-write", dead)
    assert executed(result.stderr) == dict.fromkeys(BLOCKS, "ran")
    one_unreadable_warning(result.stderr, url, "EndpointConnectionError: .*")
    assert shown(site, "d") == shown(site, "a")


def test_a_bucket_that_does_not_exist_is_a_miss_with_one_warning(s3, filled):
    site, _ = filled
    url = "s3://no-such-bucket/course"
    result = build(site, "e", url, "read-write", s3.port)
    assert executed(result.stderr) == dict.fromkeys(BLOCKS, "ran")
    one_unreadable_warning(
        result.stderr, url, re.escape("FileNotFoundError: The specified bucket does not exist")
    )
    assert not s3.exists("no-such-bucket")  # and nothing made it


def test_an_endpoint_that_is_no_store_is_a_miss_with_one_warning(filled, tmp_path):
    """A web server answering 404 to everything (a wrong endpoint): not an empty store."""
    site, url = filled
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = build(site, "f", url, "read-only", server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
    assert executed(result.stderr) == dict.fromkeys(BLOCKS, "ran")
    one_unreadable_warning(result.stderr, url, "FileNotFoundError: .*")


def test_a_build_that_names_no_shared_store_imports_neither_fsspec_nor_s3fs(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sys\n\n\ndef on_post_build(config):\n"
        "    names = sorted(m for m in sys.modules if m.split('.')[0] in ('fsspec', 's3fs'))\n"
        "    print('imported:', names, file=sys.stderr)\n"
    )
    write_small_site(
        tmp_path, "plain", {"a.md": PAGE}, files=DATA_FILE, hooks=(EXECUTION_HOOK, probe)
    )
    env = {SHARED_STORE_ENV: "", OPTIONS_ENV: ""}
    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site", env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "imported: []" in result.stderr, result.stderr[-3000:]
    check = (
        "import sys; from build_support.caching import cache; "
        "from build_support.section import ROOT; "
        "cache.Cache.for_project('execution', ROOT); cache.ExecutionCache.for_project(ROOT); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fsspec', 's3fs')))"
    )
    plain_env = {k: v for k, v in os.environ.items() if k not in (SHARED_STORE_ENV, OPTIONS_ENV)}
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, env=plain_env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("scheme", ["file", "memory"])
def test_a_folder_or_memory_store_holds_the_local_stores_entries(tmp_path, scheme, capsys):
    from build_support.caching.cache import Cache
    from build_support.caching.shared_store import SharedStore, TieredStore
    from build_support.caching.store import FileStore

    url = f"file://{tmp_path}/shared" if scheme == "file" else f"memory://{tmp_path.name}"
    key, other = "ab" * 32, "cd" * 32
    a = Cache("execution", TieredStore(FileStore(tmp_path / "a"), SharedStore(url)))
    assert a.write(key, b"output", ran_on="a")
    shared = SharedStore(url, read_only=True)
    b = Cache("execution", TieredStore(FileStore(tmp_path / "b"), shared))
    found = b.read(key)
    assert (found.entry, found.meta) == (b"output", {"ran_on": "a"})
    assert FileStore(tmp_path / "b").get("execution", key).payload == b"output"  # copied here
    assert b.write(other, b"kept here only")
    assert shared.get("execution", other) is None  # read-only
    if scheme == "file":  # the same files a local store holds, nothing left beside them
        assert FileStore(tmp_path / "shared").get("execution", key).payload == b"output"
        assert [p.name for p in (tmp_path / "shared").rglob("*") if p.is_file()] == [key]
    # A local entry that fails its checksum is served from the shared store, and mended.
    path = FileStore(tmp_path / "b").path("execution", key)
    path.write_bytes(path.read_bytes().replace(b"output", b"outpux"))
    assert b.read(key).entry == b"output"
    assert FileStore(tmp_path / "b").get("execution", key).payload == b"output"
    assert "cache warning" not in capsys.readouterr().err


def test_the_shared_store_settings_are_checked():
    from mkdocs.exceptions import ConfigurationError

    from build_support import settings

    plain = settings.validated({}, None)
    assert (plain.shared_store, plain.shared_store_mode) == (None, "read-write")
    given = settings.validated({"shared_store": "s3://b/p", "shared_store_mode": "read-only"}, None)
    assert (given.shared_store, given.shared_store_mode) == ("s3://b/p", "read-only")
    with pytest.raises(ConfigurationError, match=r"shared_store: expected a store's URL"):
        settings.validated({"shared_store": "/just/a/folder"}, None)
    with pytest.raises(ConfigurationError, match=r"shared_store_mode.*COURSE_SHARED_STORE_MODE"):
        settings.validated({"shared_store_mode": "write-only"}, None)


def test_a_shared_store_that_refuses_writes_warns_once_and_keeps_entries_locally(
    tmp_path, capsys, monkeypatch
):
    """A full (or denied) store: one warning, and every entry kept in the local store."""
    from build_support.caching.cache import Cache
    from build_support.caching.shared_store import SharedStore, TieredStore
    from build_support.caching.store import FileStore

    url = f"memory://{tmp_path.name}-full"
    shared = SharedStore(url)
    fs, _ = shared._filesystem()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fs, "pipe_file", full)
    cache = Cache("execution", TieredStore(FileStore(tmp_path / "local"), shared))
    for key, output in (("ab" * 32, b"one"), ("cd" * 32, b"two")):
        assert cache.write(key, output)
        assert FileStore(tmp_path / "local").get("execution", key).payload == output
    said = [line for line in capsys.readouterr().err.splitlines() if "cache warning" in line]
    assert said == [
        f"cache warning: shared store {url}: cannot store entries (OSError: [Errno 28] No space "
        "left on device): kept in the local store only"
    ]
