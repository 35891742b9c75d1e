"""Numbers quoted in the prose come from the code: ``{{ live.name }}`` in a page becomes the
value ``examples.prose_numbers()`` gives for ``name``. An unknown name fails the build.

The numbers are cached like an executed block of ``_prose_numbers``' code (``build_support``):
a build where nothing it reaches in the ``examples`` package, ``uv.lock`` and the backend has
changed does not import the package (nor JAX) for them.
"""

from __future__ import annotations

import inspect
import re

_PLACEHOLDER = re.compile(r"\{\{\s*live\.(\w+)\s*\}\}")


def _prose_numbers() -> dict[str, str]:
    from examples import prose_numbers  # imported late: `mkdocs serve` reloads examples

    return {name: str(value) for name, value in prose_numbers().items()}


def on_page_markdown(markdown, page, config, files):
    if "live." not in markdown:
        return markdown
    from build_support.execution import state  # loaded by hooks/execution.py

    code = inspect.getsource(_prose_numbers)  # the key holds what it reaches in the package
    numbers = state.current().cached_value("prose_numbers", _prose_numbers, code)

    def substitute(match: re.Match[str]) -> str:
        name = match[1]
        if name not in numbers:
            raise ValueError(
                f"{page.file.src_uri}: unknown live number {match[0]!r}; "
                f"examples.prose_numbers() gives {sorted(numbers)}"
            )
        return numbers[name]

    return _PLACEHOLDER.sub(substitute, markdown)
