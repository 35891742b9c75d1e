"""The benchmark scripts run and print their tables; speed itself is judged by `make bench`."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

from testkit.project import ROOT


def run_benchmark(script: str, *args: str) -> str:
    """What ``benchmarks/<script> <args>`` prints (it must exit 0)."""
    command = [sys.executable, f"benchmarks/{script}", *args]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def benchmark_module(name: str):
    """``benchmarks/<name>.py`` imported; the scripts import their siblings by plain name."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_throughput_script_prints_every_section_and_the_target_count():
    out = run_benchmark(
        "throughput.py", "--rows", "4096", "1048576", "--features", "3", "--repeats", "1"
    )
    for heading in (
        "## Throughput: score_batch, numpy @ and a read probe",
        "## Passing numpy arrays into a jitted function",
        "## A new batch shape compiles again",
        "## Small batches: the cost of one call",
    ):
        assert heading in out
    assert "<= 1.1x numpy: " in out  # the target is judged at the large size
    assert "targets: " in out and " met, " in out


TRIAL_SIZES = ("--rows", "400", "--large-rows", "2000", "--repeats", "1")


def test_settings_throughput_script_prints_each_target_as_met_or_missed():
    out = run_benchmark("settings_throughput.py", *TRIAL_SIZES)
    assert "a trial run" in out  # not the targets' sizes: said so
    for line in ("rate vs numpy: ", "speed-up over the loop: ", "B =      4: score_batch"):
        assert line in out
    assert out.count("(target <= 1.2x): ") == 3
    assert out.count("write bandwidth into a new output (XLA, jitted fill)") == 2
    assert out.count("limit: ") == 2
    assert "targets: " in out and " met, " in out


def test_gpu_check_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(ROOT / "benchmarks" / "gpu_check.sh")], check=True)


def imported_packages(path: Path) -> set[str]:
    """The top-level names of the absolute imports of a Python file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_benchmarks_share_helpers_with_the_tests_through_testkit_only():
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    assert scripts
    for script in scripts:
        assert "tests" not in imported_packages(script), script


def test_neither_the_build_nor_the_wheel_imports_testkit():
    build = [*(ROOT / "build_support").rglob("*.py"), *(ROOT / "hooks").glob("*.py")]
    wheel = [*(ROOT / "examples").rglob("*.py"), ROOT / "hatch_build.py"]
    assert len(build) > 10 and len(wheel) > 10
    importing = [path for path in build + wheel if "testkit" in imported_packages(path)]
    assert not importing


def test_the_build_and_serve_benchmarks_state_their_targets():
    for script, target in (
        ("build_time.py", "MAX_NO_CHANGE_RATIO = 2.5"),  # issue 37
        ("serve_latency.py", "MAX_RATIO = 1.5"),
        ("nav_scale.py", "SERVE_TARGETS = {400: 0.15, 40: 1.0}"),  # issue 50
    ):
        assert "usage:" in run_benchmark(script, "--help")
        assert target in (ROOT / "benchmarks" / script).read_text()


def test_code_shape_counts_lines_of_modules_functions_and_classes(tmp_path):
    module = tmp_path / "module.py"
    body = "".join(f"    x{i} = {i}\n" for i in range(70))
    module.write_text(f"def long():\n{body}\n\nclass Small:\n    pass\n")
    lines = run_benchmark("code_shape.py", str(tmp_path)).splitlines()
    assert lines[0] == "1 modules, 75 lines"
    assert f"    71  {module}:1 long" in lines
    assert f"     2  {module}:74 Small" in lines
    smallest = lines.index("smallest modules (each a job of its own?):")
    assert lines[smallest + 1] == f"    75  {module}"
    assert lines[-1] == "modules over 500 lines: 0; functions over 60 lines: 1 (missed)"


def test_the_course_scale_benchmark_generates_pages_that_call_the_package():
    assert "usage:" in run_benchmark("course_scale.py", "--help")
    course_scale = benchmark_module("course_scale")
    page = course_scale.page(7)
    assert page.count('```python exec="on" id="course-7-') == len(course_scale.BLOCKS) == 8
    counting = ("scalar_multiply_count", "scaling_table")  # what examples/counting.py defines
    calls = sum(any(name in block for name in counting) for block in course_scale.BLOCKS)
    assert calls == course_scale.USES_COUNTING == 2  # a quarter of the blocks
    assert course_scale.PRODUCT.search((ROOT / "examples" / "counting.py").read_text())  # it edits
    assert "usage:" in run_benchmark("parallel_blocks.py", "--help")


def test_main_thread_script_maps_the_bundle_and_counts_passes_beside_the_stock_page(built_site):
    out = run_benchmark("main_thread.py", "--runs", "1", "--site", str(built_site))
    for line in ("elements restyled, all passes", "per phase", "style and layout passes forced"):
        assert line in out
    # Material's bundle read through its source map: its own modules are named (which ones a
    # single run's samples land in varies with the machine's load: any of its TypeScript files)
    assert re.search(r"\b[\w/-]+/index\.ts\b", out) and " (library)" in out, out
    restyled = next(line for line in out.splitlines() if line.startswith("elements restyled"))
    section, stock = (int(figure) for figure in restyled.split()[4:6])
    assert section > stock > 0


def test_lighthouse_script_judges_the_gzip_deploy_beside_a_stock_reference():
    text = (ROOT / "benchmarks" / "lighthouse.py").read_text()
    assert "REFERENCE_MIN = 98" in text and '"tbt": SECTION_TBT_MS' in text
    usage = run_benchmark("lighthouse.py", "--help")
    assert "--plain" in usage and "--attempts" in usage and "--gzip" not in usage


def test_lighthouse_script_prints_each_run_of_the_section_page_beside_its_medians():
    """One build's TBT can differ twofold between runs (where Lantern places FCP): the author
    sees every run's score, TBT and FCP, not only the medians."""
    lighthouse = benchmark_module("lighthouse")
    runs = [
        {"performance": 95, "tbt": 160.0, "fcp": 2010.0, "main thread": 2000.0, "failed": []},
        {"performance": 88, "tbt": 330.0, "fcp": 1436.0, "main thread": 2400.0, "failed": []},
        {"performance": 91, "tbt": 280.0, "fcp": 1440.0, "main thread": 2200.0, "failed": []},
    ]
    for run in runs:
        run.update({"main thread: Style & Layout": 700.0, "long tasks": 3, "longest task": 250})
    row = lighthouse.medians(runs)
    assert (row["performance"], row["tbt"]) == (91, 280.0)
    lines = lighthouse.main_thread_lines(row)
    assert lines[0] == "main thread 2,200 ms: Style & Layout 700"
    assert lines[-1] == (
        "each run: performance 95, 88, 91; TBT 160, 330, 280 ms; FCP 2.01, 1.44, 1.44 s"
    )
