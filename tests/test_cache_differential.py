"""Cached equals fresh, after each change an author makes (build_support/caching/check_cache.py).

A small site (one page: a session whose first block is a snippet, a block that prints Markdown
with a glossary word and a file it reads, a session that turns JAX's x64 on for itself, a block
that prints JAX's devices and dtype, and
blocks that reach modules planted in the copy's ``examples``: through a re-export, a constant
imported from another module, a module-level side effect, a dynamic import) is built with the
cache and fresh, side by side, by ``make check-cache``'s own ``check``; then one change at a
time is applied and the check runs again. An edit to the package re-runs what it can change
and reuses what it cannot (``build_support/caching/reach.py``). The tests run in file order
and build on each other: each change lands on a cache that holds the previous state. The last
one plants a stale entry and shows that the check names it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from build_support.caching.cache import ExecutionCache
from build_support.caching.check_cache import check
from build_support.caching.store import FileStore
from build_support.execution import sessions, state
from testkit.project import ROOT
from testkit.small_site import site_config

# The Markdown extensions whose options and files a page's output depends on.
EXTENSIONS = """\
  - abbr
  - attr_list
  - md_in_html
  - pymdownx.highlight:
      css_class: highlight
  - pymdownx.snippets:
      check_paths: true
      auto_append:
        - docs/includes/abbreviations.md
"""
# The copy's own hook, by a relative path as the project's mkdocs.yml names it.
MKDOCS_YML = site_config("Differential", hooks=["hooks/execution.py"], extensions=EXTENSIONS)
MKDOCS_YML += "exclude_docs: |\n  includes/\n  snippets/\n"
PAGE = """\
# A small page

```python exec="on" session="s" id="s-setup"
--8<-- "docs/snippets/setup.py"
```

```python exec="on" session="s" id="s-print" source="above" result="text"
print(rows, multiplies)
```

```python exec="on" id="prose"
from pathlib import Path

print("Every batch is scored at once:", Path("docs/snippets/unit.txt").read_text())
```

```python exec="on" session="leaky" id="leaky"
import jax
jax.config.update("jax_enable_x64", True)  # this session's own: no other block may see it
print("x64 on in this session:", jax.numpy.asarray(1.0).dtype)
```

```python exec="on" id="devices" result="text"
import jax
import jax.numpy as jnp

print("devices =", jax.devices())
print("dtype =", jnp.asarray(1.0).dtype)
```

```python exec="on" id="greet" result="text"
from examples import greet

print(greet("row"))
```

```python exec="on" id="printed-array" result="text"
import examples  # noqa: F401  (importing it sets how NumPy prints)
import numpy as np

print(np.array([1 / 3]))
```

```python exec="on" id="dynamic" result="text"
import importlib

name = "hidden" + "_module"
print("hidden value", importlib.import_module("examples." + name).value())
```
"""
# Modules planted in the copy's package: ``greet`` is re-exported by ``__init__`` and uses a
# constant of another module; ``print_style`` is imported by ``__init__`` for its side effect
# alone; ``hidden_module`` is imported by no module, only dynamically.
PLANTED = {
    "examples/wording.py": 'PREFIX = "hello"\n',
    "examples/greeting.py": (
        'from .wording import PREFIX\n\n\ndef greet(name):\n    return f"{PREFIX} {name}"\n'
    ),
    "examples/print_style.py": "import numpy as np\n\nnp.set_printoptions(precision=3)\n",
    "examples/hidden_module.py": "def value():\n    return 41\n",
}
REEXPORTS = "from . import print_style  # noqa: F401\nfrom .greeting import greet  # noqa: F401\n"
SETUP = """\
from examples import scalar_multiply_count

