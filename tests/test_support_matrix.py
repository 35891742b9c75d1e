"""The support matrix, resolved: the wheel, as the build makes it, installs on every Python its
``Requires-Python`` accepts on each system of ``[tool.course] systems`` (the CPU line), and with
its GPU extra on ``gpu-systems``; each gets the jax and numpy that pyproject.toml's markers give
that Python, and the GPU line JAX's CUDA 12 plugin at that very jax version. ``uv pip compile``
resolves each target: nothing is downloaded but metadata. Outside ``requires-python`` the wheel
resolves nowhere.

What each target must get is read from pyproject.toml (testkit/support_matrix.py), never typed
here; the Pythons found on this machine install it and run ``verify``: test_reader_pythons.py.
"""

from __future__ import annotations

import itertools
import zipfile
from concurrent.futures import ThreadPoolExecutor
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from build_support import section
from build_support.caching.cache import Cache, key_of
from build_support.caching.store import FileStore
from build_support.publishing import wheel_build
from testkit.project import ROOT
from testkit.support_matrix import (
    expected_pins,
    gpu_systems,
    pythons,
    requires_python,
    resolution,
    resolved,
    systems,
)

EXTRA = section.gpu_extra()
CUDA_PLUGIN = ("jax-cuda12-plugin", "jax-cuda12-pjrt", "jaxlib")  # each at the jax version


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built by the code that builds the served one (no expected outputs: the
    metadata is the same)."""
    folder = tmp_path_factory.mktemp("matrix-wheel")
    key = key_of(wheel_build.wheel_digest(ROOT, "v1", "https://site.invalid/v1/"), "uv")
    built = wheel_build.cached_wheel(ROOT, Cache("wheel", FileStore(folder / "store")), key)
    path = folder / built.name
    path.write_bytes(built.content)
    return path


def test_the_matrix_spans_requires_python_and_the_wheel_says_so(wheel):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(name).decode())
    assert SpecifierSet(metadata["Requires-Python"]) == SpecifierSet(requires_python())
    assert len(pythons()) >= 2 and pythons()[-1] != "3.99", "requires-python needs an upper bound"
    assert systems() and set(gpu_systems()) <= set(systems())


def test_every_python_and_system_resolves_to_the_pins_its_markers_give(wheel):
    cpu = f"{section.distribution_name()} @ {wheel.as_uri()}"
    gpu = f"{section.distribution_name()}[{EXTRA}] @ {wheel.as_uri()}"
    targets = [(cpu, python, system) for python, system in itertools.product(pythons(), systems())]
    targets += [(gpu, python, system) for python in pythons() for system in gpu_systems()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda target: resolved(*target), targets))
    wrong = []
    for (requirement, python, system), pins in zip(targets, results, strict=True):
        expected = expected_pins(python, system)
        if requirement == gpu:  # the CUDA plugin at the very jax version that Python gets
            expected |= {name: expected["jax"] for name in CUDA_PLUGIN}
        got = {name: pins.get(name) for name in expected}
        if got != expected or (requirement == cpu and "jax-cuda12-plugin" in pins):
            line = "GPU" if requirement == gpu else "CPU"
            wrong.append(f"{line} line, Python {python}, {system}: {got}, expected {expected}")
    assert not wrong, "\n".join(wrong)
    print(f"{len(targets)} targets resolved: Pythons {pythons()}, systems {systems()}")


def test_outside_requires_python_the_wheel_resolves_nowhere(wheel):
    cpu = f"{section.distribution_name()} @ {wheel.as_uri()}"
    oldest, newest = (pythons()[0], pythons()[-1])
    for python in (f"3.{int(oldest[2:]) - 1}", f"3.{int(newest[2:]) + 1}"):
        run = resolution(cpu, python, systems()[0])
        assert run.returncode != 0, f"{python}: {run.stdout}"
        assert "Python" in run.stderr and section.distribution_name() in run.stderr, run.stderr
