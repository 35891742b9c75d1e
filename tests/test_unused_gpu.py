"""A GPU that sits unused is named: where ``nvidia-smi`` lists an NVIDIA GPU but JAX computes on
the CPU, ``python -m examples verify``, ``turnaround`` and ``sweep`` say so in one line on
stderr, with the install box's GPU line (examples/__main__.py). A stand-in ``nvidia-smi`` on
``PATH`` plays the GPU; JAX here only ever finds the CPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from examples.about import gpu_install_line
from examples.backend import nvidia_gpus

LISTED = "GPU 0: NVIDIA Stand-in H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)"
NOTICE = "An NVIDIA GPU is present (NVIDIA Stand-in H200), but JAX runs on the cpu"


def path_without_nvidia_smi() -> str:
    return os.pathsep.join(
        folder
        for folder in os.environ["PATH"].split(os.pathsep)
        if not (Path(folder) / "nvidia-smi").exists()
    )


def stand_in(folder: Path, listing: str) -> str:
    """A ``PATH`` whose first folder holds an ``nvidia-smi`` that prints ``listing`` for ``-L``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "nvidia-smi"
    script.write_text(f'#!/bin/sh\n[ "$1" = -L ] && printf "%s\\n" "{listing}"\n')
    script.chmod(0o755)
    return f"{folder}{os.pathsep}{path_without_nvidia_smi()}"


def run_examples(command: str, path: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "JAX_PLATFORMS": "cpu"}
    return subprocess.run(
        [sys.executable, "-m", "examples", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("command", ["verify", "turnaround", "sweep"])
def test_a_present_gpu_that_jax_does_not_use_is_named_with_the_gpu_line(command, tmp_path):
    run = run_examples(command, stand_in(tmp_path / "bin", LISTED), tmp_path)
    notices = [line for line in run.stderr.splitlines() if line.startswith(NOTICE)]
    assert len(notices) == 1, run.stderr
    line = gpu_install_line()
    assert notices[0].endswith(f"for JAX on the GPU, install: {line}")
    assert line.startswith('python -m pip install "dl-course[cuda12] @ https://'), line
    assert line.endswith('-py3-none-any.whl"'), line
    assert NOTICE not in run.stdout  # what verify compares and turnaround prints stays as it was


@pytest.mark.parametrize("command", ["verify", "turnaround"])
def test_no_notice_without_nvidia_smi_or_without_a_gpu_listed(command, tmp_path):
    for path in (path_without_nvidia_smi(), stand_in(tmp_path / "bin", "No devices were found")):
        run = run_examples(command, path, tmp_path)
        assert "NVIDIA GPU" not in run.stderr + run.stdout, run.stderr


def test_nvidia_gpus_reads_the_names_nvidia_smi_lists(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", stand_in(tmp_path / "bin", LISTED))
    assert shutil.which("nvidia-smi") == str(tmp_path / "bin" / "nvidia-smi")
    assert nvidia_gpus() == ("NVIDIA Stand-in H200",)
    monkeypatch.setenv("PATH", path_without_nvidia_smi())
    assert nvidia_gpus() == ()
