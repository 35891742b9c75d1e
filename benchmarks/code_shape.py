"""The build's code by size: its largest and smallest modules, its longest functions and
largest classes, in lines.

    .venv/bin/python benchmarks/code_shape.py [FOLDER_OR_FILE ...]

Default: the build's own code (build_support/, hooks/, hatch_build.py). The guide a newcomer
reads by: one job a module, up to about 500 lines; functions under about 60. A job is not
counted here, so both ends are listed: a module over the limit may hold two jobs, and one of a
few dozen lines is often a piece of a job split off by size, to be read with (or merged into)
the module that owns that job. Left out of the smallest: packages' ``__init__.py`` and the
hooks, thin by design (each is MkDocs' entry to ``build_support``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD_CODE = ("build_support", "hooks", "hatch_build.py")
MODULE_TARGET, FUNCTION_TARGET = 500, 60


def python_files(paths: list[Path]) -> list[Path]:
    found = []
    for path in paths:
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def definitions(path: Path) -> list[tuple[int, str, str]]:
    """(lines, kind, "file:line name") for every function and class in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            lines = node.end_lineno - node.lineno + 1
            found.append((lines, kind, f"{_name(path)}:{node.lineno} {node.name}"))
    return found


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def report(files: list[Path]) -> list[str]:
    modules = sorted(
        ((len(p.read_text(encoding="utf-8").splitlines()), _name(p)) for p in files), reverse=True
    )
    thin = {_name(p) for p in files if p.name == "__init__.py" or p.parent == ROOT / "hooks"}
    smallest = sorted((n, name) for n, name in modules if name not in thin)
    found = sorted((d for p in files for d in definitions(p)), reverse=True)
    functions = [(n, name) for n, kind, name in found if kind == "function"]
    classes = [(n, name) for n, kind, name in found if kind == "class"]
    over_modules = sum(n > MODULE_TARGET for n, _ in modules)
    over_functions = sum(n > FUNCTION_TARGET for n, _ in functions)
    return [
        f"{len(modules)} modules, {sum(n for n, _ in modules)} lines",
        "largest modules:",
        *(f"  {n:4d}  {name}" for n, name in modules[:5]),
        "smallest modules (each a job of its own?):",
        *(f"  {n:4d}  {name}" for n, name in smallest[:5]),
        "longest functions:",
        *(f"  {n:4d}  {name}" for n, name in functions[:5]),
        "largest classes:",
        *(f"  {n:4d}  {name}" for n, name in classes[:3]),
        f"modules over {MODULE_TARGET} lines: {over_modules}; "
        f"functions over {FUNCTION_TARGET} lines: {over_functions} "
        f"({'met' if over_modules == over_functions == 0 else 'missed'})",
    ]


def main() -> None:
    paths = [Path(arg) for arg in sys.argv[1:]] or [ROOT / name for name in BUILD_CODE]
    print("\n".join(report(python_files(paths))))


if __name__ == "__main__":
    main()
