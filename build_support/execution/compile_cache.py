"""JAX's persistent compilation cache for the workers: a shape one worker compiled is loaded,
not compiled again, by the next worker and the next build.

Where: ``jax-compilation/<machine>/`` in the build's cache folder (the ``cache_dir`` setting,
``.cache/``), ``<machine>`` a digest of what a compiled program may depend on beyond what JAX
itself keys on: JAX's and jaxlib's versions, the Python, the processor (its model and feature
flags: XLA compiles for the host's instruction set) and the ``XLA_FLAGS``/``JAX_*`` variables.
Inside it JAX keys each entry itself, by a hash of the program (its HLO), the compile options,
the devices, the backend and its version, and the flags that change compiling.

Why it can only save time: an entry holds the executable the same compiler made from the same
program for the same machine, and XLA's compiling is deterministic; an entry JAX cannot read
(a worker killed while writing it) is compiled again, with a warning. It is not used:

- by a timed block's worker (``timed="yes"``, or a session holding one): the page reports how
  long compiling takes, which a load from the cache would not be;
- under ``FRESH=1`` (``make build FRESH=1``, ``make publish``, check-cache's fresh side),
  which reuses nothing from an earlier build: the workers of that build share a folder of
  their own, removed when the build's process ends.

The files JAX reads and writes in it are not a block's reads (``reads.py``): they are in no key.
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
import threading
from collections.abc import Iterable
from pathlib import Path

from ..caching.store import prune_least_used

FOLDER = "jax-compilation"
LIMIT_BYTES = 100 * 2**20
"""Past it, ``prune`` deletes the oldest entries when a build takes the folder. Not JAX's own
bound (``jax_compilation_cache_max_size``): it needs the filelock package, which the project
does not install, and takes that lock around every entry every worker reads or writes, where
this prune runs once per build."""
_fresh: list[str] = []  # the folder of a FRESH=1 process, made once
_FRESH_MADE = threading.Lock()


def machine_key() -> str:
    """What a compiled program depends on that JAX's own key may leave out (module docstring)."""
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


def directory(cache_dir: Path, fresh: bool) -> str:
    """The folder a build's untimed workers share (``FRESH=1``: one of this process's own)."""
    if fresh:
        with _FRESH_MADE:  # workers are taken from several threads: one folder, deleted at exit
            if not _fresh:
                _fresh.append(tempfile.mkdtemp(prefix="course-jax-compilation-"))
                atexit.register(shutil.rmtree, _fresh[0], True)
        return _fresh[0]
    prune(cache_dir / FOLDER)
    return str((cache_dir / FOLDER / machine_key()).resolve())


def prune(folder: Path, limit_bytes: int = LIMIT_BYTES) -> int:
    """The store's pruner on ``folder`` (every machine's entries): the oldest written go first
    past ``limit_bytes``; how many. A worker that misses one compiles again: pruning can only
    cost time."""
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
