"""Numbers quoted in the prose come from the code: ``{{ live.name }}`` in a page becomes the
value ``examples.prose_numbers()`` gives for ``name``. An unknown name fails the build."""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{\{\s*live\.(\w+)\s*\}\}")


def on_page_markdown(markdown, page, config, files):
    if "live." not in markdown:
        return markdown
    from examples import prose_numbers  # imported late: `mkdocs serve` reloads examples

    numbers = prose_numbers()

    def substitute(match: re.Match[str]) -> str:
        name = match[1]
        if name not in numbers:
            raise ValueError(
                f"{page.file.src_uri}: unknown live number {match[0]!r}; "
                f"examples.prose_numbers() gives {sorted(numbers)}"
            )
        return str(numbers[name])

    return _PLACEHOLDER.sub(substitute, markdown)
