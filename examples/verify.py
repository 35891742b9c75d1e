"""``python -m examples verify``: does this machine print what the book shows?

The wheel a version of the site serves carries ``expected-outputs.json``: the source and the
output of every block its pages show with a text output, taken from the execution record of
the build that printed the pages, and the environment that build computed them in. ``verify``
runs each block in a fresh Python, in a folder of its own, as a reader who copied it would, and
prints one line per block: same, different (with a short diff), or failed (with its error).
Blocks that print timings are listed, never compared. A block that prints the devices it ran
on (``jax.devices()``, ``cpu:0 holds rows ...``) prints other names on another backend: where
its output differs from the book's only in those names (``CpuDevice(id=0)`` for
``CudaDevice(id=0)``, ``cpu:0`` for ``gpu:0``; ids, counts and every other character compared),
it is "same but for the device names", which says on what each ran and is not a difference.
Then it prints how this environment differs from the build's. It exits with 1 when a block
differs or fails, or when this installation carries no expected outputs (a checkout, or a wheel
built outside the site build).
"""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

EXPECTED_OUTPUTS = "expected-outputs.json"  # put into the wheel by hatch_build.py
BLOCK_TIMEOUT_S = 600
DIFF_LINES = 8  # changed lines shown under a block that differs
SAME, DIFFERENT, FAILED, TIMED = "same", "different", "failed", "not compared (timings)"
SAME_BUT_DEVICES = "same but for the device names"
# A device's kind where a block prints it: JAX's device objects and its short platform names.
_DEVICE_KIND = re.compile(
    r"\b(?:Cpu|Cuda|Rocm|Tpu|Metal|Gpu)Device(?=\(id=\d+\))"
    r"|\b(?:cpu|gpu|cuda|rocm|tpu|METAL)(?=:\d+\b)"
)
# The line a traceback ends with, ``ValueError: ...``; JAX may print a note after it.
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?::(?: .*)?)?$")


@dataclass(frozen=True)
class Outcome:
    block_id: str
    status: str
    details: list[str] = field(default_factory=list)  # a short diff, or the error's traceback
    error: str = ""  # said after the status: a failed block's last traceback line, or devices

    def lines(self) -> list[str]:
        first = f"{self.block_id}: {self.status}" + (f": {self.error}" if self.error else "")
        return [first, *(f"    {line}" for line in self.details)]


def load_expected() -> dict | None:
    """The expected outputs this installation carries, or None when it carries none."""
    resource = files("examples").joinpath(EXPECTED_OUTPUTS)
    return json.loads(resource.read_text(encoding="utf-8")) if resource.is_file() else None


def environment() -> dict[str, str]:
    """What can make a block print something else: the same names on the build and here."""
    import platform

    import jax
    import numpy

    try:
        backend, devices = jax.default_backend(), str(jax.device_count())
    except Exception as error:  # JAX starts no backend here: every block that uses it fails
        reason = (str(error).splitlines() or [""])[0][:60]
        backend = devices = f"none ({type(error).__name__}{': ' if reason else ''}{reason})"
    return {
        "Python": platform.python_version(),
        "jax": jax.__version__,
        "numpy": numpy.__version__,
        "backend": backend,
        "device count": devices,
    }


