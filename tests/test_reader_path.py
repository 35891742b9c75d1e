"""The reader's path, end to end: install this version's wheel by the line the page shows, then
run what the site shows, in a Python that has nothing of this repository.

- The site is the one ``make publish`` deploys with mike (``published_site``), served on
  127.0.0.1; the wheel is installed from the URL the page shows, with only the host swapped.
- The reader's virtual environment is made with ``uv venv --seed`` (so it has pip) in the
  checkout's ignored ``.cache/``; the page's command then runs there as shown, ``python -m pip
  install <url>``. No editable install, no path into the checkout: every run checks that
  ``examples`` is imported from inside that environment and nothing else of the checkout.
  The wheel's dependencies (jax, numpy) come from the package index at the exact versions the
  wheel pins (the build's own, from uv.lock), so the reader gets what printed the page: no
  constraints are added that a reader would not have. The environment is kept under
  ``.cache/reader-venv/<digest>`` and reused while the wheel and the Python are the same.
- Every Python block the site shows with an output runs there as copied (the blocks and their
  outputs are read from the HTML by tests/test_copy_fidelity.py) and prints what the page shows:
  ``python -m examples verify`` runs them, from the expected outputs the wheel carries, which
  must be exactly the page's; it reports "same" for every one, and names a block whose expected
  output is altered on purpose.
- The ``.ipynb`` downloaded from the notebook page runs top to bottom there: its code cells, in
  order, as one script (the reader's environment has no Jupyter kernel; the notebook's cells
  only print), and together they print what the page shows under the cells.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

import nbformat
import pytest
from bs4 import BeautifulSoup
from packaging.version import Version

from build_support import section
from examples import DISTRIBUTION
from testkit.author import section_version
from testkit.project import ARTIFACTS, ROOT
from testkit.serving import serve
from testkit.shown_blocks import copy_failures, shown_blocks
from testkit.site import INSTALL, page, site_prefix

READER_VENVS = ROOT / ".cache" / "reader-venv"
NOTEBOOK = "notebooks/p5-9-1-practice-in-jax"


def package_version() -> str:
    """The page's version as the wheel spells it (PEP 440: v2026.07.20 is 2026.7.20)."""
    return str(Version(section_version()))


def install_command(soup: BeautifulSoup) -> str:
    """The CPU install line in a page's install box (its first tab), as the copy button gives
    it (the GPU line beside it: tests/test_gpu_line.py)."""
    box = soup.select_one("div.install-box")
    assert box is not None, "no install box on the page"
    codes = box.select("pre code")
    assert len(codes) == 2, f"the install box holds {len(codes)} code blocks, not two (CPU, GPU)"
    return codes[0].get_text().strip()


def wheel_url(command: str) -> str:
    """The wheel's address in an install line, with its ``#sha256=`` (pip checks it)."""
    assert command.startswith(INSTALL), command
    url = command.removeprefix(INSTALL)
    parts = urlsplit(url)
    assert " " not in url and parts.path.endswith(".whl"), command
    assert parts.fragment.startswith("sha256="), command
    return url


@dataclass(frozen=True)
class Reader:
    python: Path
    base: str  # the local server's address of the site_url's path
    wheel_url: str  # the published address the page shows
    local_wheel_url: str  # the same, from the local server
    seconds: float  # creating (or finding) the environment, installing the wheel
    cached: bool


def _reader_env() -> dict[str, str]:
    """The environment a reader's shell has: none of this repository's Python settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}


def make_reader(wheel: bytes, local_url: str, workdir: Path) -> tuple[Path, float, bool]:
    """The reader's environment with the wheel at ``local_url`` installed: cached or new."""
    key = hashlib.sha256(wheel + platform.python_version().encode())
    venv = READER_VENVS / key.hexdigest()[:16]
    python = venv / "bin" / "python"
    start = time.perf_counter()
    if (venv / ".ready").is_file():
        return python, time.perf_counter() - start, True
    for stale in READER_VENVS.glob("*"):  # a run that stopped half way, an older wheel's
        shutil.rmtree(stale, ignore_errors=True)  # (each holds jax: hundreds of MB)
    uv = Path(sys.executable).with_name("uv")
    base_python = getattr(sys, "_base_executable", sys.executable)
    # The page's own command, run by the reader's pip (``--seed``), with only the host swapped.
    install = [*INSTALL.split()[1:], local_url]
    for command in (
        [uv, "venv", "--seed", "--quiet", "--python", base_python, venv],
        [python, *install, "--quiet", "--disable-pip-version-check"],
    ):
        result = subprocess.run(
            [str(part) for part in command], cwd=workdir, capture_output=True, text=True
        )
        assert result.returncode == 0, f"{command} failed:\n{result.stderr}"
    (venv / ".ready").touch()
    return python, time.perf_counter() - start, False


