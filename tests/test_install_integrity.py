"""Install lines that prove the wheel: every line the site prints to install the package (the
install boxes' CPU and GPU tabs, the notebook page's text, the downloaded notebook's first cell)
carries the served wheel's ``#sha256=``, which pip and uv check: a wheel served under the same
name with other bytes is refused. The install box says which Python the wheel needs, read from
the wheel's own ``Requires-Python``.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import nbformat
import pytest

from build_support.publishing.wheel_build import supported_pythons
from testkit.hooks import load_hook
from testkit.project import SECTION_PAGE
from testkit.serving import serve
from testkit.site import INSTALL, install_box_lines, page, served_wheel

UV = str(Path(sys.executable).with_name("uv"))
NOTEBOOK = "notebooks/p5-9-1-practice-in-jax"
BOX_PAGES = ("", SECTION_PAGE)
wheel_hook = load_hook("wheel")
_HASHED_URL = re.compile(r"https?://\S+?\.whl(?:#sha256=[0-9a-f]*)?")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def printed_wheel_urls(text: str) -> list[str]:
    """Every address of a wheel in ``text``, with its fragment where it has one."""
    return _HASHED_URL.findall(text)


def test_every_printed_install_line_carries_the_served_wheels_sha256(built_site):
    wheel = served_wheel(built_site)
    hashed = f"/{wheel.name}#sha256={sha256(wheel)}"
    lines = [line for name in BOX_PAGES for line in install_box_lines(built_site, name).values()]
    notebook_page = page(built_site, NOTEBOOK)
    lines += [c.get_text() for c in notebook_page.select("code") if INSTALL in c.get_text()]
    assert len(lines) == 6, lines  # two boxes and the notebook's text: CPU and GPU lines each
    assert all(line.count(hashed) == 1 for line in lines), lines
    # Every address of the wheel the pages and the notebook's downloads print carries it too.
    folder = built_site / NOTEBOOK
    downloads = [folder / f"{Path(NOTEBOOK).name}{suffix}" for suffix in (".ipynb", ".py")]
    texts = [page(built_site, name).get_text() for name in (*BOX_PAGES, NOTEBOOK)]
    texts += [path.read_text(encoding="utf-8") for path in downloads]
    urls = [url for text in texts for url in printed_wheel_urls(text)]
    assert urls and all(url.endswith(hashed) for url in urls), urls
    # The notebook's first code cell installs exactly that: the CPU and the GPU requirement.
    first = next(c.source for c in nbformat.read(downloads[0], 4).cells if c.cell_type == "code")
    assert f'PACKAGE = "{lines[0].removeprefix(INSTALL)}"' in first, first
    assert f"GPU_PACKAGE = {shlex.split(lines[1])[4]!r}".replace("'", '"') in first, first


def test_no_file_of_the_site_keeps_a_token_and_search_indexes_the_values(built_site):
    """The SHA-256 and the Pythons stood as tokens in the pages until the wheel was built."""
    tokens = wheel_hook.AFTER_BUILD.values()
    texts = {
        path: path.read_text(errors="replace", encoding="utf-8")
        for path in built_site.rglob("*")
        if path.suffix in {".html", ".json", ".ipynb", ".py", ".xml", ".txt"}
    }
    left = [f"{path}: {token}" for path, text in texts.items() for token in tokens if token in text]
    assert texts and not left, left
    index = (built_site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert sha256(served_wheel(built_site)) in index


def test_the_install_box_says_which_python_from_the_wheels_metadata(built_site):
    with zipfile.ZipFile(served_wheel(built_site)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = Parser().parsestr(archive.read(name).decode())["Requires-Python"]
    accepted = supported_pythons(requires)
    for name in BOX_PAGES:
        box = page(built_site, name).select_one("div.install-box")
        text = " ".join(box.get_text(" ", strip=True).split())
        assert f"Python {accepted[0]} to {accepted[-1]}" in text, (name, requires, text)


def tampered(wheel: Path, folder: Path) -> Path:
    """``wheel`` with one line added to a module, under the same name, in ``folder``."""
    folder.mkdir()
    copy = folder / wheel.name
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(copy, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "examples/about.py":
                data += b"\nprint('not the book')\n"
            target.writestr(item, data)
    assert copy.read_bytes() != wheel.read_bytes()
    return copy


def local(requirement: str, base: str) -> str:
    """``requirement`` with the wheel's host and folder swapped for the local server's root."""
    head, _, url = requirement.rpartition(" @ ")
    parts = urlsplit(url)
    swapped = urlunsplit((*urlsplit(base)[:2], "/" + Path(parts.path).name, "", parts.fragment))
    return f"{head} @ {swapped}" if head else swapped


def pip_download(requirement: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """pip fetches the one wheel the requirement names (nothing else) into ``folder``."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir"]
    command += ["--disable-pip-version-check", "-d", str(folder), requirement]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def uv_install(requirement: str, venv: Path) -> subprocess.CompletedProcess[str]:
    """uv installs the wheel alone (no cache: a URL seen before is not looked up again)."""
    subprocess.run([UV, "venv", "--quiet", str(venv)], check=True, capture_output=True)
    command = [UV, "pip", "install", "--no-deps", "--no-cache", "--python", str(venv)]
    return subprocess.run([*command, requirement], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("tab", [0, 1], ids=["CPU line", "GPU line"])
def test_a_tampered_wheel_under_the_same_name_is_refused(built_site, tmp_path, tab):
    wheel = served_wheel(built_site)
    requirement = shlex.split(list(install_box_lines(built_site).values())[tab])[4]
    genuine_folder = tmp_path / "genuine"
    genuine_folder.mkdir()
    (genuine_folder / wheel.name).write_bytes(wheel.read_bytes())
    with serve(genuine_folder) as base:  # the control: the served wheel itself passes
        accepted = pip_download(local(requirement, base), tmp_path / "pip-genuine")
    assert accepted.returncode == 0, accepted.stderr
    assert sha256(tmp_path / "pip-genuine" / wheel.name) == sha256(wheel)

    with serve(tampered(wheel, tmp_path / "tampered").parent) as base:
        refused = pip_download(local(requirement, base), tmp_path / "pip-tampered")
        uv = uv_install(local(requirement, base), tmp_path / "venv")
    assert refused.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in refused.stderr, refused.stderr
    assert not (tmp_path / "pip-tampered" / wheel.name).exists()
    assert uv.returncode != 0
    assert "Hash mismatch" in uv.stderr, uv.stderr
