"""JAX's persistent compilation cache for the workers: a shape one worker compiled is loaded,
not compiled again, by the next worker and the next build.

Where: ``jax-compilation/<machine>/`` in the build's cache folder, ``<machine>`` a digest of what
a compiled program may depend on beyond JAX's own key (``machine_key``); inside it JAX keys each
entry by the program (its HLO), the compile options, the devices and the backend.

It can only save time: an entry holds what the same deterministic compiler made from the same
program for the same machine, and one JAX cannot read (a worker killed while writing it) is
compiled again. Not used by a timed block's worker (the page reports how long compiling takes),
nor under ``FRESH=1``, which reuses nothing: that build's workers share a folder of their own,
removed when its process ends. JAX's files in it are in no block's reads (``outside``).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .store import prune_least_used

FOLDER = "jax-compilation"
LIMIT_BYTES = 100 * 2**20
"""Past it, ``prune`` deletes the oldest entries when a build takes the folder. Not JAX's own
bound (``jax_compilation_cache_max_size``): it needs filelock, which the project does not
install, and locks every entry every worker reads or writes; this runs once per build."""


def machine_key() -> str:
    """What a compiled program may depend on that JAX's own key leaves out: JAX's and jaxlib's
    versions, the Python, the processor (XLA compiles for its instruction set) and the
    ``XLA_*``/``JAX_*`` variables."""
    from importlib.metadata import version

    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            wanted = ("model name", "flags", "Features", "CPU part")
            cpu = "".join(sorted({line for line in info if line.startswith(wanted)}))
    variables = sorted((k, v) for k, v in os.environ.items() if k.startswith(("XLA_", "JAX_")))
    parts = [
        version("jax"),
        version("jaxlib"),
        sys.version,
        platform.machine(),
        platform.processor(),
        cpu,
        repr(variables),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def directory(cache_dir: Path) -> str:
    """The folder a build's untimed workers share (``FRESH=1``: ``fresh_directory``)."""
    prune(cache_dir / FOLDER)
    return str((cache_dir / FOLDER / machine_key()).resolve())


def fresh_directory() -> str:
    """A folder of the process's own for a ``FRESH=1`` build (``state.PROCESS`` keeps it, one
    for every build of the process), deleted when the process ends."""
    folder = tempfile.mkdtemp(prefix="course-jax-compilation-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def prune(folder: Path, limit_bytes: int = LIMIT_BYTES) -> int:
    """The store's pruner on ``folder`` (every machine's entries), past ``limit_bytes``; how
    many it deleted. A worker that misses one compiles again: pruning can only cost time."""
    found = []
    for path in folder.rglob("*") if folder.is_dir() else ():
        with contextlib.suppress(OSError):
            if path.is_file():
                found.append((path, path.stat()))
    return prune_least_used(found, limit_bytes)


def enable(folder: str | None) -> None:
    """In a worker, before any block: JAX caches every program it compiles in ``folder``
    (however small or quick to compile), and loads it from there. None: no cache."""
    if not folder:
        return
    import jax

    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def outside(paths: Iterable[str], folder: str | None) -> set[str]:
    """``paths`` less those in the cache ``folder``: JAX's entries are in no block's key."""
    if not folder:
        return set(paths)
    inside = os.path.abspath(folder) + os.sep
    return {path for path in paths if not path.startswith(inside)}
