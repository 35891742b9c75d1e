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
import struct
import types
from pathlib import Path, PurePath

import pytest

from build_support.execution import state
from testkit.hooks import load_hook
from testkit.project import ROOT

SCANNED = ("build_support", "hooks")

# Module-level state of ``build_support/``: the process's, kept in one place with its reasons.
PROCESS_SCOPED = {"build_support.execution.state.PROCESS", *state.KEPT_ELSEWHERE}

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
_VALUES += (struct.Struct,)  # a binary layout, immutable
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
    assert build_support_state() == PROCESS_SCOPED
    assert all(len(why) > 30 for why in state.KEPT_ELSEWHERE.values())  # each says why


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
    assert ("sessions.py", "markdown_exec", "base_format") in used


def test_a_block_runs_in_its_sessions_worker_and_its_failure_is_raised(caplog):
    import markdown

    from build_support.execution import executor, sessions, state

    def block(code: str, worker: executor.LazyWorker) -> str:
        options = {"code": code, "md": markdown.Markdown(), "id": "b", "extra": {}}
        return sessions.render(sessions.WorkerCall(worker, "b"), **options)

    build = state.start(ROOT)
    session, alone = executor.LazyWorker(build.take_worker), executor.LazyWorker(build.take_worker)
    try:
        assert "<p>1</p>" in block("x = 1\nprint(x)", session)
        assert "<p>2</p>" in block("print(x + 1)", session)  # the session's globals
        with pytest.raises(executor.BlockError, match="NameError: name 'x' is not defined"):
            block("print(x)", alone)  # another worker: raised as the block raised it
        with pytest.raises(executor.BlockError, match="SystemExit: 0"):
            block("import sys\nsys.exit(0)", alone)
        assert session.worker.process.pid != alone.worker.process.pid
    finally:
        session.close()
        alone.close()
        state.PROCESS.executor.close()
    assert caplog.records == []  # nothing logged for guard to recover


def test_a_blocks_path_from_markdown_exec_to_its_workers_reply_is_at_most_10_frames(
    tmp_path, monkeypatch
):
    import sys

    import markdown

    from build_support.execution import sessions

    depths = []

    class Worker:
        def run(self, code, block_id, timed, seconds, how=None):
            frame, depth = sys._getframe(), 1
            while frame.f_code.co_name != "format_fence":  # markdown-exec's call
                frame, depth = frame.f_back, depth + 1
            depths.append(depth)
            return {"output": "hi\n", "ran_on": "here"}

        def close(self):
            pass

    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    build = state.start(ROOT)
    build.page = "page.md"
    monkeypatch.setattr(build, "take_worker", lambda timed=False, first_code="": Worker())
    format_python = sessions.formatter(build, "python")
    format_python(code="print(1)", id="alone", extra={}, md=markdown.Markdown())
    build.sessions[("page.md", "s")] = state.Session(name="s")
    format_python(code="print(2)", id="in", extra={}, md=markdown.Markdown(), session="s")
    assert len(depths) == 2 and max(depths) <= 10, depths
