"""The install box's NVIDIA GPU line: the served wheel with its ``cuda12`` extra, which
hatch_build.py pins to the very jax version the wheel pins on each Python (one home:
pyproject.toml's dependencies and their markers), shown beside the CPU line in content tabs, and
resolving, exactly as printed, to JAX's CUDA plugin at that jax version for Linux x86_64 and the
build's Python (every Python and system: tests/test_support_matrix.py)."""

from __future__ import annotations

import platform
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from packaging.markers import Marker
from packaging.requirements import Requirement

from build_support import section
from build_support.publishing.wheel_build import WHEEL_SOURCES
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import INSTALL, install_box_lines, served_wheel
from testkit.support_matrix import gpu_systems, marker_environment, pythons, resolved

UV = str(Path(sys.executable).with_name("uv"))
EXTRA = section.gpu_extra()


def requires(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(archive.read(name).decode())
    return [Requirement(entry) for entry in meta.get_all("Requires-Dist")]


def pinned_jax(requirements: list[Requirement], python: str) -> str:
    """The jax version the wheel pins for CPython ``python`` on Linux."""
    where = marker_environment(python, gpu_systems()[0])
    [jax] = [r for r in requirements if r.name == "jax" and not r.extras and applies(r, where)]
    return str(jax.specifier).removeprefix("==")


def applies(requirement: Requirement, environment: dict[str, str]) -> bool:
    return requirement.marker is None or requirement.marker.evaluate(environment)


def gpu_requirement(requirements: list[Requirement], python: str) -> Requirement:
    """The GPU extra's jax requirement for CPython ``python`` on Linux (one, or an assertion)."""
    where = {**marker_environment(python, gpu_systems()[0]), "extra": EXTRA}
    [gpu] = [r for r in requirements if r.name == "jax" and r.extras and applies(r, where)]
    return gpu


def assert_gpu_extra_follows_jax(requirements: list[Requirement]) -> None:
    """On every Python of the matrix, the GPU extra pins jax[cuda12] to that Python's jax, on
    Linux only, and only with the extra."""
    for python in pythons():
        gpu = gpu_requirement(requirements, python)
        assert gpu.extras == {EXTRA}, gpu
        assert str(gpu.specifier) == f"=={pinned_jax(requirements, python)}", (python, gpu)
        linux = {**marker_environment(python, gpu_systems()[0]), "extra": EXTRA}
        assert not gpu.marker.evaluate({**linux, "sys_platform": "darwin"})
        assert not gpu.marker.evaluate({**linux, "extra": ""})  # never without the extra


def test_the_wheels_gpu_extra_pins_jax_cuda_to_the_wheels_own_jax_on_linux(built_site):
    requirements = requires(served_wheel(built_site))
    assert_gpu_extra_follows_jax(requirements)
    charts = [r for r in requirements if r.name == "matplotlib"]
    assert charts and charts[0].marker == Marker('extra == "charts"')


def test_the_gpu_extra_follows_the_jax_pin_it_has_no_copy_of_its_own(tmp_path):
    """A wheel built from a copy whose dependencies pin another jax pins that one for CUDA."""
    pages = [f"docs/{one.page}" for one in section.sections()]  # the model: every section
    for name in (*WHEEL_SOURCES, "mkdocs.yml", *pages):
        source, target = ROOT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    pyproject = tmp_path / "pyproject.toml"
    text = pyproject.read_text()
    others = iter(["0.9.8", "0.9.7"])  # each branch's jax pin moved to a version of its own
    pinned = re.sub(r'"jax==[^;"]+', lambda _: f'"jax=={next(others)}', text)
    assert next(others, None) is None, "pyproject.toml no longer pins jax on two branches"
    pyproject.write_text(pinned)
    built = subprocess.run(
        [UV, "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("*.whl")
    requirements = requires(wheel)
    assert {pinned_jax(requirements, python) for python in pythons()} == {"0.9.8", "0.9.7"}
    assert_gpu_extra_follows_jax(requirements)


def test_each_install_box_shows_the_cpu_line_and_the_gpu_line_side_by_side(built_site):
    for name in ("", SECTION_PAGE):
        lines = install_box_lines(built_site, name)
        assert list(lines) == ["CPU", "NVIDIA GPU (Linux, CUDA 12)"], (name, lines)
        cpu, gpu = lines.values()
        url = cpu.removeprefix(INSTALL)
        assert cpu.startswith(INSTALL) and urlsplit(url).path.endswith(".whl") and " " not in url
        assert gpu == f'{INSTALL}"dl-course[{EXTRA}] @ {url}"'  # the same #sha256=


def local(requirement: str, base: str) -> str:
    """The requirement with the wheel's host swapped for the local server's (path and
    ``#sha256=`` kept)."""
    head, url = requirement.rsplit(" ", 1) if " @ " in requirement else ("", requirement)
    parts = urlsplit(url)
    swapped = urlunsplit((*urlsplit(base)[:2], Path(parts.path).name, "", parts.fragment))
    return f"{head} {swapped}".strip()


def test_the_gpu_line_as_printed_resolves_jax_with_its_cuda_plugin_at_one_version(
    built_site, served_site
):
    lines = install_box_lines(built_site, SECTION_PAGE)
    cpu, gpu = lines.values()
    # The line as a shell reads it: python -m pip install, then one requirement.
    words = shlex.split(gpu)
    assert words[:4] == ["python", "-m", "pip", "install"] and len(words) == 5, words
    python, system = ".".join(platform.python_version_tuple()[:2]), gpu_systems()[0]
    gpu_pins = resolved(local(words[4], served_site), python, system)
    jax = pinned_jax(requires(served_wheel(built_site)), python)
    assert gpu_pins["jax"] == jax
    assert gpu_pins["jax-cuda12-plugin"] == jax, gpu_pins
    assert gpu_pins["jax-cuda12-pjrt"] == jax, gpu_pins
    assert gpu_pins["jaxlib"] == jax
    # The CPU line, the same way: no CUDA plugin.
    cpu_pins = resolved(local(shlex.split(cpu)[4], served_site), python, system)
    assert cpu_pins["jax"] == jax and "jax-cuda12-plugin" not in cpu_pins, cpu_pins
