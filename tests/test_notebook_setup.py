"""The notebook sets itself up: its first code cell installs this version's wheel from the site
where the package is missing (a fresh Colab runtime), with the GPU extra where ``nvidia-smi``
lists a GPU, asks for a restart where the kernel already imported another jax or numpy, and
does nothing where the package is there (docs/notebooks/p5-9-1-practice-in-jax.py).

The downloaded ``.ipynb`` runs in a Jupyter kernel of a fresh virtual environment that has no
``dl-course``, against the built site served on 127.0.0.1 (the notebook's wheel URL with
only its host swapped). That environment gets ipykernel, and jax and numpy at the versions the
wheel pins, from uv's cache (as Colab preinstalls its own): the cell's pip then needs nothing
from the network but the served wheel.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from packaging.version import Version

from build_support import section
from testkit.serving import serve
from testkit.site import page, served_wheel

NOTEBOOK = "notebooks/p5-9-1-practice-in-jax"
UV = str(Path(sys.executable).with_name("uv"))
LISTED = "GPU 0: NVIDIA Stand-in H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)"


def locked(name: str) -> str:
    """The version uv.lock gives ``name`` on the build's Python: the one in .venv (synced
    ``--locked``), which the fresh environment below shares."""
    return importlib.metadata.version(name)


def run(command: list, **options) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, **options)
    assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    return result


def reader_env(**extra: str) -> dict[str, str]:
    """A reader's shell: none of this repository's Python settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    return env | extra


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    """A virtual environment with pip, ipykernel, jax and numpy, and no dl-course."""
    venv = tmp_path_factory.mktemp("notebook-reader") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    run([UV, "venv", "--seed", "--quiet", "--python", base, venv])
    python = venv / "bin" / "python"
    pins = [f"{name}=={locked(name)}" for name in ("ipykernel", "jax", "jaxlib", "numpy")]
    run([UV, "pip", "install", "--quiet", "--python", python, *pins], env=reader_env())
    return python


@pytest.fixture(scope="module")
def local_notebook(built_site, tmp_path_factory):
    """The downloaded .ipynb with its wheel's host swapped for a local server of the site, and
    the folder it is served from (the version folder: as mike lays it out)."""
    version = section.version()
    root = tmp_path_factory.mktemp("served")
    (root / version).symlink_to(built_site, target_is_directory=True)
    name = NOTEBOOK.rsplit("/", 1)[1]
    text = (built_site / NOTEBOOK / f"{name}.ipynb").read_text()
    published = f"{section.site_url()}{version}/"
    assert published in text
    with serve(root) as base:
        local = base + f"{version}/"
        yield nbformat.reads(text.replace(published, local), as_version=4), local


def kernel_spec(python: Path, folder: Path) -> str:
    """A Jupyter data folder under ``folder`` whose kernel ``reader`` runs ``python`` (put it on
    ``JUPYTER_PATH``); returns the kernel's name."""
    spec = folder / "jupyter" / "kernels" / "reader"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python"}))
    return "reader"


def installed(python: Path) -> str | None:
    probe = "import importlib.metadata as m\ntry: print(m.version('dl-course'))\n"
    probe += "except m.PackageNotFoundError: print('missing')"
    printed = run([python, "-c", probe], env=reader_env()).stdout.strip()
    return None if printed == "missing" else printed


