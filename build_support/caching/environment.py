"""The ingredients every key of one build shares, read once at its start (``Environment``),
and the list of everything a build's outputs depend on (``Environment.described``: the one
list, printed on the Build report under "What the cache's key holds").

The backend label is read without importing jax (that costs about a second, more than a whole
build with nothing to run): the installed JAX plugin distributions (``jax-cuda12-plugin``,
``libtpu``, ...: what JAX can pick from), the accelerators the OS shows (NVIDIA and AMD device
files) and the CPU; with the variables of ``ingredients.py``, JAX picks its backend and devices
from these.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..section import PACKAGE
from . import ingredients as extra
from . import reach
from .cache import Cache, canonical, digest, key_of

EXECUTING_TOOLS = (
    "markdown-exec",
    "mkdocs-jupyter",
    "nbclient",
    "ipykernel",
    "jupytext",
    "jax",
    "jaxlib",
    "numpy",
    "matplotlib",
)
JAX_PLUGIN_PREFIXES = ("jax-cuda", "jax-rocm", "libtpu", "jax-tpu")

_USES_JAX = re.compile(rf"\b(?:jax|{PACKAGE})\b")
BUILD_CALLS = f"""
from {PACKAGE} import backend_report, machine_label
from {PACKAGE}.verify import environment
backend_report, machine_label, environment
"""
"""What the build itself calls in the package for an output of code that uses jax or the
package, in the block's worker or the notebook's kernel: the "computed on" label and a timing's
caption (``execution/worker.py``: ``ran_on``, ``machine_label``; ``kernels.WHERE_IT_RAN``)
and the environment the record holds (``environment``). In a key as what it is, one
ingredient of its own (``Environment.build_calls``): what these calls reach, never added to the
output's code's reach, so a notebook that never imports the package is not keyed on the
modules importing it runs (an edit to one re-runs only the outputs that import it)."""
BUILD_CALLS_INGREDIENT = "the build's own calls in the package"


def examples_package_dir() -> Path | None:
    """The folder of the ``examples`` package Python would import (found, not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _file_digests(root: Path, paths: list[Path]) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): digest(path.read_bytes()) for path in sorted(paths)}


def package_files(package: Path | None) -> dict[str, str]:
    """``examples/data.py`` -> digest, for every file of the package: its sources and the
    recordings it ships and reads (``examples/recordings/``)."""
    if package is None:
        return {PACKAGE: "not found"}
    root = package.parent
    files = [
        path for path in package.rglob("*") if path.is_file() and "__pycache__" not in path.parts
    ]
    return _file_digests(root, files)


def installed_distributions() -> dict[str, str]:
    """Normalized name -> version of every distribution on ``sys.path``, read from the names of
    the ``.dist-info`` folders alone (importlib.metadata reads each one's metadata: 10x slower)."""
    installed = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info") and "-" in name:
                distribution, version = name.removesuffix(".dist-info").rsplit("-", 1)
                installed.setdefault(_normalized(distribution), version)
    return installed


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def backend_label(installed: dict[str, str] | None = None) -> str:
    """What decides JAX's default backend and devices, read without importing jax."""
    installed = installed if installed is not None else installed_distributions()
    plugins = sorted(
        f"{name} {version}"
        for name, version in installed.items()
        if name.startswith(JAX_PLUGIN_PREFIXES)
    )
    accelerators = sorted(
        path.name
        for pattern in ("nvidia[0-9]*", "kfd", "accel[0-9]*")
        for path in Path("/dev").glob(pattern)
    )
    # The NVIDIA driver names each GPU's model: a swapped card changes the label.
    for information in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        lines = information.read_text(encoding="utf-8").splitlines()
        model = next((line for line in lines if line.startswith("Model")), "Model: unknown")
        accelerators.append(model.split(":", 1)[1].strip())
    parts = {
        "jax plugins": ", ".join(plugins) or "none",
        "accelerators": ", ".join(accelerators) or "none",
        "cpu": f"{_cpu_model()} x {os.cpu_count()}",
    }
    return "; ".join(f"{name}={value}" for name, value in parts.items())


def _cpu_model() -> str:
    # The same reading as examples.backend.cpu_model, which cannot be imported here: importing
    # the examples package imports JAX, the very second the key must not cost.
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def tool_versions(
    names: tuple[str, ...] = EXECUTING_TOOLS, installed: dict[str, str] | None = None
) -> str:
    installed = installed if installed is not None else installed_distributions()
    return ", ".join(f"{name} {installed.get(_normalized(name), 'absent')}" for name in names)


@dataclass(frozen=True)
class Environment:
    """The ingredients shared by every key of one build, read once at its start."""

    package: dict[str, str]
    lock: str
    python: str
    backend: str
    tools: str
    jax_variables: str = ""
    numeric_variables: str = ""
    rendering: dict[str, str] = field(default_factory=dict)
    build_code: dict[str, str] = field(default_factory=dict)

    installed: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    memo: Cache | None = field(default=None, compare=False, repr=False)  # reach.py's results
    _reach: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def read(cls, project_root: Path, config: Any = None) -> Environment:
        """``config``: MkDocs' config, whose Markdown settings render every block's output."""
        lock = project_root / "uv.lock"
        installed = installed_distributions()
        rendering = {}
        if config is not None:
            rendering = {"markdown": digest(canonical(extra.markdown_settings(config)))}
            rendering |= {name: digest(data) for name, data in extra.auto_appended(config).items()}
            rendering["rendering tools"] = tool_versions(extra.RENDERING_TOOLS, installed)
        return cls(
            package=package_files(examples_package_dir()),
            lock=digest(lock.read_bytes()) if lock.is_file() else "no uv.lock",
            python=f"{platform.python_implementation()} {sys.version.split()[0]}",
            backend=backend_label(installed),
            tools=tool_versions(installed=installed),
            jax_variables=extra.variables(extra.JAX_VARIABLES),
            numeric_variables=extra.variables(extra.NUMERIC_VARIABLES),
            rendering=rendering,
            build_code={name: digest(data) for name, data in extra.build_code().items()},
            installed=installed,
            memo=Cache.for_project("reach", project_root),
        )

    def ingredients(self, code: str, rendered: bool = False, **own: str) -> dict[str, str]:
        """The key's ingredients for ``code`` (all the code of one cache entry); ``rendered``:
        the entry holds HTML rendered with the page's Markdown settings."""
        ingredients = dict(own)
        ingredients |= {"uv.lock": self.lock, "python": self.python, "tools": self.tools}
        ingredients["numeric variables"] = self.numeric_variables
        ingredients |= self.build_code
        if rendered:
            ingredients |= self.rendering
        if _USES_JAX.search(code):
            ingredients |= self.reached(code)
            ingredients[BUILD_CALLS_INGREDIENT] = self.build_calls()
            ingredients["backend"] = self.backend
            ingredients["jax variables"] = self.jax_variables
        return ingredients

    def reached(self, code: str, through_package: bool = True) -> dict[str, str]:
        """What the key holds of the package for ``code`` (``reach.py``): each module it runs,
        cut to what it reaches, and the data files; or, where the analysis is unsure, every
        file. ``examples``: which of the two, and why. The build's own calls are not in it
        (``build_calls``)."""
        if PACKAGE in self.package:  # not found
            return dict(self.package)
        if "memo" not in self._reach:  # the analysis is a function of these and of the code
            self._reach["memo"] = key_of(self.package, self.build_code, self.python)
        key = key_of("reach" if through_package else "build calls", self._reach["memo"], code)
        if key in self._reach:  # asked before in this build (ahead of its page, then by it)
            return self._reach[key]
        stored = self.memo.read_mapping(key).entry if self.memo else None
        if stored is not None:  # analysed by an earlier build: saves parsing the package
            self._reach[key] = stored
            return stored
        if "package" not in self._reach:  # read once, at the first output that needs it
            self._reach["package"] = reach.Package.read(examples_package_dir(), self.package)
        found, unsure = self._reach["package"].ingredients(code, through_package)
        if unsure is not None:
            found = self.package | {PACKAGE: f"whole package: {unsure}"}
        else:
            found |= {PACKAGE: "what the code reaches"}
        if self.memo:
            self.memo.write_mapping(key, found)
        self._reach[key] = found
        return found

    def build_calls(self) -> str:
        """One digest of what the build's own calls in the package reach (``BUILD_CALLS``:
        the label, the caption, the environment): ``reach.py`` with ``through_package`` False,
        the modules defining them and what they call, ``__init__.py``'s own lines, the data
        files. The same for every output of a build: computed at the first."""
        if "build calls digest" not in self._reach:
            calls = self.reached(BUILD_CALLS, through_package=False)
            self._reach["build calls digest"] = digest(canonical(calls))
        return self._reach["build calls digest"]

    def described(self, config: Any = None) -> list[tuple[str, str]]:
        """(ingredient, its value in this build) for everything an output's key holds, and what
        else decides a reuse: the one list of what a build reads (the Build report prints it;
        ``config``: MkDocs' config, for the Markdown extensions' names)."""
        package = [name for name in self.package if "/" in name]
        appended = [(name, value) for name, value in self.rendering.items() if "/" in name]
        extensions = ", ".join(map(str, config.markdown_extensions)) if config else "(not read)"
        extensions += f" (with their options: {self.rendering.get('markdown', '')[:12]})"
        ignored = "; ".join(f"{name}: {why}" for name, why in extra.IGNORED_VARIABLES.items())
        rows = [
            (
                "code",
                "a block's source and options; a session: all its blocks, snippets expanded; a "
                "notebook: its text (what it reaches: its code cells alone)",
            ),
            (
                f"{PACKAGE} package (code that uses jax or {PACKAGE})",
                f"of its {len(package)} files: each module the code runs (importing {PACKAGE} runs "
                "__init__.py and what it imports), cut to what the code reaches: module-level "
                "statements, and whole every function and class reached from the code and from "
                "module-level statements; other functions' bodies left out. Every "
                "data file (recordings). The whole package where the analysis is unsure "
                "(dynamic imports, getattr on a module, exec, eval, star imports)",
            ),
            (
                f"what the build itself calls in {PACKAGE} (code that uses jax or {PACKAGE})",
                "one digest, apart from the code's own reach: what backend_report, "
                "machine_label and verify.environment reach, their modules, and __init__.py's "
                "own lines (not the modules it imports): the label a worker or kernel prints",
            ),
            ("uv.lock", self.lock[:12]),
            ("Python", self.python),
            ("executing tools", self.tools),
            ("the build's own code", ", ".join(self.build_code) or "(none)"),
            ("Markdown extensions and options (blocks)", extensions),
            ("rendering tools (blocks)", self.rendering.get("rendering tools", "(not read)")),
        ]
        rows += [(f"{name} (appended to every page)", value[:12]) for name, value in appended]
        rows += [
            (f"backend label (code that uses jax or {PACKAGE})", self.backend),
            (
                f"environment variables (code that uses jax or {PACKAGE})",
                f"{_prefixes(extra.JAX_VARIABLES)}; set: {self.jax_variables}",
            ),
            (
                "environment variables (every block)",
                f"{_prefixes(extra.NUMERIC_VARIABLES)}; set: {self.numeric_variables}",
            ),
            ("left out on purpose", ignored),
            (
                "files the block read while it ran (stored with the output, checked before reuse)",
                "any opened for reading but Python's own, compiled modules, /proc, /sys, /dev",
            ),
        ]
        return rows


def _prefixes(names: tuple[str, ...]) -> str:
    return ", ".join(name + "*" if name.endswith("_") else name for name in names)
