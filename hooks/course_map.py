"""The course map's "published" states, read from the sections that exist.

``{{ course.status P5-9.2 }}`` in a page (the course map) becomes, where a section with that ID
exists (``build_support.section``: a page whose front matter has ``section_id``), a link to it,
``**Published:** [read P5-9.2](p5-9-2-....md).``, and otherwise ``**Not yet published.**``. So
a section's state changes when its page is added, and never by editing the map. A section that
the course map does not mention fails the build, naming what to add where (``make new-section``
adds the entry).
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError

from build_support import section

_STATUS = re.compile(r"\{\{\s*course\.status\s+(\S+?)\s*\}\}")
COURSE_MAP = "course-map.md"

_sections: list[section.Section] = []


def status(section_id: str, sections: list[section.Section]) -> str:
    """What the course map says of ``section_id``: published (a link to its page) or not yet."""
    found = next((one for one in sections if one.id == section_id), None)
    if found is None:
        return "**Not yet published.**"
    return f"**Published:** [read {found.id}]({found.page})."


def with_states(markdown: str, sections: list[section.Section], where: str) -> str:
    """``markdown`` with every ``{{ course.status ID }}`` filled; on the course map, a
    ``PluginError`` where a section has no entry there."""
    named = set(_STATUS.findall(markdown))
    if where == COURSE_MAP:
        missing = [one.id for one in sections if one.id not in named]
        if missing:
            raise PluginError(
                f"course map: no entry for section {', '.join(missing)}: add a heading and a "
                f"'{{{{ course.status {missing[0]} }}}}' line to docs/{COURSE_MAP} "
                "(make new-section writes both)"
            )
    return _STATUS.sub(lambda match: status(match[1], sections), markdown)


def on_config(config):
    global _sections
    _sections = section.sections(Path(config.config_file_path).parent)
    return config


def on_page_markdown(markdown, page, config, files):
    return with_states(markdown, _sections, page.file.src_uri)
