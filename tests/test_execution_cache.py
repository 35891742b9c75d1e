"""The execution cache never serves a stale output (build_support/caching/cache.py,
execution/sessions.py).

Every build here runs in a throw-away copy of the project (docs, hooks, the ``examples``
package, build_support, uv.lock), first on ``PYTHONPATH`` so that the copy's package is the
one imported, with the store of caches in the copy's own ``.cache/``. Each test changes one
ingredient and reads the Build report: exactly the outputs that depend on it ran again.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from build_support.caching.cache import ExecutionCache
from build_support.caching.store import FileStore
from testkit.author import make_dry_run
from testkit.build import copy_env, copy_project, mkdocs_build
from testkit.project import EXEC_FENCE, MEASURED_PAGE, ROOT, SECTION_PAGE
from testkit.serving import fetch_text, mkdocs_serve, wait_for_text
from testkit.site import page

NUMPY_BLOCK = "p5-9-1-practice-numpy"  # the manuscript's listing: numpy only, no `examples`
NOTEBOOK = "notebooks/p5-9-1-practice-in-jax.py"


def build(project: Path, site: str = "site", **extra_env: str):
    """A strict, cache-using build of the copy; returns {block id: (outcome, why)} and the site."""
    site_dir = project / site
    env = copy_env(project) | extra_env  # the copy's package, its own store (project/.cache)
    result = mkdocs_build(project / "mkdocs.yml", site_dir, fresh=False, env=env)
    assert result.returncode == 0, result.stderr[-5000:]
    assert "Ran ahead for nothing" not in result.stderr  # the plan read each fence as its page
    return report(site_dir), site_dir


def report(site_dir: Path) -> dict[str, tuple[str, str]]:
    table = page(site_dir, "build-report").select_one("table.build-report")
    rows = {}
    for row in table.select("tbody tr"):
        cells = [td.get_text() for td in row("td")]
        rows[cells[1]] = (cells[2], cells[3])
    return rows


def ran(rows) -> set[str]:
    return {block for block, (outcome, _) in rows.items() if outcome == "ran"}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy whose cache holds every output (one cold build)."""
    project = copy_project(tmp_path_factory.mktemp("project"))
    rows, _ = build(project)
    assert all(outcome == "ran" for outcome, _ in rows.values())
    assert {why for _, why in rows.values()} == {"no cache entry"}
    return project


@pytest.fixture
def edit(project):
    """Change a file of the copy for one test; it is put back afterwards."""
    saved: dict[Path, str] = {}

    def change(relative: str, old: str, new: str) -> None:
        path = project / relative
        text = saved.setdefault(path, path.read_text())
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new, 1))

    yield change
    for path, text in saved.items():
        path.write_text(text)
    if saved:  # back to the cached state: every output reused, the last ingredients restored
        rows, _ = build(project)
        assert ran(rows) == set()


def every_block(rows) -> set[str]:
    return set(rows)


def never_importing_examples(rows) -> set[str]:
    """The notebooks whose code never names ``examples`` (an author's tutorial, as JAX's): an
    edit to the package re-runs none of them (``notebooks/page.py``, ``code_cells``)."""
    from build_support.notebooks import formats
    from build_support.notebooks.page import code_cells

    kinds = {".py": formats.KIND_JUPYTEXT, ".ipynb": formats.KIND_IPYNB, ".md": formats.KIND_MYST}
    imports = re.compile(r"^\s*(?:import|from)\s+examples\b", re.MULTILINE)
    return {
        name
        for name in rows
        if name.startswith("notebooks/")
        and not imports.search(
            code_cells(kinds[Path(name).suffix], (ROOT / "docs" / name).read_text(encoding="utf-8"))
        )
    }


def test_nothing_changed_reuses_everything_and_a_prose_edit_runs_nothing(project, edit):
    rows, site = build(project)
    assert ran(rows) == set()
    # The reused timing says when and where it was measured, never "on this build".
    caption = page(site, MEASURED_PAGE).select_one("p.measured-label").get_text()
    assert (
        caption.startswith("Measured on 20")
        and " UTC on the machine that built it then: " in caption
    )
    assert caption.endswith("Reused by this build: nothing it depends on has changed since.")
    assert "Measured on this build" not in page(site).get_text()

    edit(f"docs/{SECTION_PAGE}.md", "The following analogy is the safest one.", "A safe analogy.")
    rows, site = build(project)
    assert ran(rows) == set()
    assert "A safe analogy." in page(site).get_text()  # the prose edit shows; outputs reused


def _store_files(store: Path) -> dict[Path, int]:
    """Every file of the store and its inode: a file written again (``os.replace``) has a new
    one; a hit only refreshes an entry's mtime."""
    return {path: path.stat().st_ino for path in store.rglob("*") if path.is_file()}


def test_a_build_with_nothing_changed_writes_no_entry_and_no_last_ingredients(project):
    """Issue 50: a build's bookkeeping in proportion to what changed. A nothing-changed build
    rewrites no record of an output's last ingredients (nor any entry of the store): only the
    store's size record (``.usage.json``, one small file) is written, by its prune."""
    build(project)  # any entry a previous test left to settle
    before = _store_files(project / ".cache")
    rows, _ = build(project)  # nothing changed
    assert ran(rows) == set()
    store = project / ".cache"
    written = {
        path.relative_to(store).as_posix()
        for path, inode in _store_files(store).items()
        if before.get(path) != inode
    }
    assert written <= {".usage.json"}, sorted(written)[:10]


def test_a_weight_in_examples_data_reruns_exactly_the_blocks_that_use_examples(project, edit):
    snippet = ROOT / "docs/snippets" / SECTION_PAGE / "practice_numpy.py"
    assert "examples" not in snippet.read_text()  # why the numpy block does not depend on it

    edit(
        "examples/data.py",
        "WEIGHTS: tuple[float, ...] = (0.4, 0.8, -0.3)",
        "WEIGHTS = (0.5, 0.8, -0.3)",
    )
    rows, site = build(project)
    assert ran(rows) == every_block(rows) - {NUMPY_BLOCK} - never_importing_examples(rows)
    assert {rows[block][1] for block in ran(rows)} == {"examples/data.py changed"}
    scores = page(site).select_one('div.exec-block[data-exec-id="p5-9-1-practice-jax"]')
    assert "scores_batch = [0.3, 1.21, 0.47, 1.3]" in scores.get_text()  # not the stale output


def test_a_function_body_in_examples_reruns_exactly_the_outputs_that_reach_it(project, edit):
    product = '* as_count("feature_count", feature_count)\n'
    edit("examples/counting.py", product, product.replace("\n", " + 1\n"))
    rows, site = build(project)
    # Every other output imports the package, so runs counting.py's module-level statements,
    # but none calls into it: their keys hold counting.py without its functions' bodies
    # (build_support/caching/reach.py).
    assert ran(rows) == {"p5-9-1-practice-jax", "p5-9-1-artifact-multiply-count", NOTEBOOK}
    assert {rows[block][1] for block in ran(rows)} == {"examples/counting.py changed"}
    practice = page(site).select_one('div.exec-block[data-exec-id="p5-9-1-practice-jax"]')
    assert "scalar multiply count = 13" in practice.get_text()


def test_a_uv_lock_change_reruns_every_block(project, edit):
    edit("uv.lock", "version = 1", "version = 1\n# a re-lock")
    rows, _ = build(project)
    assert ran(rows) == every_block(rows)
    assert {why for _, why in rows.values()} == {"uv.lock changed"}


def test_the_builds_own_code_in_a_subpackage_is_in_every_key_but_what_reads_the_build(
    project, edit
):
    """Every module under build_support/, subpackages included, is in every key
    (``ingredients.build_code``), but for those that only read what was built
    (``NOT_IN_ENTRIES``, by path: the Build report's module is one)."""
    edit(
        "build_support/execution/sessions.py",
        "\n\nfrom __future__",
        "\n# an edit\n\nfrom __future__",
    )
    rows, _ = build(project)
    assert ran(rows) == every_block(rows)
    assert {why for _, why in rows.values()} == {"build_support/execution/sessions.py changed"}

    edit(
        "build_support/publishing/report.py",
        "\n\nfrom __future__",
        "\n# an edit\n\nfrom __future__",
    )
    rows, _ = build(project)
    assert ran(rows) == set()


def test_a_different_backend_label_reruns_what_uses_jax_only(project):
    rows, _ = build(project, JAX_PLATFORMS="cpu")
    assert ran(rows) == every_block(rows) - {NUMPY_BLOCK}
    assert all(  # the variables JAX reads are in the key (build_support/caching/ingredients.py)
        why.startswith("environment changed (") and "JAX_PLATFORMS=cpu" in why
        for _, why in rows.values()
        if why
    )


def test_a_variable_jax_sets_on_its_import_reruns_nothing(project):
    """JAX's import sets TPU_SKIP_MDS_QUERY=1 in its process where it finds no TPU: a build
    process that imported JAX (as one under make serve may) holds it; it must not re-run every
    output (issue 50: 472 s at 400 pages)."""
    rows, _ = build(project, TPU_SKIP_MDS_QUERY="1")
    assert ran(rows) == set()


def test_a_corrupt_or_truncated_entry_is_run_again_never_shown(project):
    damaged = 0
    for path, _ in FileStore(project / ".cache").entries("execution"):
        text = path.read_text()
        if '"p5-9-1-practice-jax"' in text:
            path.write_text(text[: len(text) // 2])  # truncated
            damaged += 1
        elif '"p5-9-1-flowchart"' in text:
            path.write_text(text.replace("flowchart", "flowchart-tampered", 1))  # edited
            damaged += 1
    assert damaged >= 2  # one of each per backend label the earlier tests stored
    rows, site = build(project)
    assert ran(rows) == {"p5-9-1-practice-jax", "p5-9-1-flowchart"}
    assert rows["p5-9-1-practice-jax"][1] == rows["p5-9-1-flowchart"][1] == "cache entry corrupt"
    assert "tampered" not in (site / SECTION_PAGE / "index.html").read_text()
    rows, _ = build(project)
    assert ran(rows) == set()  # stored again, whole


def test_two_builds_at_once_do_not_corrupt_the_cache(tmp_path):
    project = copy_project(tmp_path / "project")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda site: build(project, site), ["site-a", "site-b"]))
    for rows, _ in results:  # each ran what the other had not stored yet, reused the rest
        assert "cache entry corrupt" not in {why for _, why in rows.values()}
    rows, _ = build(project, "site-c")
    assert ran(rows) == set()
    store = FileStore(project / ".cache")
    entries = store.entries("execution")
    assert entries and all(store.get("execution", path.name) for path, _ in entries)  # whole
    assert not [path for path, _ in entries if path.name.startswith(".tmp-")]


_HAMMER = """
import sys
from pathlib import Path
from build_support.caching.cache import ExecutionCache
cache, corrupt = ExecutionCache(Path(sys.argv[1])), 0
for i in range(300):  # one key, payloads of changing size, read back in between
    cache.store("k" * 64, {"writer": sys.argv[2], "blocks": ["x" * (1000 * (i % 7 + 1))]})
    corrupt += cache.load("k" * 64).fault is not None
print(corrupt)
"""


def test_two_processes_writing_one_entry_never_leave_it_half_written(tmp_path):
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _HAMMER, str(tmp_path), str(writer)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for writer in (1, 2)
    ]
    outputs = [writer.communicate(timeout=120)[0].strip() for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0]
    assert outputs == ["0", "0"]
    assert ExecutionCache(tmp_path).load("k" * 64).fault is None


# ---------------------------------------------------------------- mkdocs serve


def test_under_serve_an_edit_to_examples_shows_and_nothing_is_wrapped_twice(tmp_path):
    project = copy_project(tmp_path / "project")
    env = copy_env(project) | {"FRESH": ""}
    watched = ("--watch", "examples", "--watch", "hooks")
    with mkdocs_serve(project, env, tmp_path / "serve.log", *watched) as (_, base):
        section, report_url = f"{base}{SECTION_PAGE}/", f"{base}build-report/"
        wait_for_text(section, "scalar multiply count = 12")
        counting = project / "examples/counting.py"
        counting.write_text(
            counting.read_text().replace(
                '* as_count("feature_count", feature_count)\n',
                '* as_count("feature_count", feature_count) + 1000\n',
                1,
            )
        )
        wait_for_text(section, "scalar multiply count = 1012")
        page_md = project / "docs" / f"{SECTION_PAGE}.md"
        page_md.write_text(page_md.read_text().replace("safest one", "safest one so far", 1))
        html = wait_for_text(section, "safest one so far")
        # Three builds in one process: each block once, wrapped once, captioned once.
        soup = BeautifulSoup(html, "html.parser")
        blocks = soup.select("div.exec-block")
        fences = EXEC_FENCE.findall((project / "docs" / f"{SECTION_PAGE}.md").read_text())
        assert [block["data-exec-id"] for block in blocks] == fences  # each once
        assert soup.select("div.exec-block div.exec-block") == []  # wrapped once
        for block in blocks:
            assert len(block.select("p.run-label")) <= 1
        # The timed blocks are on the companion page: each captioned once after three builds.
        measured = BeautifulSoup(fetch_text(f"{base}{MEASURED_PAGE}/"), "html.parser")
        timed = (project / "docs" / f"{MEASURED_PAGE}.md").read_text().count('timed="yes"')
        assert timed >= 1 and len(measured.select("p.measured-label")) == timed
        assert measured.select("div.exec-block div.exec-block") == []
        report_html = fetch_text(report_url)
        assert report_html is not None
        assert report_html.count("<code>p5-9-1-practice-jax</code>") == 1
        log = (tmp_path / "serve.log").read_text()
        assert log.count("Execution report:") >= 3  # three builds in this one process


# ---------------------------------------------------------------- notebooks


def test_every_notebooks_key_holds_only_what_it_reaches_of_the_package(tmp_path):
    """No notebook is keyed on the whole package (its set-up cell once read ``sys.modules``):
    an edit to a function no notebook reaches (``measure_turnaround``'s body) leaves every
    notebook's key as it was, so it runs no notebook (caching/reach.py)."""
    from build_support.caching.environment import package_files
    from build_support.caching.reach import Package

    package = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", package, ignore=shutil.ignore_patterns("__pycache__"))
    notebooks = sorted((ROOT / "docs" / "notebooks").glob("*.py"))
    assert notebooks

    def keys():
        read = Package.read(package, package_files(package))
        return [read.ingredients(notebook.read_text()) for notebook in notebooks]

    before = keys()
    for notebook, (_, whole_package_because) in zip(notebooks, before, strict=True):
        assert whole_package_because is None, (notebook.name, whole_package_because)
    module = package / "turnaround.py"
    body = "    return Turnaround(rows=rows, label=machine_label()"
    assert body in module.read_text()
    module.write_text(module.read_text().replace(body, "    rows = rows[:]\n" + body))
    assert keys() == before


def test_a_hanging_notebook_cell_fails_the_build_naming_notebook_and_cell(tmp_path):
    project = copy_project(tmp_path / "project")
    notebook = project / "docs" / NOTEBOOK
    notebook.write_text(notebook.read_text() + "\n# %%\nimport time\n\ntime.sleep(3600)\n")
    config = project / "mkdocs.yml"
    config.write_text(config.read_text().replace("cell_timeout_s: 60", "cell_timeout_s: 10", 1))
    started = time.monotonic()
    result = mkdocs_build(config, project / "site", env=copy_env(project), timeout=300)
    assert result.returncode != 0
    assert f"notebook {NOTEBOOK} failed to execute" in result.stderr
    assert "p5-9-1-practice-in-jax.py: cell" in result.stderr
    assert "(import time) did not finish within 10 s" in result.stderr
    assert time.monotonic() - started < 120


# ---------------------------------------------------------------- failures


@pytest.fixture
def a_build(tmp_path, monkeypatch):
    from build_support.execution import state

    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FRESH", raising=False)
    build = state.start(ROOT)
    build.page = "page.md"
    return build


def test_a_failing_block_is_never_stored(a_build, monkeypatch):
    import markdown

    from build_support.execution import sessions, state

    # As under mkdocs serve, where a failure shows in the page and the build goes on (elsewhere
    # it fails the build: tests/test_block_guard.py); markdown-exec's base_format runs it.
    monkeypatch.setattr(state.PROCESS, "serving", True)
    block = {"code": "raise ValueError", "id": "broken", "extra": {}, "md": markdown.Markdown()}
    for _ in range(2):
        sessions.format_block(a_build, dict(block))
    assert [(run.ran, run.reasons) for run in a_build.runs] == [(True, ["no cache entry"])] * 2

    monkeypatch.setattr(sessions, "render", lambda execution, **o: "<p>fine</p>")
    for _ in range(2):
        sessions.format_block(a_build, dict(block))
    assert [run.ran for run in a_build.runs[2:]] == [True, False]


def test_make_build_fresh_and_make_clean_do_what_the_readme_says():
    swap = '.venv/bin/python -m build_support.site_swap "make build" -- '
    assert f"FRESH=1 {swap}.venv/bin/mkdocs build --strict" in make_dry_run("build", "FRESH=1")
    assert f"FRESH= {swap}.venv/bin/mkdocs build --strict" in make_dry_run("build")
    assert ".cache" in make_dry_run("clean").split()
    publish = make_dry_run("publish")
    assert "FRESH=1" in publish and "python -m build_support.publishing.record" in publish


# ---------------------------------------------------------------- what a key holds of examples


MODULES = {
    "__init__.py": "from .greeting import greet\nfrom .counts import count\nfrom . import style\n",
    "greeting.py": (
        "from .wording import PREFIX\n\n\ndef greet(name):\n    return f'{PREFIX} {name}'\n\n\n"
        "def unused():\n    return 1\n"
    ),
    "wording.py": "PREFIX = 'hello'\n",
    "counts.py": "def count(n):\n    return n\n",
    "style.py": "import numpy as np\n\nnp.set_printoptions(precision=3)\n",
    "hidden.py": "def value():\n    return 41\n",
}


@pytest.fixture
def package(tmp_path):
    from build_support.caching.reach import Package

    folder = tmp_path / "examples"
    folder.mkdir()
    for name, text in MODULES.items():
        (folder / name).write_text(text)
    (folder / "recording.json").write_text("{}")
    files = {f"examples/{name}": name for name in [*MODULES, "recording.json"]}
    return Package.read(folder, files)


def test_the_key_holds_each_module_the_code_runs_cut_to_what_it_reaches(package):
    reached = package.reached("from examples import greet\nprint(greet('row'))")
    # Importing the package runs every module __init__ imports; greet is reached through the
    # re-export, and its constant's module is run; count is imported, never called.
    assert reached == {
        "examples": set(),
        "examples.greeting": {"greet"},
        "examples.wording": set(),
        "examples.counts": set(),
        "examples.style": set(),
    }
    found, unsure = package.ingredients("from examples import greet\nprint(greet('row'))")
    assert unsure is None and "examples/hidden.py" not in found
    assert found["examples/recording.json"] == "recording.json"  # every data file
    assert package.reached("import examples\nexamples.count(3)")["examples.counts"] == {"count"}


def test_a_body_no_output_reaches_is_out_of_the_key_and_one_it_reaches_is_in(package, tmp_path):
    from build_support.caching.reach import Package

    code = "from examples import greet\nprint(greet('row'))"
    before, _ = package.ingredients(code)
    files = {f"examples/{name}": name for name in [*MODULES, "recording.json"]}
    greeting = tmp_path / "examples" / "greeting.py"
    greeting.write_text(greeting.read_text().replace("return 1", "return 2"))
    after_unused, _ = Package.read(tmp_path / "examples", files).ingredients(code)
    assert after_unused == before  # unused() is reached by nothing
    greeting.write_text(greeting.read_text().replace("{PREFIX} {name}", "{PREFIX}, {name}"))
    after_greet, _ = Package.read(tmp_path / "examples", files).ingredients(code)
    assert after_greet["examples/greeting.py"] != before["examples/greeting.py"]


@pytest.mark.parametrize(
    "code",
    [
        "import importlib\nimportlib.import_module('examples.hid' + 'den').value()",
        "import examples\ngetattr(examples, 'greet')('row')",
        "import examples\nprint(vars(examples))",
        "from examples import *\ngreet('row')",
        "exec('from examples import greet')",
        "import subprocess\nsubprocess.run(['python', '-m', 'examples'])",
        "import examples\nexamples.greet = print",
        "from examples import greet\n\ndef broken(:\n    pass",
    ],
)
def test_where_the_analysis_is_unsure_the_key_holds_the_whole_package(package, code):
    found, unsure = package.ingredients(code)
    assert unsure is not None and found == {}
