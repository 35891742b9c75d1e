"""The limits on every executed block, in one place: time, output and memory, and how a failure
is said on the terminal where the build goes on.

They are enforced where the block cannot reach them (``workers.py``): the block runs in a
worker process, and the build kills its process group past any of them. A notebook's kernel
gets the same three (``notebooks.py``).
"""

from __future__ import annotations

import sys

# The slowest block today takes ~1.2 s (a fresh build of this 2-core machine), the largest
# output is ~20 KB of HTML: both limits leave room for a slower machine and a bigger chart.
DEFAULT_TIMEOUT_S = 60.0  # the same as a notebook cell's default (the setting cell_timeout_s)
MAX_OUTPUT_BYTES = 1024 * 1024
MEMORY_SETTING = "memory_limit_gib in mkdocs.yml's extra.build"
TIMEOUT_OPTION = "timeout"  # ```python exec="on" id="slow" timeout="120"
TIMEOUT_HINT = f'default {DEFAULT_TIMEOUT_S:g} s; the fence option timeout="120" sets another'
OUTPUT_SAID = "MAX_OUTPUT_BYTES in build_support/execution/limits.py"


def timeout_s(value: str | None) -> float | str:
    """A block's time limit in seconds (its ``timeout`` option), or what is wrong with it."""
    if value is None:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        return f'timeout="{value}": expected a number of seconds greater than 0'
    return seconds


def terminal_error(message: str) -> None:
    """An error line in MkDocs' own layout, on stderr, outside its strict-mode warning count
    (used where the build goes on, or cannot report it itself)."""
    first, *rest = message.splitlines()
    continued = "".join(f"{' ' * 11}{line}\n" for line in rest)  # as mkdocs indents them
    sys.stderr.write(f"{'ERROR':<8}-  {first}\n{continued}")
    sys.stderr.flush()
