"""Paths, the build command and the built-page reader shared by the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
# Builds of copies reuse the checkout's wheel cache: its entries are keyed on their content.
WHEEL_CACHE = ROOT / ".cache" / "wheel"
SECTION_PAGE = "p5-9-1-gpus-and-parallel-processing"


def mkdocs_build(config: Path, site_dir: Path) -> subprocess.CompletedProcess[str]:
    """Run the strict build, the only build, and return what it printed."""
    # The same switches as the Makefile (see there).
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1"}
    env.setdefault("COURSE_WHEEL_CACHE", str(WHEEL_CACHE))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(config),
            "-d",
            str(site_dir),
        ],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def page(site: Path, name: str = SECTION_PAGE) -> BeautifulSoup:
    """The built page in folder ``name`` of ``site`` (default: the section page), parsed."""
    # Imported here: the numeric tests also run where only jax, numpy and pytest are
    # installed (benchmarks/gpu_check.sh on a GPU machine), without the docs stack.
    from bs4 import BeautifulSoup

    return BeautifulSoup((site / name / "index.html").read_text(), "html.parser")
