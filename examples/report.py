"""Where a computation ran: backend, devices and jax version, to label computed outputs."""

from __future__ import annotations

from dataclasses import dataclass

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
