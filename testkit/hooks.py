"""A hook of ``hooks/`` loaded by name, as mkdocs loads it: from its file, as a fresh module
each call (the hooks are not a package)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from .project import ROOT


def load_hook(name: str) -> ModuleType:
    """``hooks/{name}.py``, executed as a new module (not kept in ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