rows = [1, 2, 3]
multiplies = scalar_multiply_count(len(rows), 2)
"""
ABBREVIATIONS = "*[batch]: A group of samples processed together.\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("differential") / "project"
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("examples", "build_support"):
        shutil.copytree(ROOT / name, project / name, ignore=ignore)
    (project / "hooks").mkdir()
    shutil.copy(ROOT / "hooks/execution.py", project / "hooks/execution.py")
    for name in ("uv.lock", "pyproject.toml"):  # the build names its package from pyproject's
        shutil.copy(ROOT / name, project / name)
    files = {
        "mkdocs.yml": MKDOCS_YML,
        "docs/index.md": PAGE,
        "docs/snippets/setup.py": SETUP,
        "docs/includes/abbreviations.md": ABBREVIATIONS,
        "docs/snippets/unit.txt": "one row at a time",
    } | PLANTED
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    init = project / "examples/__init__.py"
    init.write_text(init.read_text() + REEXPORTS)
    assert_cached_equals_fresh(project)  # the cache now holds every output
    return project


def assert_cached_equals_fresh(project: Path, **env: str) -> Path:
    out = project.parent / "check"
    found = check(project, out, env)
    assert found == [], "\n".join(found)
    fresh_report = (out / "fresh/build-report/index.html").read_text()
    assert "<td>reused</td>" not in fresh_report and "<td>ran</td>" in fresh_report
    return out


def edit(project: Path, name: str, old: str, new: str) -> None:
    path = project / name
    text = path.read_text()
    assert old in text, f"{old!r} not in {name}"
    path.write_text(text.replace(old, new, 1))


def cached_page(out: Path) -> str:
    return (out / "cached/index.html").read_text()


def test_a_blocks_jax_settings_reach_no_other_session_nor_the_cache(site):
    out = assert_cached_equals_fresh(site)
    page = cached_page(out)
    assert "x64 on in this session: float64" in page
    assert "dtype = float32" in page  # the block after it, in a worker of its own


def test_a_glossary_definition(site):
    edit(site, "docs/includes/abbreviations.md", "processed together", "scored at once")
    out = assert_cached_equals_fresh(site)
    assert '<abbr title="A group of samples scored at once.">batch</abbr>' in cached_page(out)


def test_a_markdown_extension_option(site):
    edit(site, "mkdocs.yml", "css_class: highlight", "css_class: code-box")
    out = assert_cached_equals_fresh(site)
    assert 'class="code-box"' in cached_page(out)


def test_a_snippet_included_in_a_session(site):
    edit(site, "docs/snippets/setup.py", "rows = [1, 2, 3]", "rows = [1, 2, 3, 4]")
    out = assert_cached_equals_fresh(site)
    assert "[1, 2, 3, 4] 8" in cached_page(out)
    # The key saw the snippet's new text before the session opened (snippets expanded).
    report = (out / "cached/build-report/index.html").read_text()
    assert "a block of its session changed" in report
    assert "did not match the cache entry" not in report


def test_jax_num_cpu_devices_and_back(site):
    out = assert_cached_equals_fresh(site, JAX_NUM_CPU_DEVICES="4")
    assert "CpuDevice(id=3)" in cached_page(out)
    out = assert_cached_equals_fresh(site)  # and a plain build after it shows one device again
    assert "CpuDevice(id=3)" not in cached_page(out)


def test_jax_enable_x64(site):
    out = assert_cached_equals_fresh(site, JAX_ENABLE_X64="1")
    assert "dtype = float64" in cached_page(out)


def test_a_module_added_to_and_removed_from_examples(site):
    module = site / "examples/extra.py"
    module.write_text('"""A module added by the author."""\n\nEXTRA = 1\n')
    assert_cached_equals_fresh(site)
    module.unlink()
    assert_cached_equals_fresh(site)


def test_a_file_a_block_reads(site):
    edit(site, "docs/snippets/unit.txt", "one row", "every row")
    out = assert_cached_equals_fresh(site)
    assert "every row at a time" in cached_page(out)
    report = (out / "cached/build-report/index.html").read_text()
    assert "<code>docs/snippets/unit.txt</code> changed (read by the block)" in report


def test_a_function_body(site):
    product = '* as_count("feature_count", feature_count)\n'
    edit(site, "examples/counting.py", product, product.replace("\n", " + 1\n"))
    out = assert_cached_equals_fresh(site)
    assert "[1, 2, 3, 4] 9" in cached_page(out)


def ran_and_reused(out: Path) -> dict[str, str]:
    """Block id -> "ran" or "reused", from the cached build's report."""
    report = (out / "cached/build-report/index.html").read_text()
    rows = re.findall(r"<td><code>([^<]+)</code></td><td>(ran|reused)</td>", report)
    return dict(rows)


def test_a_function_reached_only_through_a_reexport(site):
    edit(site, "examples/greeting.py", 'f"{PREFIX} {name}"', 'f"{PREFIX}, {name}!"')
    out = assert_cached_equals_fresh(site)
    assert "hello, row!" in cached_page(out)
    ran = ran_and_reused(out)
    assert ran["greet"] == "ran"
    # What cannot reach greet's body is reused: the session, a JAX block, NumPy's printing.
    assert ran["s-print"] == ran["devices"] == ran["printed-array"] == "reused", ran


def test_a_constant_imported_from_another_module(site):
    edit(site, "examples/wording.py", '"hello"', '"good day"')
    out = assert_cached_equals_fresh(site)
    assert "good day, row!" in cached_page(out)
    assert ran_and_reused(out)["greet"] == "ran"


def test_a_module_level_side_effect_in_a_module_the_block_never_names(site):
    edit(site, "examples/print_style.py", "precision=3", "precision=6")
    out = assert_cached_equals_fresh(site)
    assert "[0.333333]" in cached_page(out)
    assert ran_and_reused(out)["printed-array"] == "ran"


def test_a_dynamic_import(site):
    edit(site, "examples/hidden_module.py", "return 41", "return 42")
    out = assert_cached_equals_fresh(site)
    assert "hidden value 42" in cached_page(out)
    ran = ran_and_reused(out)
    assert ran["dynamic"] == "ran" and ran["greet"] == "reused", ran


def test_a_planted_stale_entry_is_named_by_the_check(site):
    cache = ExecutionCache(site / ".cache")
    planted = 0
    for path, _ in FileStore(cache.root).entries("execution"):
        payload = cache.load(path.name).entry or {}
        for block in payload.get("blocks", []):
            if block.get("id") == "s-print" and "[1, 2, 3, 4] 9" in block["html"]:
                block["html"] = block["html"].replace("[1, 2, 3, 4] 9", "[1, 2, 3, 4] 10")
                cache.store(path.name, {k: v for k, v in payload.items() if k != "key"})
                planted += 1
    assert planted >= 1  # every stored run of the session since the edit (one is the current)
    found = check(site, site.parent / "check")
    assert len(found) == 1, found
    assert found[0].startswith("index.html, block s-print: first difference at line ")
    assert "\n  cached: " in found[0] and "[1, 2, 3, 4] 10" in found[0]
    assert "\n  fresh:  " in found[0] and "[1, 2, 3, 4] 9" in found[0]


# ---------------------------------------------------------------- a session is one run


def test_a_session_that_disagrees_with_its_entry_is_shown_from_one_run(tmp_path, monkeypatch):
    """The page's Markdown says blocks A, B; the page renders A, B2 (as when a hook rewrites a
    block after the pre-parse). A is reused from the stored run until B2 shows the mismatch:
    then A runs again and the page shows A and B2 from that one run, which is stored."""
    runs = {"count": 0}

    def formatter(**options):  # each output names the run of the session it belongs to
        runs["count"] += options["code"] == "A"
        return f"<p>run {runs['count']}: {options['code']}</p>"

    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FRESH", raising=False)
    monkeypatch.setattr(sessions, "render", lambda execution, **o: formatter(**o))
    markdown = (
        '```python exec="on" session="s"\nA\n```\n\n```python exec="on" session="s"\nB\n```\n'
    )

    def build(*codes: str):
        build = state.start(ROOT)
        build.page = "page.md"
        sessions.read_sessions(build, "page.md", markdown)
        html = "".join(
            sessions.format_block(build, {"code": code, "session": "s"}) for code in codes
        )
        html = sessions.fill_sessions(build, "page.md", html)
        return html, [(run.ran, run.reasons) for run in build.runs]

    html, outcomes = build("A", "B")
    assert "run 1: A" in html and "run 1: B" in html
    html, outcomes = build("A", "B2")
    assert "run 2: A" in html and "run 2: B2" in html and "run 1" not in html
    assert outcomes == [(True, ["its session's blocks did not match the cache entry"])] * 2
    html, outcomes = build("A", "B2")  # stored: reused whole
    assert "run 2: A" in html and "run 2: B2" in html
    assert outcomes == [(False, [])] * 2


# ---------------------------------------------------------------- what a timing is compared on


def _timing_page(seconds: str, machine: str, winner: str) -> str:
    return (
        '<div class="exec-block" data-exec-id="timed" data-source="" data-result="">'
        f'<p class="measured-label"><em>Measured on this build: {machine}</em></p>'
        "<table><thead><tr><th>rows</th><th>loop (s)</th></tr></thead>"
        f"<tbody><tr><td>1,000</td><td>{seconds}</td></tr></tbody></table>"
        f"<ul><li>{winner} won at 1,000 rows.</li></ul><svg><path d='M{seconds}'/></svg></div>"
    )


def test_a_timing_is_compared_for_what_is_not_a_timing():
    from build_support.caching.compare import page_differences

    same = page_differences(
        "page.html",
        _timing_page("0.012", "cpu · 1 device", "The loop"),
        _timing_page("0.019", "cpu · 1 device", "score_batch"),
        {"timed"},
    )
    assert same == []  # numbers, and the sentences drawn from them, vary between runs
    other_machine = page_differences(
        "page.html",
        _timing_page("0.012", "cpu · 4 devices", "The loop"),
        _timing_page("0.012", "cpu · 1 device", "The loop"),
        {"timed"},
    )
    assert other_machine == [
        "page.html, timing block timed: first difference at line 2\n"
        "  cached: measured on: cpu · 4 devices\n"
        "  fresh:  measured on: cpu · 1 device"
    ]
    not_a_timing = page_differences(
        "page.html",
        _timing_page("0.012", "cpu", "The loop"),
        _timing_page("0.019", "cpu", "The loop"),
        set(),
    )
    assert len(not_a_timing) == 1 and "block timed: first difference" in not_a_timing[0]


def test_a_wheel_is_compared_member_by_member(tmp_path):
    """The wheel carries the book's expected outputs: a stale one is named by its member."""
    import zipfile

    from build_support.caching.compare import differences

    for side, score in (("cached", "0.9"), ("fresh", "0.2")):
        (tmp_path / side).mkdir()
        with zipfile.ZipFile(tmp_path / side / "course.whl", "w") as wheel:
            wheel.writestr("examples/__init__.py", "")
            wheel.writestr("examples/expected-outputs.json", f'{{\n"score": {score}\n}}\n')
    (found,) = differences(tmp_path / "cached", tmp_path / "fresh")
    member = "course.whl (examples/expected-outputs.json)"
    assert found.startswith(f"{member}: first difference at line 2")
    assert '"score": 0.9' in found and '"score": 0.2' in found