def run_block(source: str) -> subprocess.CompletedProcess[str]:
    """Run ``source`` as a copied script: this Python, a fresh process, an empty folder."""
    with tempfile.TemporaryDirectory(prefix="verify-") as folder:
        script = Path(folder) / "block.py"
        script.write_text(source + "\n", encoding="utf-8")
        try:
            return subprocess.run(
                [sys.executable, script.name],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=BLOCK_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(
                script.name, 1, "", f"TimeoutError: still running after {BLOCK_TIMEOUT_S} s"
            )


def short_diff(expected: str, printed: str, limit: int = DIFF_LINES) -> list[str]:
    """The lines that differ: ``- `` as the book shows them, ``+ `` as printed here."""
    changed = [
        f"{line[0]} {line[1:]}"
        for line in difflib.unified_diff(
            expected.splitlines(), printed.splitlines(), n=0, lineterm=""
        )
        if line[:1] in "-+" and not line.startswith(("---", "+++"))
    ]
    if len(changed) > limit:
        return [*changed[:limit], f"... and {len(changed) - limit} more changed lines"]
    return changed


def check(block: dict, run=run_block) -> Outcome:
    """Run one block (``run(source)``) and compare what it prints with the book's output."""
    if block.get("timed"):
        return Outcome(block["block_id"], TIMED)
    result = run(block["source"])
    if result.returncode != 0:
        return failure(block["block_id"], result)
    expected, printed = block["output"].rstrip("\n"), result.stdout.rstrip("\n")
    if printed == expected:
        return Outcome(block["block_id"], SAME)
    if _DEVICE_KIND.sub("DEVICE", printed) == _DEVICE_KIND.sub("DEVICE", expected):
        kinds = [
            ", ".join(dict.fromkeys(_DEVICE_KIND.findall(text))) for text in (expected, printed)
        ]
        said = f"the book's {kinds[0]}, this machine's {kinds[1]}"
        return Outcome(block["block_id"], SAME_BUT_DEVICES, error=said)
    return Outcome(block["block_id"], DIFFERENT, short_diff(expected, printed))


def failure(block_id: str, result: subprocess.CompletedProcess[str]) -> Outcome:
    """A failed block: its exception line, and the traceback lines just above it."""
    lines = result.stderr.rstrip().splitlines() or [f"exit status {result.returncode}"]
    at = max((n for n, line in enumerate(lines) if _EXCEPTION_LINE.match(line)), default=None)
    at = len(lines) - 1 if at is None else at
    return Outcome(block_id, FAILED, lines[max(0, at - 5) : at], error=lines[at])


def environment_lines(book: dict[str, str], here: dict[str, str]) -> list[str]:
    """A small table of the build's environment beside this one, then what differs."""
    names = list(dict.fromkeys([*here, *book]))
    width = max(len(name) for name in names) + 2
    column = max(len(value) for value in ["the book", *book.values()]) + 2
    lines = [f"{'':<{width}}{'the book':<{column}}this machine"]
    lines += [
        f"{name:<{width}}{book.get(name, '?'):<{column}}{here.get(name, '?')}" for name in names
    ]
    differs = [name for name in names if book.get(name) != here.get(name)]
    if differs:
        lines.append(f"Differs from the build: {', '.join(differs)}.")
    else:
        lines.append("Nothing differs from the build's environment.")
    return lines


def versions_of(expected: dict, blocks: list[dict]) -> str:
    """The versions ``blocks`` are compared at: each one's section at its own version, as the
    section's header shows it (``P5-9.1 v2026.07.20``), else the release's (``version v…``)."""
    sections = expected.get("sections", {})
    named = [
        f"{block['section']} {sections[block['section']]}"
        if block.get("section") in sections
        else f"version {expected['version']}"
        for block in blocks
    ]
    return ", ".join(dict.fromkeys(named)) or f"version {expected['version']}"


def verify(expected: dict, only: list[str] | None = None, run=run_block, out=print) -> int:
    """Check every block in ``expected`` (or only the ids in ``only``); 1 when one differs."""
    blocks = expected["blocks"]
    if only:
        unknown = sorted(set(only) - {block["block_id"] for block in blocks})
        if unknown:
            known = ", ".join(block["block_id"] for block in blocks)
            out(f"no block {', '.join(unknown)} in version {expected['version']}; known: {known}")
            return 2
        blocks = [block for block in blocks if block["block_id"] in only]
    timed = sum(bool(block.get("timed")) for block in blocks)
    compared = len(blocks) - timed
    each = "block" if compared == 1 else "blocks"
    listed = ""
    if timed:
        prints = "prints timings is" if timed == 1 else "print timings are"
        listed = f"; the {timed} that {prints} listed, not compared"
    out(
        f"Running the {compared} {each} of {versions_of(expected, blocks)} shown with "
        f"{'its' if compared == 1 else 'their'} output, each in a fresh Python "
        f"({sys.executable}){listed}:"
    )
    outcomes = []
    for block in blocks:
        outcome = check(block, run)
        outcomes.append(outcome)
        for line in outcome.lines():
            out(line)
        sys.stdout.flush()
    counts = {status: 0 for status in (SAME, SAME_BUT_DEVICES, DIFFERENT, FAILED, TIMED)}
    for outcome in outcomes:
        counts[outcome.status] += 1
    if not counts[SAME_BUT_DEVICES]:  # said only where a block ran on other devices
        del counts[SAME_BUT_DEVICES]
    out("\n" + ", ".join(f"{count} {status}" for status, count in counts.items()) + ".")
    out("\nWhere the book's outputs were computed, and this machine:")
    for line in environment_lines(expected["environment"], environment()):
        out(line)
    return 1 if counts[DIFFERENT] or counts[FAILED] else 0


def main(block_ids: list[str]) -> int:
    expected = load_expected()
    if expected is None:
        print(
            f"This installation of examples carries no expected outputs ({EXPECTED_OUTPUTS}): "
            "install the wheel that a version of the site serves (the line in its install "
            "box), which carries them, and run this again.",
            file=sys.stderr,
        )
        return 1
    return verify(expected, only=block_ids)
