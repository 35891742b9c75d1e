"""What an output's code can reach in the ``examples`` package: the part of the package its key
holds, so that an edit re-runs only the outputs it can change (as marimo's module watcher
follows imports, statically, with ``ast``).

- **Executed modules.** Importing ``examples.x`` runs ``examples/__init__.py`` first, and every
  module an executed module imports (at module level, or inside a function the code reaches).
  Each executed module's module-level statements are in the key: imports, assignments, class
  bodies, and every function's signature, decorators and defaults.
- **Reached definitions.** A name the code uses from the package (``from examples import f``,
  ``examples.f``, ``examples.mod.f``) is followed through re-exports to where it is defined;
  then every name that definition uses, and every name module-level statements use,
  transitively. A reached function or class is in the key whole: its text and first line. Of
  any other function only the body is left out: code that is never called cannot change an
  output. A class is one definition (its methods run on instances the code reaches it for).
- **The build's own calls** (the "computed on" label a worker or kernel prints,
  ``environment.BUILD_CALLS``) are read apart from an output's code, with ``through_package``
  False: what they call and the package's ``__init__.py``, not the modules it imports, so an
  edit to a module no output imports re-runs none (``Environment.build_calls``).
- **Data files** of the package (``examples/recordings/``) are all in the key.
- **The whole package** where the analysis cannot be sure: a package module used as a value
  (``getattr(examples, name)``, ``vars(...)``, passed along), an attribute a module does not
  bind, an assignment to one, a star import, ``exec``/``eval``/``compile``/``__import__``/
  ``importlib.import_module``/``globals()``/``sys.modules``, a string that names the package but
  no module of it (``python -m examples``), code that does not parse.

Module-level statements are read as a syntax tree (comments and layout aside), but for an
``if __name__ == "__main__":`` block: ``python -m`` runs it, an import never does (a string
that names the module, ``"examples.multiprocess"``, run in another process, reaches that
whole module). ``Package.read`` parses the package once per build; ``Package.ingredients``
is what one output's key holds of it; ``reach_steps.py`` says what one piece of code leads to
directly.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from ..section import PACKAGE
from .cache import digest
from .reach_steps import Steps, Unsure, module_level, skeleton_of, targets_of


@dataclass(frozen=True)
class Alias:
    """A name bound by an import: ``module``'s ``name``, or the module itself (name None)."""

    module: str
    name: str | None = None


