"""Paths, the build command and the built-page reader shared by the tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bs4 import BeautifulSoup

from build_support.site_tools import ROOT, SECTION_PAGE, mkdocs_build

__all__ = ["GOLDEN", "ROOT", "SECTION_PAGE", "mkdocs_build", "page"]

GOLDEN = ROOT / "tests" / "golden"


def page(site: Path, name: str = SECTION_PAGE) -> BeautifulSoup:
    """The built page in folder ``name`` of ``site`` (default: the section page), parsed."""
    # Imported here: the numeric tests also run where only jax, numpy and pytest are
    # installed (benchmarks/gpu_check.sh on a GPU machine), without the docs stack.
    from bs4 import BeautifulSoup

    return BeautifulSoup((site / name / "index.html").read_text(), "html.parser")
