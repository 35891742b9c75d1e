"""Write a section's ID and version under its title, from the page's metadata.

The page's front matter holds ``section_id`` and ``version`` once; this hook prints them,
so the header line is never typed by hand in a second place.
"""

from __future__ import annotations

import re

_TITLE = re.compile(r"^# .+$", re.MULTILINE)


def on_page_markdown(markdown, page, config, files):
    section_id = page.meta.get("section_id")
    version = page.meta.get("version")
    if not section_id:
        return markdown
    if not version:
        raise ValueError(f"{page.file.src_uri}: front matter has section_id but no version")
    title = _TITLE.search(markdown)
    if title is None:
        raise ValueError(f"{page.file.src_uri}: a section page needs a '# Title' line")
    header = (
        f'\n\n<p class="section-meta">Section ID: <strong>{section_id}</strong> '
        f"Version: <strong>{version}</strong></p>\n"
    )
    return markdown[: title.end()] + header + markdown[title.end() :]
