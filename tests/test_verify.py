"""``python -m examples verify`` (examples/verify.py) and the expected outputs the wheel carries.

The report (same, different with a short diff, failed with its error, timings listed), the
environment table, a checkout without expected outputs, and how the outputs come into the
wheel: from the build's execution record, exactly as the page shows them, through the wheel's
digest, never through the ``examples/`` folder. The reader's side, with the wheel installed, is
in tests/test_reader_path.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest

from build_support import section
from build_support.publishing import record, wheel_build
from examples import verify as verify_module
from examples.verify import check, environment, environment_lines, short_diff, verify
from testkit.project import ROOT, SECTION_PAGE
from testkit.shown_blocks import shown_blocks
from testkit.site import page, served_wheel

BOOK_VERSION = "v0-test"


def expected(*blocks: dict, environment_here: bool = True) -> dict:
    book = environment() if environment_here else {**environment(), "backend": "gpu"}
    return {"version": BOOK_VERSION, "environment": book, "blocks": list(blocks)}


def _not_needed():
    pytest.fail("every shown block recorded its environment: none is computed anew")


def block(block_id: str, source: str, output: str) -> dict:
    return {"page": "page.md", "block_id": block_id, "source": source, "output": output}


def run_report(data: dict, only=None) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = verify(data, only=only, out=lambda text: lines.extend(text.split("\n")))
    return code, lines


def test_each_block_is_reported_same_different_failed_or_timed_and_the_rest_still_run():
    code, lines = run_report(
        expected(
            block("prints-a", "print('a')", "a\n"),
            block("prints-b", "print('b')\nprint('x')", "c\nx\n"),
            block("raises", "import math\nraise ValueError(f'boom {math.pi:.2f}')", "never\n"),
            {"page": "page.md", "block_id": "timings", "timed": True},
            block("after-the-failure", "print('still runs')", "still runs\n"),
        )
    )
    assert code == 1
    assert "prints-a: same" in lines
    at = lines.index("prints-b: different")
    assert lines[at + 1 : at + 3] == ["    - c", "    + b"]  # the book's line, then this machine's
    assert "raises: failed: ValueError: boom 3.14" in lines
    assert any(line.strip().startswith("Traceback") for line in lines)  # and where it came from
    assert "timings: not compared (timings)" in lines
    assert "after-the-failure: same" in lines
    assert "2 same, 1 different, 1 failed, 1 not compared (timings)." in lines


def test_all_same_exits_0_and_says_nothing_differs():
    code, lines = run_report(expected(block("prints-a", "print('a')", "a\n\n")))
    assert code == 0
    assert lines[-1] == "Nothing differs from the build's environment."


def test_a_block_is_compared_with_what_it_prints_not_with_its_exit():
    # A block that prints to stderr and exits 0 is judged by its stdout only, as the page is.
    source = "import sys\nprint('warned', file=sys.stderr)\nprint('a')"
    assert check(block("b", source, "a\n")).status == "same"
    assert check(block("b", "import sys\nsys.exit(3)", "")).status == "failed"


def test_only_the_named_blocks_run_and_an_unknown_name_is_refused():
    data = expected(block("one", "print(1)", "1\n"), block("two", "print(3)", "2\n"))
    code, lines = run_report(data, only=["one"])
    assert code == 0 and "one: same" in lines and not any("two" in line for line in lines)
    code, lines = run_report(data, only=["three"])
    assert code == 2
    assert lines == [f"no block three in version {BOOK_VERSION}; known: one, two"]


def test_the_diff_is_short():
    book = "\n".join(f"line {n}" for n in range(30))
    assert short_diff(book, book.replace("line 7", "line seven")) == ["- line 7", "+ line seven"]
    lines = short_diff(book, book.upper(), limit=4)
    assert lines == [
        "- line 0",
        "- line 1",
        "- line 2",
        "- line 3",
        "... and 56 more changed lines",
    ]


def test_the_environment_table_names_what_differs():
    book = {"Python": "3.11.7", "jax": "0.10.2", "backend": "cpu", "device count": "1"}
    here = {**book, "backend": "gpu", "device count": "8"}
    lines = environment_lines(book, here)
    assert lines[0].split() == ["the", "book", "this", "machine"]
    assert lines[3].split() == ["backend", "cpu", "gpu"]
    assert lines[-1] == "Differs from the build: backend, device count."
    code, lines = run_report(expected(block("a", "print(1)", "1\n"), environment_here=False))
    assert code == 0  # the outputs decide; the environment explains
    assert lines[-1] == "Differs from the build: backend."


def test_a_checkout_has_no_expected_outputs_and_verify_says_so():
    assert verify_module.load_expected() is None  # the editable install: examples/ as written
    run = subprocess.run(
        [sys.executable, "-m", "examples", "verify"], capture_output=True, text=True, cwd=ROOT
    )
    assert run.returncode == 1
    assert "carries no expected outputs (expected-outputs.json)" in run.stderr


SOURCE_ABOVE = (
    '<div class="highlight"><pre><span></span><code><span class="nb">print</span>'
    '<span class="p">(</span><span class="s2">"a &lt; b"</span><span class="p">)</span>\n'
    '</code></pre></div>\n<div class="highlight"><pre><span></span><code>'
    '<a id="__codelineno-4-1" href="#__codelineno-4-1"></a>a &lt; b\n</code></pre></div>'
)


def test_the_recorded_output_is_the_text_under_the_block():
    assert record.shown_output({"source": "above", "result": "text"}, SOURCE_ABOVE) == "a < b\n"
    below = {"source": "below", "result": "text"}
    assert record.shown_output(below, SOURCE_ABOVE) == 'print("a < b")\n'
    assert record.shown_output({"result": "text"}, SOURCE_ABOVE) is None  # source not shown
    assert record.shown_output({"source": "above"}, SOURCE_ABOVE) is None  # Markdown output


def test_the_expected_outputs_take_the_record_and_list_timed_blocks():
    outputs = [
        record.Output("p.md", "shown", "d1", False, "print(1)", "1\n", {"Python": "3"}),
        record.Output("p.md", "chart", "d2", False),  # no text output: not carried
        record.Output("p.md", "table", "d3", True),
    ]
    data = record.expected_outputs(outputs, "v1", current_environment=_not_needed)
    assert data == {
        "version": "v1",
        "environment": {"Python": "3"},
        "blocks": [
            {"page": "p.md", "block_id": "shown", "source": "print(1)", "output": "1\n"},
            {"page": "p.md", "block_id": "table", "timed": True},
        ],
    }
    stale = [record.Output("p.md", "shown", "d1", False, "print(1)", "1\n", None)]
    assert record.expected_outputs(stale, "v1", lambda: {"Python": "now"})["environment"] == {
        "Python": "now"
    }


def test_the_wheels_digest_takes_the_expected_outputs():
    digest = wheel_build.wheel_digest
    assert digest(ROOT, "v1", "https://s.invalid/", b"a") != digest(
        ROOT, "v1", "https://s.invalid/"
    )
    assert digest(ROOT, "v1", "https://s.invalid/", b"a") != digest(ROOT, "v1", "u", b"b")


def test_the_served_wheel_carries_what_the_page_shows_from_the_execution_record(built_site):
    with zipfile.ZipFile(served_wheel(built_site)) as archive:
        carried = json.loads(archive.read("examples/expected-outputs.json"))
    # Taken from the record the build wrote, not from a copy of its own.
    recorded = json.loads((built_site / record.RECORD_FILE).read_text())
    outputs = [record.Output(**output) for output in recorded["outputs"]]
    expected = record.expected_outputs(outputs, carried["version"], _not_needed)
    # ... each block tagged with the section its page belongs to, and every section's version
    for block in expected["blocks"]:
        if (held := section.section_of(block["page"])) is not None:
            block["section"] = held.id
    course = {one.id: one.version for one in section.sections()}
    assert carried == expected | {"sections": course}
    # Exactly what the page shows: each displayed source (as copied) and the text under it.
    shown, _ = shown_blocks(built_site)
    compared = [b for b in carried["blocks"] if not b.get("timed")]
    assert sorted((b["block_id"], b["source"].rstrip(), b["output"]) for b in compared) == sorted(
        (b.block_id, b.source, b.output) for b in shown
    )
    timed = {b["block_id"] for b in carried["blocks"] if b.get("timed")}
    assert timed == {o.block_id for o in outputs if o.expected_to_change}
    assert carried["environment"] == environment()  # the build ran in this environment
    # Never written where the execution cache would take it for a change of the package.
    assert not (ROOT / "examples" / verify_module.EXPECTED_OUTPUTS).exists()


def test_the_install_boxes_name_verify(built_site):
    for name in ("", SECTION_PAGE):
        box = page(built_site, name).select_one("div.install-box")
        assert "python -m examples verify" in box.get_text(), f"{name or 'home'}: no verify"


def test_a_jax_that_starts_no_backend_is_reported_not_raised(monkeypatch):
    import jax

    def broken():
        raise AssertionError  # what jax raises for JAX_PLATFORMS=cuda without a GPU

    monkeypatch.setattr(jax, "default_backend", broken)
    here = environment()
    assert here["backend"] == here["device count"] == "none (AssertionError)"
    assert here["jax"] == jax.__version__


def test_the_error_is_the_exception_line_even_with_a_note_after_it():
    stderr = (
        'Traceback (most recent call last):\n  File "b.py", line 2, in <module>\n'
        "    score(x)\njax.errors.JaxRuntimeError: INTERNAL: no GPU\n--------------------\n"
        "For simplicity, JAX has removed its internal frames from the traceback.\n"
    )
    outcome = verify_module.failure("b", subprocess.CompletedProcess("b.py", 1, "", stderr))
    assert outcome.lines()[0] == "b: failed: jax.errors.JaxRuntimeError: INTERNAL: no GPU"
    assert outcome.details[-1] == "    score(x)"
    empty = verify_module.failure("b", subprocess.CompletedProcess("b.py", -9, "", ""))
    assert empty.lines() == ["b: failed: exit status -9"]


SHARDED_ON_CPU = (
    "devices = [CpuDevice(id=0)]\nscores = [0.2, 1.19]\ncpu:0 holds rows 0 to 1 (2 rows)\n"
)


def test_a_block_that_only_names_other_devices_is_same_but_for_the_device_names():
    """The book is built on the CPU; a reader on a GPU prints `CudaDevice(id=0)` and `gpu:0`
    where the book says `CpuDevice(id=0)` and `cpu:0`: said, and not a difference. Any other
    character (an id, a count, a number) still makes it different."""
    on_gpu = SHARDED_ON_CPU.replace("CpuDevice", "CudaDevice").replace("cpu:0", "gpu:0")
    code, lines = run_report(
        expected(
            block("sharded", f"print({on_gpu!r}, end='')", SHARDED_ON_CPU),
            block("prints-a", "print('a')", "a\n"),
        )
    )
    assert code == 0
    said = "sharded: same but for the device names: the book's CpuDevice, cpu, this machine's "
    assert said + "CudaDevice, gpu" in lines
    assert "1 same, 1 same but for the device names, 0 different, 0 failed, 0 not compared " in (
        "\n".join(lines)
    )
    for changed in ("CudaDevice(id=1)", "0.2, 1.18", "gpu:0 holds rows 0 to 2"):
        original = {"CudaDevice(id=1)": "CudaDevice(id=0)", "0.2, 1.18": "0.2, 1.19"}.get(
            changed, "gpu:0 holds rows 0 to 1"
        )
        other = on_gpu.replace(original, changed)
        assert other != on_gpu
        outcome = check(block("sharded", f"print({other!r}, end='')", SHARDED_ON_CPU))
        assert outcome.status == "different", changed
    # Where nothing ran elsewhere, the summary does not mention device names.
    assert "same but for the device names" not in "\n".join(
        run_report(expected(block("prints-a", "print('a')", "a\n")))[1]
    )
