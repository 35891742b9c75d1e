"""Numbers quoted in the prose come from the code: ``{{ live.name }}`` in a page becomes the
value ``examples.prose_numbers()`` gives for ``name``. An unknown name fails the build.

The numbers are computed as an executed block of ``PROSE_NUMBERS`` would be, in a worker of
its own (the build imports neither the package nor JAX for them), and cached like one
(``BuildState.cached_value``): a build where nothing it reaches in the ``examples`` package,
``uv.lock`` and the backend has changed does not run it.
"""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{\{\s*live\.(\w+)\s*\}\}")


PROSE_NUMBERS = """\
import json

from examples import prose_numbers

print(json.dumps({name: str(value) for name, value in prose_numbers().items()}))
"""


def on_page_markdown(markdown, page, config, files):
    if "live." not in markdown:
        return markdown
    from build_support.execution import state  # loaded by hooks/execution.py

    numbers = state.current().cached_value("prose_numbers", PROSE_NUMBERS)
    if numbers is None:  # not in the store, and not computed by this build (RENDER_ONLY=1)
        return markdown

    def substitute(match: re.Match[str]) -> str:
        name = match[1]
        if name not in numbers:
            raise ValueError(
                f"{page.file.src_uri}: unknown live number {match[0]!r}; "
                f"examples.prose_numbers() gives {sorted(numbers)}"
            )
        return numbers[name]

    return _PLACEHOLDER.sub(substitute, markdown)