@dataclass
class Module:
    """One module of the package, parsed: its definitions, import bindings and skeleton."""

    name: str  # examples.counting
    path: str  # examples/counting.py: its name in the key
    source: str
    definitions: dict[str, list[ast.AST]]  # functions and classes, at module level
    aliases: dict[str, list[Alias]]  # names its imports bind, anywhere in the module
    bound: set[str]  # every name module-level code binds
    skeleton: ast.Module  # module-level code: every function's body left out

    @classmethod
    def parse(cls, name: str, path: str, source: str, package: Package) -> Module:
        tree = ast.parse(source)
        module = cls(name, path, source, {}, {}, set(), skeleton_of(tree))
        for node in module_level(tree.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                module.definitions.setdefault(node.name, []).append(node)
                module.bound.add(node.name)
            for target in targets_of(node):
                module.bound.add(target)
        for bound, alias in _imports(package, tree, module):
            module.aliases.setdefault(bound, []).append(alias)
        module.bound |= set(module.aliases)
        return module

    def digest_parts(self, reached: set[str]) -> list[str]:
        """The module-level code, then each reached definition's first line and text."""
        parts = [ast.dump(self.skeleton)]
        nodes = [node for name in sorted(reached) for node in self.definitions.get(name, [])]
        for node in sorted(nodes, key=lambda node: node.lineno):
            parts.append(f"{node.lineno}:{ast.get_source_segment(self.source, node)}")
        return parts


# Process scope: under ``mkdocs serve`` a rebuild after an edit to one module parses that one
# again, not the package (0.6 s). A parse depends on its source and on the package's module
# names (what its imports resolve to), its key here; a Module is not changed once parsed.
_PARSED: dict[tuple[str, str, str, frozenset[str]], Module] = {}
_PARSED_KEPT = 200


@dataclass
class Package:
    """The package's modules, parsed once per build, and its data files' digests."""

    root: Path  # the folder holding the package
    modules: dict[str, Module] = field(default_factory=dict)
    data: dict[str, str] = field(default_factory=dict)  # examples/recordings/x.json -> digest
    unparsed: str | None = None  # why the package could not be read: always the whole package
    _steps: dict[tuple[str, str | None], set[tuple[str, str | None]] | Unsure] = field(
        default_factory=dict, repr=False
    )
    _digests: dict[tuple[str, frozenset[str]], str] = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, package_dir: Path, files: dict[str, str]) -> Package:
        """``files``: every file of the package -> its digest (``environment.package_files``)."""
        package = cls(package_dir.parent)
        package.data = {name: value for name, value in files.items() if not name.endswith(".py")}
        sources = []  # (dotted name, path from the root, path)
        for path in sorted(package_dir.rglob("*.py")):
            if "__pycache__" not in path.parts:
                relative = path.relative_to(package.root)
                parts = relative.with_suffix("").parts
                dotted = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                sources.append((dotted, relative, path))
                package.modules[dotted] = None  # type: ignore[assignment]  # known before parsed
        names = frozenset(package.modules)
        for dotted, relative, path in sources:
            try:
                source = path.read_text(encoding="utf-8")
                memo = (dotted, relative.as_posix(), source, names)
                if memo not in _PARSED:
                    _PARSED[memo] = Module.parse(dotted, relative.as_posix(), source, package)
                package.modules[dotted] = _PARSED[memo]
            except (SyntaxError, UnicodeDecodeError, ValueError) as error:
                package.unparsed = f"{relative.as_posix()} does not parse ({error})"
        if len(_PARSED) > _PARSED_KEPT:  # mkdocs serve: the modules of many edits ago go
            for memo in list(_PARSED)[: len(_PARSED) - _PARSED_KEPT]:
                del _PARSED[memo]
        return package

    def reached(self, code: str, through_package: bool = True) -> dict[str, set[str]]:
        """Executed module -> the names of its definitions the code reaches; ``Unsure``.
        ``through_package`` False: the package's ``__init__.py`` is in (its module-level code),
        but not the modules it imports: the build's own calls (``environment.BUILD_CALLS``)
        reach what they call, not every module importing the package runs beside it."""
        if self.unparsed:
            raise Unsure(self.unparsed)
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError) as error:
            raise Unsure(f"the code does not parse ({error})") from error
        steps = Steps(self)
        block = Module("<code>", "<code>", code, {}, {}, set(), tree)
        for bound, alias in _imports(self, tree, block):
            block.aliases.setdefault(bound, []).append(alias)
            steps.execute(alias.module)
        steps.visit_code(tree, block)
        reached: dict[str, set[str]] = {}
        seen, todo = set(steps.found), list(steps.found)
        while todo:  # every step's own steps, until nothing new is reached
            module, name = step = todo.pop()
            names = reached.setdefault(module, set())
            if name is not None:
                names.add(name)
            if step == (PACKAGE, None) and not through_package:
                continue
            for following in self._steps_of(step) - seen:
                seen.add(following)
                todo.append(following)
        return reached

    def _steps_of(self, step: tuple[str, str | None]) -> set[tuple[str, str | None]]:
        """What running a module (name None) or reaching a definition leads to directly (the
        same for every output: worked out once per build)."""
        if step not in self._steps:
            module, name = self.modules[step[0]], step[1]
            steps = Steps(self)
            try:
                for tree in [module.skeleton] if name is None else module.definitions[name]:
                    for _, alias in _imports(self, tree, module):
                        steps.execute(alias.module)
                    steps.visit_code(tree, module)
                self._steps[step] = steps.found
            except Unsure as why:
                self._steps[step] = why
        found = self._steps[step]
        if isinstance(found, Unsure):
            raise found
        return found

    def ingredients(
        self, code: str, through_package: bool = True
    ) -> tuple[dict[str, str], str | None]:
        """What the key holds of the package for ``code`` (path -> digest), and why it is the
        whole package when it is (else None); ``through_package``: as ``reached``'s."""
        try:
            reached = self.reached(code, through_package)
        except Unsure as why:
            return {}, str(why)
        found = {}
        for name, names in reached.items():
            memo = (name, frozenset(names))
            if memo not in self._digests:
                self._digests[memo] = digest("\n".join(self.modules[name].digest_parts(names)))
            found[self.modules[name].path] = self._digests[memo]
        return found | self.data, None

    def bindings(self, node: ast.AST, module: Module) -> list[tuple[str, Alias]]:
        """The package names an import statement binds in ``module``."""
        found = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != PACKAGE:
                    continue
                if alias.asname:
                    found.append((alias.asname, Alias(alias.name)))
                else:  # import examples.x binds examples, and runs examples.x
                    found.append((PACKAGE, Alias(PACKAGE)))
                    found.append(("", Alias(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            base = self._absolute(node, module)
            if base is None or base.split(".")[0] != PACKAGE:
                return []
            for alias in node.names:
                if alias.name == "*":
                    found.append(("*", Alias(base, "*")))
                    continue
                bound = alias.asname or alias.name
                if f"{base}.{alias.name}" in self.modules:
                    found.append((bound, Alias(f"{base}.{alias.name}")))
                found.append((bound, Alias(base, alias.name)))
        return found

    def _absolute(self, node: ast.ImportFrom, module: Module) -> str | None:
        if not node.level:
            return node.module
        is_package = module.path.endswith("__init__.py")
        parts = module.name.split(".")
        parts = parts if is_package else parts[:-1]
        if node.level - 1 > len(parts) - 1:
            return None
        parts = parts[: len(parts) - (node.level - 1)]
        return ".".join(parts + ([node.module] if node.module else []))


def _imports(package: Package, tree: ast.AST, module: Module) -> list[tuple[str, Alias]]:
    return [found for node in ast.walk(tree) for found in package.bindings(node, module)]
