"""Readers on every Python of the matrix found here: the served wheel, installed by the page's
CPU line (only the host swapped, its ``#sha256=`` kept) into a fresh virtual environment of each
CPython that ``requires-python`` accepts and this machine has (testkit/support_matrix.py looks
on ``PATH`` and in pyenv's versions; one that is not found is skipped, saying where it looked),
runs ``python -m examples verify``: every compared block prints what the book shows, and the
report names exactly the versions that differ from the book's.

uv installs into the environments (from its shared cache: jax and numpy are fetched once per
Python); the reader's own pip is tested on the build's Python by tests/test_reader_path.py.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from examples.verify import SAME, TIMED
from testkit.project import ARTIFACTS
from testkit.site import install_box_lines
from testkit.support_matrix import (
    expected_pins,
    find_cpython,
    pythons,
    this_system,
    where_pythons_are_looked_for,
)

UV = str(Path(sys.executable).with_name("uv"))
SYSTEM = this_system()  # this machine, where it is one of the matrix's systems


def reader_env() -> dict[str, str]:
    """A reader's shell: none of this repository's Python settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}


@pytest.fixture(scope="module")
def local_cpu_requirement(built_site, served_site) -> str:
    """The section page's CPU line's requirement, served from 127.0.0.1 (hash kept)."""
    cpu = shlex.split(next(iter(install_box_lines(built_site).values())))[4]
    parts = urlsplit(cpu)
    return urlunsplit((*urlsplit(served_site)[:2], Path(parts.path).name, "", parts.fragment))


def run(command: list, **options) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, env=reader_env(), **options
    )
    assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.parametrize("python", pythons())
def test_the_served_wheel_verifies_on_every_python_found_here(
    python, local_cpu_requirement, tmp_path
):
    executable = find_cpython(python)
    if executable is None:
        pytest.skip(f"no CPython {python} on this machine ({where_pythons_are_looked_for(python)})")
    venv = tmp_path / f"reader-{python}"
    run([UV, "venv", "--quiet", "--python", executable, venv])
    reader = venv / "bin" / "python"
    run([UV, "pip", "install", "--quiet", "--python", reader, local_cpu_requirement])
    verified = subprocess.run(
        [str(reader), "-m", "examples", "verify"],
        cwd=tmp_path,
        env=reader_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"verify-python-{python}.txt").write_text(verified.stdout + verified.stderr)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    report = verified.stdout.splitlines()

    source = "import json, examples.verify as v\nprint(json.dumps(v.load_expected()))"
    carried = json.loads(run([reader, "-c", source], cwd=tmp_path).stdout)
    for block in carried["blocks"]:
        status = TIMED if block.get("timed") else SAME
        assert f"{block['block_id']}: {status}" in report, verified.stdout

    # The versions this Python got are its markers' pins; verify names those that differ.
    installed = "import jax, numpy, platform\nprint(platform.python_version(), jax.__version__"
    installed += ", numpy.__version__)"
    versions = run([reader, "-c", installed]).stdout.split()
    here = dict(zip(("Python", "jax", "numpy"), versions, strict=True))
    if SYSTEM:
        pins = expected_pins(python, SYSTEM)
        assert {"jax": here["jax"], "numpy": here["numpy"]} == pins, (python, here, pins)
    book = carried["environment"]
    differs = [name for name in ("Python", "jax", "numpy") if book[name] != here[name]]
    said = [line for line in report if line.startswith(("Differs from", "Nothing differs"))]
    if differs:
        assert len(said) == 1 and said[0].startswith("Differs from the build: "), said
        named = said[0].removeprefix("Differs from the build: ").rstrip(".").split(", ")
        assert [name for name in named if name in here] == differs, (said, book, here)
    else:
        assert said == ["Nothing differs from the build's environment."], said
