"""``python -m examples`` follows Python's command-line conventions (argparse): help on stdout
with exit 0, one line a command; a word it does not understand named, with the usage, exit 2;
counts in the singular where there is one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from examples.verify import verify
from testkit.project import ROOT

COMMANDS = ["turnaround", "sweep", "verify"]


def run_examples(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "examples", *args],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_command_on_one_line_on_stdout(flag):
    run = run_examples(flag)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: python -m examples")
    lines = run.stdout.splitlines()
    for name in COMMANDS:
        (listed,) = [ln for ln in lines if ln.split()[:1] == [name]]
        said = listed.split(None, 1)[1]  # the command's help on its own line, not wrapped
        assert said[1:] in run_examples(name, "--help").stdout  # its description, capitalised
    assert "--version" in run.stdout
    assert run.stderr == ""


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_its_own_help(command):
    run = run_examples(command, "--help")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"usage: python -m examples {command} [-h]")
    assert "usage" not in run.stdout.split("\n", 1)[1]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["bogus"], "invalid choice: 'bogus'"),
        (["turnaround", "extra"], "unrecognized arguments: extra"),
        (["sweep", "--fast"], "unrecognized arguments: --fast"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_a_word_not_understood_is_named_with_the_usage(args, named):
    run = run_examples(*args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("usage: python -m examples")
    assert named in run.stderr


def test_a_misspelt_command_is_named_with_the_one_it_was_probably_meant_to_be():
    run = run_examples("sweeep")
    assert run.returncode == 2
    assert "invalid choice: 'sweeep'" in run.stderr
    assert "did you mean `python -m examples sweep`?" in run.stderr


def block(block_id: str) -> dict:
    return {"page": "p.md", "block_id": block_id, "source": "print(1)", "output": "1\n"}


def timed(block_id: str) -> dict:
    return {"page": "p.md", "block_id": block_id, "timed": True}


@pytest.mark.parametrize(
    ("blocks", "words"),
    [
        ([block("a")], "Running the 1 block of version v1 shown with its output"),
        ([block("a"), block("b")], "Running the 2 blocks of version v1 shown with their output"),
        ([block("a"), timed("t")], "; the 1 that prints timings is listed, not compared:"),
        ([timed("t"), timed("u")], "; the 2 that print timings are listed, not compared:"),
        # A block of a section is compared at its section's version, as its header shows it.
        ([block("a") | {"section": "P1-2"}], "Running the 1 block of P1-2 v2 shown"),
        ([block("a") | {"section": "P1-2"}, block("b")], " of P1-2 v2, version v1 shown"),
    ],
)
def test_verify_counts_one_block_in_the_singular(blocks, words):
    lines: list[str] = []
    expected = {"version": "v1", "sections": {"P1-2": "v2"}, "environment": {}, "blocks": blocks}
    printed = subprocess.CompletedProcess([], 0, stdout="1\n", stderr="")
    verify(expected, run=lambda source: printed, out=lines.append)
    assert words in lines[0]
