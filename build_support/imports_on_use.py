"""Modules a build imports only when it uses them: mkdocs-jupyter's converter (nbconvert, 0.4 s)
and jupytext (0.2 s), a third of a build where nothing changed, which renders no notebook.

mkdocs-jupyter imports both at the top of its plugin module, which MkDocs loads with the
configuration, before any hook runs; so this module is imported while mkdocs.yml is read (its
``!!python/name:build_support.imports_on_use.INSTALLED`` tag, under ``extra``), and puts a
stand-in for each in ``sys.modules``: a module whose first attribute asked for imports the real
one, which then answers for it. Python's own ``importlib.util.LazyLoader`` does not serve here:
``import jupytext`` reads the module's ``__spec__``, which makes it load at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types

ON_USE = ("mkdocs_jupyter.convert", "jupytext")
_loading = threading.Lock()


class _OnUse(types.ModuleType):
    """Stands in for a module not imported yet; the first attribute asked for imports it."""

    def __getattr__(self, name: str):
        return getattr(_real(self.__name__), name)

    def __dir__(self):
        return dir(_real(self.__name__))


def _real(name: str) -> types.ModuleType:
    with _loading:
        module = sys.modules.get(name)
        if isinstance(module, _OnUse):
            del sys.modules[name]
            try:
                module = importlib.import_module(name)
            except BaseException:
                sys.modules[name] = module  # tried again on the next use, failing the same way
                raise
        return module


def _install(name: str) -> None:
    if name in sys.modules:
        return  # imported already: nothing to save
    spec = importlib.util.find_spec(name)
    if spec is None:
        return  # not installed: its import fails where it is made, as it would have
    stand_in = _OnUse(name)
    stand_in.__spec__ = spec
    stand_in.__file__ = spec.origin
    sys.modules[name] = stand_in
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, stand_in)


for _name in ON_USE:
    _install(_name)

INSTALLED = True
