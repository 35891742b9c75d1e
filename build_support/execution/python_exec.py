"""A ``python exec`` block's code run and rendered through markdown-exec's public names only.

``format_python`` is markdown-exec's exported formatter entry point, ``base_format``, given a
``run`` of ours: it reads the fence's options (source, result, tabs, workdir, width, ...) and
renders the output as markdown-exec does, while ``run`` executes the code in the globals the
build gives it (a session's, owned by its ``sessions.Session``, or fresh ones for a block
alone), collecting what the code prints as markdown-exec's own python formatter does.

A block's exception leaves ``run`` as it was raised: ``base_format`` handles only its own
``ExecutionError``, so nothing is logged and nothing caught; ``guard`` turns it into the
block's failure, naming page and block.
"""

from __future__ import annotations

import re
import sys
from functools import partial
from io import StringIO
from types import ModuleType
from typing import Any

from .fence_options import block_id

# The file name a block's code is compiled under, as markdown-exec names a block with an id;
# guard.py reads it back from tracebacks (`_BLOCK_FILE`). Every block here has an id.
FILE_NAME = "<code block: id {id}>"


def format_python(namespace: dict[str, Any], /, **options: Any) -> str:
    """The block's HTML: markdown-exec's rendering of what ``run`` printed in ``namespace``."""
    from markdown_exec import base_format  # imported on use: a cached build needs none of it

    # "python" for `py` fences too, as markdown-exec's own python formatter renders them.
    return str(base_format(language="python", run=partial(run, namespace=namespace), **options))


def run(
    code: str,
    *,
    namespace: dict[str, Any],
    returncode: int | None = None,  # a shell's exit code; Python has none to check
    session: str | None = None,  # its globals are ``namespace``
    id: str = "",
    **extra: Any,
) -> str:
    """Execute ``code`` in ``namespace`` and return what it printed (``print`` in its globals
    writes to the output, as under markdown-exec); whatever it raises is raised."""
    filename = FILE_NAME.format(id=block_id({"id": id}))
    # Libraries expect a function's module to exist (dataclasses, pickle): as markdown-exec
    # does, the block is a module of its own, named after the block.
    module_name = re.sub(r"[^a-zA-Z\d]+", "_", filename)
    namespace["__name__"] = module_name
    sys.modules[module_name] = ModuleType(module_name)
    output = StringIO()
    namespace["print"] = partial(_print, output)
    # dont_inherit: the block is compiled without this module's `from __future__` imports.
    exec(compile(code, filename, "exec", dont_inherit=True), namespace)
    return output.getvalue()


def _print(output: StringIO, *values: Any, end: str = "\n", **ignored: Any) -> None:
    """``print`` in a block, as markdown-exec's: every value to the output, space-separated."""
    output.write(" ".join(str(value) for value in values) + end)