def test_the_notebook_installs_its_package_in_a_fresh_kernel_and_every_cell_runs(
    fresh_venv, local_notebook, built_site, tmp_path, monkeypatch
):
    notebook, local = local_notebook
    assert installed(fresh_venv) is None
    for name in [n for n in os.environ if n.startswith(("PYTHON", "VIRTUAL_ENV"))]:
        monkeypatch.delenv(name)  # the kernel's environment: a reader's
    monkeypatch.chdir(tmp_path)  # nothing of the checkout where the kernel starts
    kernel = kernel_spec(fresh_venv, tmp_path)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    NotebookClient(notebook, kernel_name=kernel, timeout=600).execute()

    assert installed(fresh_venv) == str(Version(section.version()))
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    printed = [
        "".join(o.get("text", "") for o in c.outputs if o.get("name") == "stdout") for c in code
    ]
    assert printed[0].startswith("JAX runs on: cpu"), printed[0]
    # Every cell after the set-up prints what the page shows under it.
    shown = page(built_site, NOTEBOOK).select("div.jp-CodeCell[id]")
    displayed = [
        "".join(pre.get_text() for pre in cell.select("div.jp-OutputArea-output pre"))
        for cell in shown
    ]
    assert printed[1:] == displayed[1:]
    first = code[0].source
    assert f'PACKAGE = "{local}' in first and "GPU_PACKAGE" in first


def first_cell(notebook) -> str:
    return next(cell.source for cell in notebook.cells if cell.cell_type == "code")


def run_first_cell(python: Path, source: str, cwd: Path, before: str = "", **env: str):
    script = cwd / "first_cell.py"
    script.write_text(before + source)
    return subprocess.run(
        [str(python), script.name], cwd=cwd, env=reader_env(**env), capture_output=True, text=True
    )


def test_with_the_package_present_the_cell_installs_nothing(
    fresh_venv, local_notebook, built_site, tmp_path
):
    notebook, _ = local_notebook
    if installed(fresh_venv) is None:  # run alone: the served wheel, as the notebook test installs
        wheel = served_wheel(built_site)
        run([UV, "pip", "install", "--quiet", "--python", fresh_venv, wheel], env=reader_env())
    assert installed(fresh_venv) == str(Version(section.version()))
    # The wheel's address made unreachable: the cell must not even try it.
    source = first_cell(notebook).replace("http://127.0.0.1", "http://127.0.0.1:9/unreachable")
    result = run_first_cell(fresh_venv, source, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("JAX runs on: cpu")


def test_a_kernel_that_imported_another_numpy_is_told_to_restart(
    fresh_venv, local_notebook, tmp_path
):
    notebook, _ = local_notebook
    run([fresh_venv, "-m", "pip", "uninstall", "--yes", "--quiet", "dl-course"])
    stand_in = (
        "import sys, types\nsys.modules['numpy'] = types.SimpleNamespace(__version__='1.0')\n"
    )
    result = run_first_cell(fresh_venv, first_cell(notebook), tmp_path, before=stand_in)
    assert result.returncode != 0
    assert "RuntimeError: This runtime had already imported numpy at another version." in (
        result.stderr
    )
    assert "Restart it (in Colab: Runtime > Restart session)" in result.stderr
    assert installed(fresh_venv) == str(Version(section.version()))  # installed, not run on


def test_with_an_nvidia_gpu_the_cell_installs_the_gpu_extra(fresh_venv, local_notebook, tmp_path):
    """A stand-in nvidia-smi lists a GPU; pip only resolves (``PIP_DRY_RUN``, its report):
    the GPU line's jax CUDA plugin, at the wheel's jax version."""
    notebook, local = local_notebook
    run([fresh_venv, "-m", "pip", "uninstall", "--yes", "--quiet", "dl-course"])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(f'#!/bin/sh\necho "{LISTED}"\n')
    (bin_dir / "nvidia-smi").chmod(0o755)
    report = tmp_path / "report.json"
    result = run_first_cell(
        fresh_venv,
        first_cell(notebook),
        tmp_path,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        PIP_DRY_RUN="1",
        PIP_REPORT=str(report),
    )
    assert result.returncode == 0, result.stderr
    resolved = json.loads(report.read_text())
    versions = {i["metadata"]["name"]: i["metadata"]["version"] for i in resolved["install"]}
    requested = [i for i in resolved["install"] if i.get("requested")]
    assert [i["metadata"]["name"] for i in requested] == ["dl-course"]
    assert requested[0]["requested_extras"] == [section.gpu_extra()]
    assert requested[0]["download_info"]["url"].startswith(local)
    assert versions.get("jax-cuda12-plugin") == locked("jax"), versions
