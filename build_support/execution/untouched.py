"""What the build records of where a block ran, without starting a JAX backend for it.

Every block that imports ``jax`` or the course package records where it ran: the "computed on"
label and the environment ``verify`` compares (``block_worker.Worker.said_of_run``). Both ask
JAX for its devices, which starts the backend: ~25 ms of a worker's CPU and ~2,000 page faults,
for a block that may never have computed with JAX (it formats a number, draws a flowchart).

For such a block the answer is a fact of the worker's starting state, not of the block: every
worker forked from the same template, with the same package, that the block left *untouched*
(no backend started, and the same environment variables, JAX settings, backend factories and
package functions the answer calls, as at its start) gives the same answer. So the build keeps
the first answer an untouched worker computed (``Template.untouched_said``, per package
version, for this process: never stored) and hands it to the next workers of that template,
which reply with it when they too are untouched. A worker that was touched, or a timed block,
computes its own, as before.
"""

from __future__ import annotations

import hashlib
import os
import sys


def state(package: str) -> str:
    """A digest of what the answer depends on besides the machine and the package's code."""
    parts: list[object] = [sorted(os.environ.items())]
    jax = sys.modules.get("jax")
    if jax is not None:
        from jax._src import xla_bridge

        parts += [sorted((k, repr(v)) for k, v in jax.config.values.items())]
        parts += [sorted(getattr(xla_bridge, "_backend_factories", {}))]
    for module, name in ((package, "backend_report"), (f"{package}.verify", "environment")):
        parts.append(id(getattr(sys.modules.get(module), name, None)))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def backend_started() -> bool:
    """JAX has started a backend in this process (True where that cannot be told)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge._backends)
    except (ImportError, AttributeError):
        return True
