"""Which sessions may start from the *package template*: the template process's child that has
also imported the course package, so that a worker forked from it skips the package's import
(~35 ms and ~1,500 page faults a worker; most sessions are one block that imports it first).

A worker must run its blocks as a fresh one would. A fresh worker imports the package when its
first block says so, so a worker that imported it ahead is the same only if nothing could run
before that import: ``imports_package_first`` allows, before it, only imports of modules the
template already holds (each a look-up in ``sys.modules``: no code runs) and a docstring.
Anything else (an assignment, a call, ``jax.config.update``, an import of a module not yet
loaded, whose import runs code) and the session is forked from the template without the package.

The package template holds the package the build's keys describe (``Environment.package``:
every file of it, by content); any change (a module edited under ``mkdocs serve``), and the
next session gets a new one, forked from the template in milliseconds plus the package's
import. The template process imports it as a block would (``template_process.import_package``);
where that raises, prints, warns, or starts a thread or a process, the package template is not
used, and the log says why once.
"""

from __future__ import annotations

import ast

FUTURE = "__future__"  # a compiler directive: its module is always loaded


def imports_package_first(code: str, package: str, modules: frozenset[str]) -> bool:
    """The code's first statements import ``package`` (or a module of it), with nothing before
    but imports of ``modules`` (those the template holds) and a docstring."""
    try:
        statements = ast.parse(code).body
    except (SyntaxError, ValueError):
        return False
    for statement in statements:
        if _is_docstring(statement):
            continue
        if isinstance(statement, ast.Import):
            names = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            if _in_package(statement.module, package):
                return True
            # ``from m import n``: a look-up only where ``m.n`` is itself a loaded module (else it
            # may be a submodule Python would import now) or ``m`` is ``__future__``
            names = [statement.module]
            if statement.module != FUTURE:
                names += [f"{statement.module}.{alias.name}" for alias in statement.names]
        else:
            return False
        for name in names:
            if _in_package(name, package):
                return True
            if name != FUTURE and name not in modules:
                return False
    return False


def _in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )
