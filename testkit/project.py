"""Where things are: the project's root, the manuscript's section and its pages, the tests'
golden files, and how an executed block is written in a page's Markdown."""

from __future__ import annotations

import re

from build_support import section
from build_support.build_command import ROOT

__all__ = [
    "ARTIFACTS",
    "AXE",
    "EXEC_FENCE",
    "FENCE",
    "GOLDEN",
    "MANUSCRIPT_SECTION",
    "MEASURED_PAGE",
    "ROOT",
    "SECTION_PAGE",
]

MANUSCRIPT_SECTION = section.by_id("P5-9.1")
"""The section whose manuscript the golden files hold (``tests/golden/``), read from the course
model as the build reads it; the tests that hold for every section read ``section.sections()``."""

SECTION_PAGE = MANUSCRIPT_SECTION.name
"""That section's page's name: its Markdown is ``docs/{SECTION_PAGE}.md``, its built folder
``{SECTION_PAGE}/``."""

MEASURED_PAGE = f"{MANUSCRIPT_SECTION.slug}-measured"
"""The section's companion page (``docs/{MEASURED_PAGE}.md``): the turnaround table, the
settings sweep and the batch across devices, timed when the site is built. They left the section
page so that it stays light on a phone (issue 22)."""

GOLDEN = ROOT / "tests" / "golden"
"""The manuscript's expected outputs and diagram."""

ARTIFACTS = ROOT / "test-artifacts"
"""What the tests leave for a person to look at: screenshots, logs (not checked)."""

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
"""axe-core, injected into pages by the browser tests."""

FENCE = r'^[ \t]*`{3,}[ \t]*(?:python|py)\b[^\n]*\bexec="(?!no"|off"|false"|0")[^\n]*'
"""The opening line of an executed Python fence, however many backticks or whatever true value
its ``exec=`` has (a pattern, for ``re.MULTILINE``)."""
EXEC_FENCE = re.compile(FENCE + r'\bid="([^"]+)"', re.MULTILINE)
"""Finds the id of every executed Python block of a page's Markdown (``findall``)."""


def free_section_id(root=ROOT) -> str:
    """The first of P5-9.2, P5-9.3, ... that no section of the project at ``root`` has taken:
    what a test adds beside the sections an author has added (``make new-section``)."""
    import itertools

    taken = {one.id for one in section.sections(root)}
    return next(f"P5-9.{n}" for n in itertools.count(2) if f"P5-9.{n}" not in taken)