@pytest.fixture(scope="session")
def version_site(published_site: Path) -> Path:
    return published_site / site_prefix() / section_version()


@pytest.fixture(scope="session")
def reader(published_site, version_site, tmp_path_factory) -> Reader:
    published = wheel_url(install_command(page(version_site)))
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "reader-path.txt").write_text(f"install line: {INSTALL}{published}\n")
    workdir = tmp_path_factory.mktemp("reader")
    with serve(published_site) as local:
        parts = urlsplit(published)
        local_url = urlunsplit(urlsplit(local)[:2] + parts[2:])  # only the host is swapped
        with urllib.request.urlopen(local_url) as response:
            wheel = response.read()
        python, seconds, cached = make_reader(wheel, local_url, workdir)
        yield Reader(python, local + site_prefix(), published, local_url, seconds, cached)
    line = f"reader venv {'cached' if cached else 'cold'}: {seconds:.2f} s ({python.parent.parent})"
    with (ARTIFACTS / "reader-path.txt").open("a") as log:
        log.write(line + "\n")


def run_as_reader(reader: Reader, source: str, workdir: Path) -> subprocess.CompletedProcess:
    """Run ``source`` as a reader would: a script in a folder of their own, their Python."""
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "copied.py"
    script.write_text(source + "\n")
    return subprocess.run(
        [str(reader.python), script.name],
        cwd=workdir,
        env=_reader_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_install_line_installs_this_versions_wheel_from_its_version_folder(version_site):
    url = wheel_url(install_command(page(version_site)))
    version = section_version()
    site_url = (ROOT / "mkdocs.yml").read_text().split("site_url:", 1)[1].split()[0]
    folder, wheel = urlsplit(url)._replace(fragment="").geturl().rsplit("/", 1)
    assert folder == f"{site_url.rstrip('/')}/{version}"
    assert (version_site / wheel).is_file(), f"the page installs {wheel}, not served there"
    assert wheel.startswith(f"{DISTRIBUTION.replace('-', '_')}-{package_version()}-py3-none-any")
    # The home page shows the same line.
    assert install_command(page(version_site, "")) == install_command(page(version_site))


def test_examples_comes_from_the_readers_environment_only(reader, tmp_path):
    probe = (
        "import json, sys, importlib.metadata as m, importlib.util as u\n"
        "import examples\n"
        "print(json.dumps({'file': examples.__file__, 'path': sys.path,"
        " 'version': m.version('" + DISTRIBUTION + "'),"
        " 'matplotlib': u.find_spec('matplotlib') is not None}))"
    )
    run = run_as_reader(reader, probe, tmp_path)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    venv = reader.python.parent.parent
    assert Path(found["file"]).is_relative_to(venv), found["file"]
    # The environment lives in the checkout's ignored .cache/; nothing else of it is reachable.
    in_checkout = [p for p in found["path"] if p and Path(p).resolve().is_relative_to(ROOT)]
    assert all(Path(p).resolve().is_relative_to(venv) for p in in_checkout), found["path"]
    assert found["version"] == package_version()
    assert not found["matplotlib"], "the wheel pulled in the charts extra"


def test_pip_refuses_the_wheel_for_an_unsupported_python(reader, tmp_path):
    """Requires-Python: pip says so itself, before installing anything."""
    pip = [str(reader.python), "-m", "pip", "download", "--disable-pip-version-check"]
    options = ["--no-deps", "--only-binary=:all:", "--python-version", "3.10", "-d", str(tmp_path)]
    run = subprocess.run(
        [*pip, *options, reader.local_wheel_url],
        env=_reader_env(),
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0
    assert f"Package '{DISTRIBUTION}' requires a different Python: 3.10" in run.stderr, run.stderr


def test_python_dash_m_examples_names_the_section_and_version(reader, tmp_path):
    run = subprocess.run(
        [str(reader.python), "-m", "examples", "--version"],
        cwd=tmp_path,
        env=_reader_env(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    every = ", ".join(f"{one.id} {one.version}" for one in section.sections())
    assert run.stdout.startswith(f"{every} · "), run.stdout  # every section at its own version
    assert reader.wheel_url.rsplit("/", 1)[0] + "/" in run.stdout


def test_the_gpu_line_the_package_prints_is_the_install_boxs(reader, version_site, tmp_path):
    """The line ``verify`` prints where a GPU sits unused is the box's GPU line, its SHA-256
    too: pip recorded the one it checked (``direct_url.json``)."""
    source = "from examples.about import gpu_install_line\nprint(gpu_install_line())"
    run = run_as_reader(reader, source, tmp_path)
    assert run.returncode == 0, run.stderr
    gpu_line = page(version_site).select_one("div.install-box").select("pre code")[1]
    assert run.stdout.strip() == gpu_line.get_text().strip()


def run_verify(reader: Reader, workdir: Path):
    """``python -m examples verify`` as the reader runs it."""
    return subprocess.run(
        [str(reader.python), "-m", "examples", "verify"],
        cwd=workdir,
        env=_reader_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def carried_outputs(reader: Reader, workdir: Path) -> dict:
    """The expected outputs the installed wheel carries, read in the reader's environment."""
    source = "import json, examples.verify as v\nprint(json.dumps(v.load_expected()))"
    run = run_as_reader(reader, source, workdir)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_every_shown_block_runs_as_copied_in_the_readers_environment(
    reader, version_site, tmp_path
):
    """`python -m examples verify` runs, in the reader's environment, each block the page shows,
    as copied, and compares what it prints with what the page shows: the wheel carries them."""
    blocks, unpaired = shown_blocks(version_site)
    assert blocks and not unpaired
    carried = {b["block_id"]: b for b in carried_outputs(reader, tmp_path)["blocks"]}
    compared = [b for b in blocks if not carried[b.block_id].get("timed")]
    assert [
        (carried[b.block_id]["source"].rstrip(), carried[b.block_id]["output"]) for b in compared
    ] == [(b.source, b.output) for b in compared], (
        "the wheel does not carry exactly what the page shows"
    )
    # A displayed block in a timed session is not compared by verify: run it as copied here.
    timed = [b for b in blocks if b not in compared]
    failures = copy_failures(
        timed,
        lambda block, number: run_as_reader(reader, block.source, tmp_path / f"block-{number}"),
        "in the reader's environment",
    )
    assert not failures, "\n\n".join(failures)

    run = run_verify(reader, tmp_path)
    (ARTIFACTS / "verify-reader.txt").write_text(run.stdout + run.stderr)
    assert run.returncode == 0, run.stdout + run.stderr
    report = run.stdout.splitlines()
    for block_id, block in carried.items():
        status = "not compared (timings)" if block.get("timed") else "same"
        assert f"{block_id}: {status}" in report, run.stdout
    assert "Nothing differs from the build's environment." in report
    with (ARTIFACTS / "reader-path.txt").open("a") as log:
        log.write(f"{len(blocks)} shown blocks ran as copied: {[b.block_id for b in blocks]}\n")


def test_verify_names_the_block_whose_expected_output_was_altered(reader, tmp_path):
    carried = carried_outputs(reader, tmp_path)
    altered, other = [b["block_id"] for b in carried["blocks"] if not b.get("timed")][:2]
    script = f"""
import sys, examples.verify as v
expected = v.load_expected()
block = next(b for b in expected["blocks"] if b["block_id"] == {altered!r})
block["output"] = block["output"].replace("\\n", " (altered on purpose)\\n", 1)
sys.exit(v.verify(expected, only=[{altered!r}, {other!r}]))
"""
    run = run_as_reader(reader, script, tmp_path)
    (ARTIFACTS / "verify-reader-altered.txt").write_text(run.stdout + run.stderr)
    assert run.returncode == 1, run.stdout + run.stderr
    report = run.stdout.splitlines()
    first_line = next(b for b in carried["blocks"] if b["block_id"] == altered)["output"]
    first_line = first_line.splitlines()[0]
    at = report.index(f"{altered}: different")
    assert report[at + 1 : at + 3] == [
        f"    - {first_line} (altered on purpose)",
        f"    + {first_line}",
    ]
    assert f"{other}: same" in report


def test_the_downloaded_notebook_runs_top_to_bottom_in_the_readers_environment(
    reader, version_site, tmp_path
):
    notebook_page = f"{reader.base}{section_version()}/{NOTEBOOK}/"
    soup = page(version_site, NOTEBOOK)
    link = next(
        a["href"]
        for a in soup.select("p.notebook-download a[download]")
        if a["href"].endswith(".ipynb")
    )
    with urllib.request.urlopen(urljoin(notebook_page, link)) as response:
        notebook = nbformat.reads(response.read().decode(), as_version=4)

    first_text = next(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert install_command(page(version_site)) in first_text, "no install line in the notebook"

    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert not any(
        line.lstrip().startswith(("%", "!")) for cell in code for line in cell.split("\n")
    )
    run = run_as_reader(reader, "\n\n".join(code), tmp_path)
    assert run.returncode == 0, run.stderr
    shown = "".join(pre.get_text() for pre in soup.select("div.jp-OutputArea-output pre"))
    assert run.stdout == shown
    with (ARTIFACTS / "reader-path.txt").open("a") as log:
        log.write(f"notebook: {len(code)} code cells ran top to bottom, printed what is shown\n")
