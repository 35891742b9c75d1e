"""The wheel's version and summary, read from the section page's front matter at build time,
and the book's expected outputs, put into the wheel when the site build passes them in.

The version is written once, as ``version:`` in the section page (the page header, ``make
publish`` and mike's version folder read it there too); the wheel takes it from there, through
``build_support/section.py``, the one reader of both, so the wheel a version folder serves always
carries that folder's version. hatchling builds in an environment of its own, where the project
is not importable: the reader is loaded by its path.

The extras are written here too (``optional-dependencies`` is dynamic): ``charts``, and the GPU
extra (``[tool.course] gpu-extra``), derived from the jax pins of ``[project] dependencies``, one
per branch of their environment markers, so that the GPU line can never install another jax
than the CPU line on the same Python.

The expected outputs (``python -m examples verify`` reads them) come from the build's execution
record, so they exist only once a site build has run every block: ``hooks/wheel.py`` writes them
to a file outside the source tree and names it in ``COURSE_EXPECTED_OUTPUTS``. Never written into
``examples/``: every file there is an ingredient of the execution cache's key.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.metadata.plugin.interface import MetadataHookInterface
from packaging.requirements import Requirement
from packaging.version import Version

SECTION_READER = Path("build_support") / "section.py"
SECTION = "P5-9.1 'GPUs And Parallel Processing'"
EXPECTED_OUTPUTS_ENV = "COURSE_EXPECTED_OUTPUTS"  # set by hooks/wheel.py
EXPECTED_OUTPUTS_IN_WHEEL = "examples/expected-outputs.json"  # read by examples/verify.py
# Charts on the site are drawn with matplotlib; the scoring code itself needs only jax and numpy.
CHARTS = ["matplotlib>=3.10"]
LINUX = "sys_platform == 'linux'"  # where jax publishes its CUDA wheels


def section_reader(root: Path):
    """``build_support/section.py``, loaded by its path: the one reader of the version and of
    the site's address."""
    spec = importlib.util.spec_from_file_location("course_section", root / SECTION_READER)
    section = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(section)
    return section


def optional_dependencies(dependencies: list[str], gpu_extra: str) -> dict[str, list[str]]:
    """The wheel's extras: ``charts``, and ``gpu_extra`` (``cuda12``): jax's own extra of that
    name, pinned to the very jax version of ``dependencies`` on each branch of their environment
    markers (one Python gets one jax: ``jax[cuda12]==X; <that jax's marker> and Linux``), so that
    the GPU line installs the jax the CPU line would, plus its CUDA plugin. jax publishes CUDA
    wheels for Linux only.
    """
    jax = [req for req in map(Requirement, dependencies) if req.name == "jax"]
    if not jax or any(not str(req.specifier).startswith("==") for req in jax):
        raise ValueError(f"pyproject.toml: the dependencies must pin jax (==), not {jax}")
    gpu = []
    for req in jax:
        marker = f"({req.marker}) and {LINUX}" if req.marker else LINUX
        gpu.append(f"jax[{gpu_extra}]{req.specifier}; {marker}")
    return {"charts": CHARTS, gpu_extra: gpu}


class CustomMetadataHook(MetadataHookInterface):
    def update(self, metadata: dict) -> None:
        section = section_reader(Path(self.root))
        version = section.version(Path(self.root))
        metadata["version"] = str(Version(version))  # PEP 440: v2026.07.20 -> 2026.7.20
        metadata["description"] = (
            f"Live code for course section {SECTION}, version {version}: scoring a batch one by "
            "one and with JAX jit + vmap."
        )
        # The site is the project's home; the version folder holds this version's pages and wheel.
        home = section.site_url(Path(self.root))
        metadata["urls"] = {"Homepage": home, "Documentation": f"{home}{version}/"}
        extra = section.gpu_extra(Path(self.root))
        metadata["optional-dependencies"] = optional_dependencies(metadata["dependencies"], extra)


class ExpectedOutputsHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        source = os.environ.get(EXPECTED_OUTPUTS_ENV)
        if source and self.target_name == "wheel" and version == "standard":
            build_data["force_include"][source] = EXPECTED_OUTPUTS_IN_WHEEL
