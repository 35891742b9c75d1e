"""``site/`` is a plain folder at every instant (build_support/site_swap.py): the usual ways of
copying a folder copy the whole site, and a server given its path serves the newest build.

``site`` was a link into ``site.builds/``: ``cp -r``, ``cp -a``, ``rsync -a site dest`` and
``tar`` exited 0 and copied only the link, which pointed nowhere at the destination; a server
that resolved its folder once served an old build, then 404. The builds here are the stand-in
builder of ``test_site_swap.py``, driven by the very module ``make build`` runs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from testkit.serving import LOCAL_HOST, answering, free_port, serve
from testkit.stand_in_build import FILES, start


def built(root: Path, name: str) -> None:
    build = start(root, name)
    said = build.communicate()[1]
    assert build.returncode == 0, said


@pytest.fixture
def checkout(tmp_path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    for name in ("first", "second"):  # site/ replaced once: its build is not the first
        built(root, name)
    return root


def copied_whole(folder: Path) -> bool:
    """Whether ``folder`` is a real folder holding the whole build "second"."""
    files = sorted(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else []
    return len(files) == FILES and all(
        path.is_file() and not path.is_symlink() and path.read_text(encoding="utf-8") == "second"
        for path in files
    )


COPIES = {
    "cp -r": (["cp", "-r", "site", "{dest}/"], []),
    "cp -a": (["cp", "-a", "site", "{dest}"], []),
    "rsync -a": (["rsync", "-a", "site", "{dest}"], []),
    "tar": (["tar", "czf", "{dest}/site.tgz", "site"], ["tar", "xzf", "site.tgz"]),
    "zip": (["zip", "-qr", "{dest}/site.zip", "site"], ["unzip", "-q", "site.zip"]),
}


@pytest.mark.parametrize("how", COPIES)
def test_copying_site_copies_the_whole_site(checkout, tmp_path, how):
    copy, unpack = COPIES[how]
    if shutil.which(copy[0]) is None:
        pytest.skip(f"{copy[0]} is not installed")
    dest = tmp_path / "dest"
    dest.mkdir()
    command = [part.format(dest=dest) for part in copy]
    subprocess.run(command, cwd=checkout, check=True)
    if unpack:
        shutil.rmtree(checkout)  # what the archive holds, unpacked where the checkout is not
        subprocess.run(unpack, cwd=dest, check=True)
    assert copied_whole(dest / "site"), sorted(p.name for p in dest.rglob("*"))


def page(url: str) -> str | int:
    """The text at ``url``, or the HTTP status it answers with."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code


def test_a_server_given_the_path_of_site_serves_the_newest_whole_build(checkout):
    """A server that makes its folder's path canonical once, when it starts (as servers
    commonly do, to keep requests inside it), serves each new build as it is swapped in."""
    with serve(Path(checkout / "site").resolve()) as url:
        for name in ("third", "fourth", "fifth"):
            built(checkout, name)
            assert [page(f"{url}p{n}.html") for n in range(FILES)] == [name] * FILES


@contextmanager
def started_inside_site(checkout: Path, *command: str) -> Iterator[str]:
    """A file server started with ``site/`` as its working folder; yields its base URL."""
    port = free_port()
    server = subprocess.Popen(
        [*command, "-b", LOCAL_HOST, str(port)],
        cwd=checkout / "site",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not answering(port):
            assert server.poll() is None
            time.sleep(0.05)
        yield f"http://{LOCAL_HOST}:{port}/"
    finally:
        server.kill()
        server.wait()


def test_a_server_started_inside_site_serves_the_newest_whole_build(checkout):
    """``cd site && python -m http.server``: it notes its folder's path when it starts (as most
    servers do), and now that path is ``site/`` itself, not the build a link pointed at."""
    with started_inside_site(checkout, sys.executable, "-m", "http.server") as url:
        for name in ("third", "fourth", "fifth"):
            built(checkout, name)
            assert [page(f"{url}p{n}.html") for n in range(FILES)] == [name] * FILES


# A server that serves paths relative to its working folder, never naming the folder: it holds
# the folder, wherever it is moved (Python's file server given the directory ".").
RELATIVE_SERVER = """import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=".")
http.server.test(HandlerClass=handler, bind=sys.argv[2], port=int(sys.argv[3]))
"""


def test_a_server_serving_relative_to_its_working_folder_keeps_its_build_two_builds(checkout):
    """What README.md says of a server that holds the folder it started in rather than its
    path: it serves the build shown when it started through the next two builds (the folder is
    moved into site.builds/ and kept for its readers), and 404 once the third deleted it."""
    with started_inside_site(checkout, sys.executable, "-c", RELATIVE_SERVER) as url:
        for name, expected in (("third", "second"), ("fourth", "second"), ("fifth", 404)):
            built(checkout, name)
            assert page(f"{url}p0.html") == expected
