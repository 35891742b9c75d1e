"""The steps one piece of code takes in the ``examples`` package, directly: the modules it
runs and the definitions it reaches (``reach.py`` follows them, transitively), or ``Unsure``
where the analysis cannot bound them (see ``reach.py``'s notes for what that is).

A name the code uses is followed with the attributes read from it (``examples.mod.f``): through
the module's imports (re-exports included) to where it is defined. A module used as a value,
an attribute a module does not bind or an assignment to one is ``Unsure``; so are the dynamic
builtins and functions below, and a string naming the package but no module of it. Below
them, the readings of a module's syntax tree that ``reach.Module`` is made of.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from typing import Any

from ..section import PACKAGE

# What reaches modules or names the analysis cannot see: builtins called by name, and
# functions of importlib and runpy (by name or as attributes).
DYNAMIC_BUILTINS = frozenset({"exec", "eval", "compile", "__import__", "globals"})
DYNAMIC_CALLS = frozenset(
    {
        "import_module",
        "reload",
        "module_from_spec",
        "spec_from_file_location",
        "run_module",
        "run_path",
    }
)
_BUILTIN_CHAINS = frozenset((name,) for name in DYNAMIC_BUILTINS)
_NAMED_IN_TEXT = re.compile(rf"(?<![\w/.-]){PACKAGE}((?:\.\w+)*)(?![\w/])")


class Unsure(Exception):
    """The analysis cannot bound what the code reaches: the key holds the whole package."""


@dataclass
class Steps:
    """The steps one piece of code takes directly: modules it runs (name None), definitions
    it reaches; ``Package.reached`` follows them."""

    package: Any  # reach.Package (not imported: it imports this module)
    found: set[tuple[str, str | None]] = field(default_factory=set)

    def execute(self, dotted: str) -> None:
        """Importing ``dotted`` runs it and every package above it."""
        parts = dotted.split(".")
        for depth in range(1, len(parts) + 1):
            name = ".".join(parts[:depth])
            if name not in self.package.modules:
                raise Unsure(f"imports {name}, not a module of the package")
            self.found.add((name, None))

    def reach(self, module: Any, name: str) -> None:
        self.found.add((module.name, name))

    def visit_code(self, tree: ast.AST, module: Any) -> None:
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if text and id(node) not in docstrings:
                self._named_in_text(node.value)
        for chain, stored in _chains(tree):
            dynamic = chain[0] in DYNAMIC_CALLS or chain[-1] in DYNAMIC_CALLS
            if dynamic or chain in _BUILTIN_CHAINS or chain[:2] == ("sys", "modules"):
                raise Unsure(f"uses {'.'.join(chain)}")
            self.resolve(module, chain, stored)

    def resolve(self, module: Any, chain: tuple[str, ...], stored: bool = False) -> None:
        """Follow ``chain`` (a name, then attributes) from ``module``'s names."""
        name, rest = chain[0], chain[1:]
        if "*" in module.aliases and name not in module.bound:
            raise Unsure(f"a star import from the package in {module.path}")
        if name in module.definitions:
            self.reach(module, name)
        for alias in module.aliases.get(name, []):
            self.execute(alias.module)
            target = self.package.modules[alias.module]
            if alias.name is None:
                self._module_attribute(target, rest, stored, chain)
            else:
                self._attribute(target, (alias.name, *rest), stored)

    def _module_attribute(self, target, rest, stored, chain) -> None:
        if not rest:
            raise Unsure(f"uses the module {target.name} as a value ({'.'.join(chain)})")
        self._attribute(target, rest, stored)

    def _attribute(self, target: Any, chain: tuple[str, ...], stored: bool) -> None:
        """``target.chain[0]...``: a name the module binds, or a submodule."""
        name = chain[0]
        submodule = f"{target.name}.{name}"
        if name not in target.bound and submodule not in self.package.modules:
            raise Unsure(f"{target.name} binds no name {name}")
        if stored and len(chain) == 1:
            raise Unsure(f"assigns to {target.name}.{name}")
        if name in target.bound:
            self.resolve(target, chain, stored)
        elif submodule in self.package.modules:
            self.execute(submodule)
            self._module_attribute(self.package.modules[submodule], chain[1:], stored, chain)

    def _named_in_text(self, text: str) -> None:
        for match in _NAMED_IN_TEXT.finditer(text):
            dotted = PACKAGE + match[1]
            while dotted not in self.package.modules and "." in dotted:
                dotted = dotted.rsplit(".", 1)[0]
            if dotted == PACKAGE:
                raise Unsure(f"names the package in a string ({text[:40]!r})")
            self.execute(dotted)  # run in another process, or read as text: the whole module
            module = self.package.modules[dotted]
            for name in module.definitions:
                self.reach(module, name)


def _docstrings(tree: ast.AST) -> set[int]:
    """Strings that are statements of their own (docstrings): they run nothing."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _chains(tree: ast.AST) -> list[tuple[tuple[str, ...], bool]]:
    """Every name the code uses, with the attributes read from it: ``examples.mod.f`` ->
    (("examples", "mod", "f"), stored?)."""
    found: list[tuple[tuple[str, ...], bool]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Attribute):
            attributes, inner = [], node
            while isinstance(inner, ast.Attribute):
                attributes.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name):
                stored = not isinstance(node.ctx, ast.Load)
                found.append(((inner.id, *reversed(attributes)), stored))
                return
            visit(inner)
            return
        if isinstance(node, ast.Name):
            found.append(((node.id,), False))
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def module_level(body: list[ast.stmt]):
    """Statements run when the module is imported (inside if/try/with/for, not in functions)."""
    for node in body:
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from module_level(getattr(node, name, []))
        for handler in getattr(node, "handlers", []):
            yield from module_level(handler.body)


def targets_of(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.For | ast.With):
        targets = getattr(node, "targets", None) or [
            getattr(node, "target", None),
            *[item.optional_vars for item in getattr(node, "items", [])],
        ]
        return [
            n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)
        ]
    return []


def skeleton_of(tree: ast.Module) -> ast.Module:
    """The module with every function's body left out (class bodies kept, their methods'
    bodies left out too): what importing it runs."""
    skeleton = copy.deepcopy(tree)
    for node in ast.walk(skeleton):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or _runs_as_script(node):
            node.body = [ast.Pass()]
    return skeleton


def _runs_as_script(node: ast.AST) -> bool:
    """``if __name__ == "__main__":``: run by ``python -m``, never by an import (a string that
    names the module reaches it whole)."""
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )
