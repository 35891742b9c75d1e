"""The build's seams stay where ARCHITECTURE.md says: no import cycle among the modules of
``build_support/`` and ``hooks/`` (imports under ``TYPE_CHECKING`` and inside functions count),
one state object at most per hook, and module-level state in ``build_support/`` only where the
process itself is the scope, each named here with its reason."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import logging
import re
import types
from pathlib import Path, PurePath

import pytest

from testkit.hooks import load_hook
from testkit.project import ROOT

SCANNED = ("build_support", "hooks")

PROCESS_SCOPED = {
    "build_support.execution.state.PROCESS": (
        "MkDocs says its command once per process (on_startup; one `mkdocs serve` runs many "
        "builds), and calls hooks, as markdown-exec calls formatters, as plain functions of the "
        "process: they reach the build running now through it"
    ),
    "build_support.settings._running": (
        "the settings of the build this process runs, for what no build object reaches: the "
        "store's folder of every named cache (hooks, the command line); below execution/, so "
        "it cannot be the state's"
    ),
    "build_support.execution.reads._local": "the audit hook's per-thread switch",
    "build_support.execution.reads._hook_installed": "an audit hook is added once per process",
    "build_support.execution.reads._installed": "an audit hook cannot be removed: one per process",
    "build_support.caching.cache._handler": "logging's handlers are per process",
    "build_support.publishing.wheel_build.builder_version": (
        "the versions of the hatchling this process imported, read once a process"
    ),
    "build_support.execution.compile_cache._fresh": (
        "a FRESH=1 process's own compilation cache folder, made once, removed when it ends"
    ),
    "build_support.execution.compile_cache._FRESH_MADE": (
        "the lock that makes that folder once when threads ask for it at the same time"
    ),
    "build_support.serve_templates.COMPILED": (
        "the theme's templates compiled under `mkdocs serve`, kept across its rebuilds (each "
        "makes a new Jinja environment)"
    ),
    "build_support.serve_staging.SERVED": (
        "the folder `mkdocs serve` serves, said once (on_serve), while it loads the hooks afresh "
        "for every rebuild"
    ),
    "build_support.serve_staging.LOCK": (
        "the checkout's build lock, held by `mkdocs serve` from a build's on_config to its end, "
        "across the hooks loaded afresh for every rebuild"
    ),
    "build_support.serve_staging.REBUILDS": (
        "the folder `mkdocs serve` watches for a notebook's call for a rebuild, said once "
        "(on_serve), written from the notebook's thread"
    ),
    "build_support.execution.notebooks.BACKGROUND": (
        "under `mkdocs serve`, the notebook runs that go on past the rebuild that started them, "
        "and their threads: the next rebuild takes them over"
    ),
    "build_support.caching.reach._PARSED": (
        "under `mkdocs serve`, the package's modules as parsed, by their text: a rebuild after "
        "a module edit parses that one again"
    ),
    "build_support.imports_on_use._loading": (
        "the modules imported on first use are imported once, whatever thread uses them first"
    ),
}
"""Module-level state of ``build_support/``, and why the process is its scope."""

# ---------------------------------------------------------------- import cycles


def module_files(root: Path, folders=SCANNED) -> dict[str, Path]:
    """Dotted module name -> file, for every module under ``folders``."""
    found = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports anywhere in its file: at the top,
    inside functions, and under ``if TYPE_CHECKING:``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = ".".join(part for part in (base if node.level else "", node.module) if part)
            for alias in node.names:  # `from . import guard` names a module; `from .x import y`
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {target for target in targets if target in known and target != name}


def import_cycles(root: Path, folders=SCANNED) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a loop."""
    files = module_files(root, folders)
    graph = {name: imported(name, path, set(files)) for name, path in files.items()}
    cycles, index, low, stack, on_stack = [], {}, {}, [], set()

    def visit(name: str) -> None:  # Tarjan's strongly connected components
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in sorted(graph[name]):
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group = []
            while not group or group[-1] != name:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                cycles.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return cycles


def test_no_import_cycle_among_the_build_and_the_hooks():
    assert import_cycles(ROOT) == []


def test_a_cycle_through_type_checking_or_a_function_is_found(tmp_path):
    package = tmp_path / "build_support"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "runner.py").write_text("from . import blocks\n")
    (package / "blocks.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .runner import Build\n"
    )
    (package / "other.py").write_text("def f():\n    from build_support import runner\n")
    assert import_cycles(tmp_path, ("build_support",)) == [
        ["build_support.blocks", "build_support.runner"]
    ]
    (package / "blocks.py").write_text("")
    (package / "runner.py").write_text(
        "from . import blocks\n\ndef f():\n    from . import other\n"
    )
    assert import_cycles(tmp_path, ("build_support",)) == [
        ["build_support.other", "build_support.runner"]
    ]


# ---------------------------------------------------------------- module-level state

_MUTATORS = {"append", "add", "clear", "discard", "extend", "insert", "pop", "popitem"}
_MUTATORS |= {"remove", "setdefault", "update"}
_VALUES = (str, bytes, int, float, bool, type(None), tuple, frozenset, re.Pattern, PurePath)
_VALUES += (type, types.FunctionType, types.ModuleType, logging.Logger)  # a logger: a name
_CONTAINERS = (dict, list, set, bytearray)


def _top_level_names(tree: ast.Module) -> set[str]:
    names, pending = set(), list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If | ast.Try):  # module-level `if` and `try` bind names too
            pending += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AnnAssign) else []
        names |= {target.id for target in targets if isinstance(target, ast.Name)}
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return {name for name in names if not name.startswith("__")}


def _changed_in_functions(tree: ast.Module) -> set[str]:
    """Names a function rebinds (``global``) or changes in place (``x[k] =``, ``x.a =``,
    ``del x[k]``, ``x.append(...)``, ...)."""
    changed = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                changed |= set(node.names)
            elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
                node.ctx, ast.Store | ast.Del
            ):
                if isinstance(node.value, ast.Name):
                    changed.add(node.value.id)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MUTATORS
                and isinstance(node.func.value, ast.Name)
            ):
                changed.add(node.func.value.id)
    return changed


def _is_state(name: str, value: object, changed: set[str]) -> bool:
    if name in changed or hasattr(value, "cache_info"):  # functools.cache: a memo
        return True
    if isinstance(value, _CONTAINERS):  # an ALL_CAPS container nobody changes: a constant
        return not name.isupper()
    frozen = dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen
    return not (frozen or isinstance(value, _VALUES))


def module_state(module: types.ModuleType, path: Path) -> set[str]:
    """The module-level names of ``module`` that hold state: rebound or changed by its
    functions, a memo, a container not named as a constant, or any object not a plain value."""
    tree = ast.parse(path.read_text())
    changed = _changed_in_functions(tree)
    return {
        name
        for name in _top_level_names(tree)
        if hasattr(module, name) and _is_state(name, getattr(module, name), changed)
    }


def build_support_state() -> set[str]:
    found = set()
    for name, path in module_files(ROOT, ("build_support",)).items():
        found |= {f"{name}.{state}" for state in module_state(importlib.import_module(name), path)}
    return found


def test_build_support_keeps_module_state_only_where_the_process_is_its_scope():
    assert build_support_state() == set(PROCESS_SCOPED)


def test_each_hook_holds_at_most_one_state_object():
    held = {
        path.stem: module_state(load_hook(path.stem), path)
        for path in sorted((ROOT / "hooks").glob("*.py"))
    }
    assert {hook: names for hook, names in held.items() if len(names) > 1} == {}
    assert held["wheel"] == {"_this_build"} and held["execution"] == set()


def test_the_state_check_sees_what_it_should(tmp_path):
    path = tmp_path / "sample.py"
    path.write_text(
        "import threading\n"
        "CONSTANT = {'a': 1}\n"
        "_registry = {}\n"
        "_pool = threading.Lock()\n"
        "_slot = None\n"
        "CHANGED = []\n"
        "def f():\n"
        "    global _slot\n"
        "    _slot = 1\n"
        "    CHANGED.append(1)\n"
    )
    spec = importlib.util.spec_from_file_location("sample", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module_state(module, path) == {"_registry", "_pool", "_slot", "CHANGED"}


# ---------------------------------------------------------------- markdown-exec's public names


def test_the_build_uses_markdown_exec_through_its_public_names_only():
    import markdown_exec

    public, used = set(markdown_exec.__all__), []
    for path in [*sorted((ROOT / "build_support").rglob("*.py")), *(ROOT / "hooks").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("markdown_exec"):
                used += [(path.name, node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                used += [(path.name, a.name, "") for a in node.names if "markdown_exec." in a.name]
            elif isinstance(node, ast.Attribute) and getattr(node.value, "id", "") in (
                "markdown_exec",
                "sys",
            ):
                used += [(path.name, node.value.id, node.attr)]
    private = [
        use
        for use in used
        if (use[1] == "markdown_exec" and use[2] not in public)
        or use[1].startswith("markdown_exec.")
        or use[1:] == ("sys", "exc_info")  # an exception recovered from a log record
    ]
    assert private == []
    assert ("python_exec.py", "markdown_exec", "base_format") in used


def test_a_block_runs_in_its_sessions_worker_and_its_failure_is_raised(caplog):
    import markdown

    from build_support.execution import python_exec, state, workers

    def block(code: str, worker: workers.LazyWorker) -> str:
        options = {"code": code, "md": markdown.Markdown(), "id": "b", "extra": {}}
        return python_exec.format_python(python_exec.Execution(worker), **options)

    build = state.start(ROOT)
    session, alone = workers.LazyWorker(build.take_worker), workers.LazyWorker(build.take_worker)
    try:
        assert "<p>1</p>" in block("x = 1\nprint(x)", session)
        assert "<p>2</p>" in block("print(x + 1)", session)  # the session's globals
        with pytest.raises(workers.BlockError, match="NameError: name 'x' is not defined"):
            block("print(x)", alone)  # another worker: raised as the block raised it
        with pytest.raises(workers.BlockError, match="SystemExit: 0"):
            block("import sys\nsys.exit(0)", alone)
        assert session.worker.process.pid != alone.worker.process.pid
    finally:
        session.close()
        alone.close()
        state.PROCESS.workers.close()
    assert caplog.records == []  # nothing logged for guard to recover
