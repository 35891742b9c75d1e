"""The build's own settings (mkdocs.yml's ``extra.build``), validated before any hook reads them.

First in mkdocs.yml's hook list: a wrong value fails the build here, naming the option, and
``build_support.settings.current()`` returns this build's settings from now on.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from build_support import settings


def on_config(config):
    settings.use(config)
    return config
