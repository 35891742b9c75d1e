"""The execution cache: what an output depends on, and entries that are checked when read.

An entry is reused only when every ingredient of its key is the same as when it was stored:

- the code (a block's source and options; for a session, every block of the session);
- for code that uses the ``examples`` package: each of the package's files, its sources and
  the recordings it reads (``examples/recordings/``) alike;
- ``uv.lock``, the Python version, and the versions of the tools that execute the code;
- the build's own code (``build_support/*.py``);
- for code that uses ``jax`` or ``examples``: a label of the backend JAX would pick, and every
  set variable that JAX, XLA or the accelerators' runtimes read (``ingredients.JAX_VARIABLES``);
- for every block: the variables that change what NumPy or its BLAS compute
  (``ingredients.NUMERIC_VARIABLES``);
- for a block (its output is HTML): the page's Markdown settings, the files appended to every
  page and the rendering libraries' versions (``build_support/ingredients.py``).

The backend label is read without importing jax (that costs about a second, more than a whole
build with nothing to run): the installed JAX plugin distributions (``jax-cuda12-plugin``,
``libtpu``, ...: what JAX can pick from), the accelerators the OS shows (NVIDIA and AMD device
files) and the CPU; with the variables above, JAX picks its backend and devices from these.

Entries are JSON mappings in the store's ``execution`` cache (build_support/store.py: under
``.cache/``, or ``$COURSE_CACHE_DIR``), checksummed and written atomically there: an entry that
is truncated, edited, unreadable or not a mapping is a miss, and the output runs again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ingredients as extra
from . import named_cache, settings, store

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

_USES_EXAMPLES = re.compile(r"\bexamples\b")
_USES_JAX = re.compile(r"\b(?:jax|examples)\b")


def fresh() -> bool:
    return settings.current().fresh


def digest(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


# ---------------------------------------------------------------- ingredients


def examples_package_dir() -> Path | None:
    """The folder of the ``examples`` package Python would import (found, not imported)."""
    spec = importlib.util.find_spec("examples")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _file_digests(root: Path, paths: list[Path]) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): digest(path.read_bytes()) for path in sorted(paths)}


def package_files(package: Path | None) -> dict[str, str]:
    """``examples/data.py`` -> digest, for every file of the package: its sources and the
    recordings it ships and reads (``examples/recordings/``)."""
    if package is None:
        return {"examples": "not found"}
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
        model = next(
            (line for line in information.read_text().splitlines() if line.startswith("Model")),
            "Model: unknown",
        )
        accelerators.append(model.split(":", 1)[1].strip())
    parts = {
        "jax plugins": ", ".join(plugins) or "none",
        "accelerators": ", ".join(accelerators) or "none",
        "cpu": f"{_cpu_model()} x {os.cpu_count()}",
    }
    return "; ".join(f"{name}={value}" for name, value in parts.items())


def _cpu_model() -> str:
    # The same reading as examples.timing.cpu_model, which cannot be imported here: importing
    # the examples package imports JAX, the very second the key must not cost.
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
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
        if _USES_EXAMPLES.search(code):
            ingredients |= self.package
        if _USES_JAX.search(code):
            ingredients["backend"] = self.backend
            ingredients["jax variables"] = self.jax_variables
        return ingredients


def key_of(ingredients: dict[str, str]) -> str:
    return digest(canonical(ingredients))


def why_it_ran(previous: dict[str, str] | None, current: dict[str, str]) -> list[str]:
    """What changed since the last time this output was stored, in words."""
    if previous is None:
        return ["no cache entry"]
    names = sorted(set(previous) | set(current), key=_reason_order)
    changed = [name for name in names if previous.get(name) != current.get(name)]
    if not changed:
        return ["no cache entry"]
    return [_reason(name, previous.get(name), current.get(name)) for name in changed]


def _reason_order(name: str) -> tuple[int, str]:
    return (0 if "/" in name or name == "examples" else 1, name)


def _reason(name: str, before: str | None, after: str | None) -> str:
    if "/" in name:
        if before is None:
            return f"`{name}` added"
        return f"`{name}` removed" if after is None else f"`{name}` changed"
    if name == "backend":
        return f"backend changed ({after})"
    if name == "python":
        return f"Python changed ({before} -> {after})"
    if name.endswith(" variables"):
        return f"environment changed ({after})"
    words = {
        "tools": "tool versions changed",
        "source": "its source changed",
        "options": "its options changed",
        "session": "a block of its session changed",
        "kernel": "the notebook's kernel changed",
        "markdown": "the Markdown settings changed",
        "rendering tools": "rendering tool versions changed",
    }
    return words.get(name, f"{name} changed")


# ---------------------------------------------------------------- storage


@dataclass
class Lookup:
    payload: dict[str, Any] | None
    corrupt: bool = False  # an entry was there but could not be used: a miss all the same


@dataclass
class ExecutionCache:
    """Executed outputs (``store``/``load``) and each output's last ingredients (``remember``),
    in the store under ``root``; a fault is a miss, reported once by the store."""

    root: Path
    read_enabled: bool = True
    corrupt_found: list[str] = field(default_factory=list)
    name: str = "execution"

    def __post_init__(self) -> None:
        self._cache = named_cache.Cache(self.name, store.FileStore(self.root))

    @classmethod
    def for_project(cls, project_root: Path) -> ExecutionCache:
        return cls(root=store.store_root(project_root), read_enabled=not fresh())

    def load(self, key: str) -> Lookup:
        if not self.read_enabled:
            return Lookup(None)
        found = self._cache.read_mapping(key)
        if found.value is not None and found.value.get("key") != key:
            named_cache.log.warning("%s: entry %s holds another key: a miss", self.name, key[:12])
        elif found.fault is None:
            return Lookup(found.value)
        self.corrupt_found.append(key)
        return Lookup(None, corrupt=True)

    def store(self, key: str, payload: dict[str, Any]) -> None:
        self._cache.write_mapping(key, {**payload, "key": key})

    def last_ingredients(self, identity: str) -> dict[str, str] | None:
        """The ingredients this output (page + block) had the last time it was stored."""
        return self._cache.read_mapping(store.key_of("last", identity)).value

    def remember(self, identity: str, ingredients: dict[str, str]) -> None:
        if self.last_ingredients(identity) != ingredients:  # a read is cheaper than a write
            self._cache.write_mapping(store.key_of("last", identity), ingredients)

    def size_bytes(self) -> int:
        return store.FileStore(self.root).size_bytes(self.name)
