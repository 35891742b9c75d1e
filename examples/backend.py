"""Where a computation ran: JAX's backend, devices and version, and the CPU beside them.

``backend_report().label()`` captions the page's computed outputs; ``machine_label()`` adds
the CPU that ran the Python loop and numpy, for every timing (the page's tables, the readers'
``python -m examples turnaround`` and ``sweep``, the benchmarks and the Build report).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import jax


@dataclass(frozen=True)
class BackendReport:
    backend: str
    devices: tuple[str, ...]
    jax_version: str

    @property
    def device_count(self) -> int:
        return len(self.devices)

    def label(self) -> str:
        """One short line, e.g. ``computed on cpu · 1 device (cpu) · jax 0.10.2``."""
        kinds = sorted(set(self.devices))
        plural = "device" if self.device_count == 1 else "devices"
        return (
            f"computed on {self.backend} · {self.device_count} {plural} ({', '.join(kinds)})"
            f" · jax {self.jax_version}"
        )


def backend_report() -> BackendReport:
    """Describe the backend JAX uses by default on this machine."""
    return BackendReport(
        backend=jax.default_backend(),
        devices=tuple(device.device_kind for device in jax.devices()),
        jax_version=jax.__version__,
    )


def cpu_model() -> str:
    """The processor's name as the OS reports it, e.g. ``AMD EPYC`` (Linux: /proc/cpuinfo)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_label() -> str:
    """Backend, devices and jax version, plus the CPU that ran the loop and numpy."""
    return f"{backend_report().label()} · CPU: {cpu_model()}, {os.cpu_count()} cores"


def nvidia_gpus() -> tuple[str, ...]:
    """The NVIDIA GPUs ``nvidia-smi -L`` lists (``GPU 0: NVIDIA H100 ... (UUID: ...)``), by
    name; none where ``nvidia-smi`` is not on ``PATH`` or lists none (no driver, say)."""
    if shutil.which("nvidia-smi") is None:
        return ()
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    names = []
    for line in listed.stdout.splitlines():
        if line.startswith("GPU ") and ": " in line:
            names.append(line.split(": ", 1)[1].split(" (UUID")[0].strip())
    return tuple(names)
