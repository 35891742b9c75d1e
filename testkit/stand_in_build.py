"""A stand-in builder driven by the very module ``make build`` runs
(``build_support/site_swap.py``): a few files written into the staging folder, its progress
noted as MkDocs' hooks note it, so that the staging, the lock and the swap are tested at a tenth
of a second a build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from build_support import site_swap

FILES = 12
# A stand-in builder: FILES files naming the build, each after a pause, then "finished".
BUILDER = """\
import os, pathlib, sys, time
site = pathlib.Path(os.environ["COURSE_SITE_DIR"])
noted = pathlib.Path(os.environ["COURSE_BUILD_PROGRESS"])
site.mkdir(parents=True)
for n in range({files}):
    noted.write_text(f"page p{{n}}.md, block 'b{{n}}'")
    (site / f"p{{n}}.html").write_text(sys.argv[1])
    time.sleep(float(sys.argv[2]))
while os.environ.get("GATE") and not os.path.exists(os.environ["GATE"]):
    time.sleep(0.01)  # held open by the test
noted.write_text(sys.argv[3] if len(sys.argv) > 3 else "finished")
sys.exit(int(sys.argv[4]) if len(sys.argv) > 4 else 0)
"""


def start(
    root: Path, name: str, pause: float = 0.02, *more: str, gate: Path | None = None
) -> subprocess.Popen:
    """The driver with the stand-in builder; one given a ``gate`` finishes once it exists."""
    builder = [sys.executable, "-c", BUILDER.format(files=FILES), name, str(pause), *more]
    command = [sys.executable, "-m", "build_support.site_swap", f"build {name}", "--", *builder]
    env = os.environ | {"PYTHONPATH": str(Path(site_swap.__file__).parents[1])}
    env |= {"GATE": str(gate)} if gate else {}
    return subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
