"""The wheel's version, summary and URLs, read from the course model at build time, and the
book's expected outputs, put into the wheel when the site build passes them in.

The wheel is the course's: its name (``dl-course``) names no section, and its version is the
release's (``[tool.course] release``, in the release's own form, never a section's:
``build_support/publishing/release.py``; ``make publish`` and mike's version folder read it
there too), so the wheel a version folder serves always carries that folder's version. It holds
every section at the section's own version: the summary names each, and each has a Project-URL
labelled with its ID and version (``P5-9.1 v2026.07.20``), its page in the release, which
``examples.about`` reads. All of it comes through ``build_support/section.py``, the one reader of
the course model, and ``release.py``; hatchling builds in an environment of its own, where the
project is not importable: both are loaded by their paths.

The extras are written here too (``optional-dependencies`` is dynamic): ``charts``, and the GPU
extra (``[tool.course] gpu-extra``), derived from the jax pins of ``[project] dependencies``, one
per branch of their environment markers, so that the GPU line can never install another jax
than the CPU line on the same Python.

The expected outputs (``python -m examples verify`` reads them) come from the build's execution
record, so they exist only once a site build has run every block: ``hooks/wheel.py`` writes them
to a file outside the source tree, and the build names it in this hook's settings
(``expected-outputs``, added to ``[tool.hatch.build.targets.wheel.hooks.custom]`` by
``build_support/publishing/wheel_build.py``, which runs hatchling). Never written into
``examples/``: every file there is an ingredient of the execution cache's key.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.metadata.plugin.interface import MetadataHookInterface
from packaging.requirements import Requirement
from packaging.version import Version

SECTION_READER = Path("build_support") / "section.py"
RELEASE_READER = Path("build_support") / "publishing" / "release.py"
EXPECTED_OUTPUTS_SETTING = "expected-outputs"  # set by build_support/publishing/wheel_build.py
EXPECTED_OUTPUTS_IN_WHEEL = "examples/expected-outputs.json"  # read by examples/verify.py
# Charts on the site are drawn with matplotlib; the scoring code itself needs only jax and numpy.
CHARTS = ["matplotlib>=3.10"]
LINUX = "sys_platform == 'linux'"  # where jax publishes its CUDA wheels


def reader(root: Path, path: Path):
    """A reader of the course model, loaded by its path: ``SECTION_READER``, the one reader of
    the sections, the site's address and the extras; ``RELEASE_READER``, of the release."""
    spec = importlib.util.spec_from_file_location(f"course_{path.stem}", root / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def summary(sections: list, release: str) -> str:
    """The wheel's one-line summary: every section, with its own version, and the release."""
    named = "; ".join(f"{one.title} ({one.version})" for one in sections) or "no section yet"
    return f"Live code for the course sections {named}; course release {release}."


def section_urls(sections: list, release_url: str) -> dict[str, str]:
    """One Project-URL per section: labelled with its ID and version, its page in the release."""
    return {f"{one.id} {one.version}": f"{release_url}{one.name}/" for one in sections}


class CustomMetadataHook(MetadataHookInterface):
    def update(self, metadata: dict) -> None:
        root = Path(self.root)
        section = reader(root, SECTION_READER)
        release = reader(root, RELEASE_READER).release(root)
        sections = section.sections(root)
        metadata["version"] = str(Version(release))  # PEP 440: v2026.12.05.1 -> 2026.12.5.1
        metadata["description"] = summary(sections, release)
        # The site is the project's home; the version folder holds this release's pages and wheel.
        home = section.site_url(root)
        documentation = f"{home}{release}/"
        urls = {"Homepage": home, "Documentation": documentation}
        metadata["urls"] = urls | section_urls(sections, documentation)
        extra = section.gpu_extra(root)
        metadata["optional-dependencies"] = optional_dependencies(metadata["dependencies"], extra)


class ExpectedOutputsHook(BuildHookInterface):
    def initialize(self, version: str, build_data: dict) -> None:
        source = self.config.get(EXPECTED_OUTPUTS_SETTING)
        if source and self.target_name == "wheel" and version == "standard":
            build_data["force_include"][source] = EXPECTED_OUTPUTS_IN_WHEEL
