"""The build's own settings: each option's name, type, default and meaning, in one place.

They are set in mkdocs.yml under ``extra.build`` (MkDocs refuses unknown top-level keys, and
hooks have no options of their own) and validated by MkDocs' own config machinery, as Material
validates its plugins' options: a wrong value or an unknown option fails the build, naming the
option. ``hooks/settings.py`` validates them when the build starts (``use``). Where a tool
outside MkDocs sets an option, mkdocs.yml reads it from the environment (``!ENV``); ``ENV_VARS``
lists those variables. The version mike deploys is mike's to say, not an option
(``deployed_version()``). Code reads the settings here only: ``of(config)`` in a hook,
``current()`` anywhere else; outside a build (``python -m build_support.caching.store clear``,
check-cache, the tests) ``current`` reads the project's mkdocs.yml as MkDocs does, so both get
the same values.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from mike.mkdocs_utils import docs_version_var
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import ConfigurationError
from mkdocs.utils.yaml import yaml_load

from .build_command import CACHE_DIR_ENV, FRESH_ENV
from .section import ROOT

KEY = "build"  # mkdocs.yml: extra.build


class Flag(c.BaseConfigOption[bool]):
    """On or off: ``true``/``false``, or ``1``/``0`` and empty as a variable sets it
    (``make build FRESH=1``; make passes ``FRESH=`` when it is not given)."""

    def __init__(self, default: bool) -> None:
        super().__init__()
        self.default = default

    def run_validation(self, value: object) -> bool:
        if value is None:
            return self.default
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        raise c.ValidationError(f"expected true or false (or 1 or 0), got {value!r}")


class Positive(c.BaseConfigOption[float]):
    """A number of ``unit`` (seconds, GiB), more than zero."""

    def __init__(self, default: float, unit: str) -> None:
        super().__init__()
        self.default, self.unit = default, unit

    def run_validation(self, value: object) -> float:
        if value is None:
            return self.default
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise c.ValidationError(f"expected a number of {self.unit} above 0, got {value!r}")
        return float(value)


class Matching(c.BaseConfigOption[str | None]):
    """A string of ``pattern`` (``expected`` says what it is, for the error); unset or empty:
    none."""

    def __init__(self, pattern: str, expected: str) -> None:
        super().__init__()
        self.pattern, self.expected = re.compile(pattern), expected

    def run_validation(self, value: object) -> str | None:
        if value is None or value == "":
            return None
        if isinstance(value, str) and self.pattern.fullmatch(value):
            return value
        raise c.ValidationError(f"expected {self.expected} (or empty), got {value!r}")


class BuildSettings(base.Config):
    """The options under ``extra.build`` in mkdocs.yml."""

    fresh = Flag(default=False)
    """Execute every block and notebook, reusing no executed output from the cache (the results
    still refresh it). Set by ``make build FRESH=1``, ``make publish`` and check-cache's fresh
    side."""

    cache_dir = c.Dir(exists=False, default=".cache")
    """The folder of the store that holds every cache (build_support/caching/store.py), relative to
    mkdocs.yml. Set by the tests and check-cache, to give a build an empty store of its own."""

    cell_timeout_s = Positive(default=60, unit="seconds")
    """A notebook cell running longer than this fails the build, naming the cell."""

    memory_limit_gib = Positive(default=4, unit="GiB")
    """The memory one worker process (a session's blocks, with whatever they start) or one
    notebook's kernel may use; past it the block or cell fails, naming this limit."""

    executor = Matching(r"(tcp|tls)://\S+:\d+", "a Dask scheduler's address, tcp://host:port")
    """Where the sessions a build runs ahead go: unset (the default), this machine's warm
    workers; a Dask scheduler's address (``make build EXECUTOR=tcp://host:8786``), that
    cluster's workers, each session in a fresh worker process there (cluster/client.py)."""

    executor_wait_s = Positive(default=60, unit="seconds")
    """With an ``executor``: how long the build waits for its scheduler, and for a worker that
    may run a page's sessions (one with ``GPU=1`` for a GPU page), before their blocks fail."""

    shared_store = Matching(
        r"[a-z][a-z0-9+.-]*://\S*", "a store's URL, such as s3://bucket/prefix or file:///path"
    )
    """A store every machine building the course shares, behind the local one (``cache_dir``):
    an fsspec URL (``s3://bucket/prefix``; caching/shared_store.py). Unset (the default): none."""

    shared_store_mode = c.Choice(("read-write", "read-only"), default="read-write")
    """``read-only``: the build reuses the shared store's entries and writes none there (a pull
    request's build); ``read-write``: what it runs is written there too."""

    render_only = Flag(default=False)
    """Execute nothing: every executed output comes from the store (the local one, then the
    shared one), and each one it lacks fails the build, named by page and block: the last job
    of a sharded CI, after the ``shard`` jobs (``make build RENDER_ONLY=1``;
    cluster/shards.py)."""

    shard = Matching(r"[1-9][0-9]*/[1-9][0-9]*", "a slice of the course, k/n, such as 2/8")
    """Execute only the ``k``-th of ``n`` slices of the course's sessions, balanced by the
    durations the last render-only build recorded (by count where none are), filling the store
    (``make build SHARD=2/8``); the other slices' blocks are left out, never stored, and this
    build's site is not the course's (cluster/shards.py)."""


EXECUTOR_ENV = "EXECUTOR"
"""Sets the build's ``executor`` setting (mkdocs.yml reads it): ``make build EXECUTOR=...``."""
SHARED_STORE_ENV, SHARED_STORE_MODE_ENV = "COURSE_SHARED_STORE", "COURSE_SHARED_STORE_MODE"
"""Set the build's ``shared_store`` and ``shared_store_mode`` settings (mkdocs.yml reads them)."""
RENDER_ONLY_ENV, SHARD_ENV = "RENDER_ONLY", "SHARD"
"""Set the build's ``render_only`` and ``shard`` settings: ``make build RENDER_ONLY=1``,
``make build SHARD=2/8``."""
ENV_VARS = {
    "fresh": FRESH_ENV,
    "cache_dir": CACHE_DIR_ENV,
    "executor": EXECUTOR_ENV,
    "shared_store": SHARED_STORE_ENV,
    "shared_store_mode": SHARED_STORE_MODE_ENV,
    "render_only": RENDER_ONLY_ENV,
    "shard": SHARD_ENV,
}
"""The options a tool outside MkDocs sets, and the variable mkdocs.yml reads each from."""


def deployed_version() -> str | None:
    """The version folder ``mike deploy`` builds the site for (``make publish``), None in any
    other build: the install line, the version selector and the drift report follow it. mike
    sets ``MIKE_DOCS_VERSION`` for the build it starts, after it has read mkdocs.yml (an ``!ENV``
    there would find it unset), and its own plugin reads it from the environment too."""
    return os.environ.get(docs_version_var) or None


def validated(values: Any, config_file_path: str | None) -> BuildSettings:
    """``values`` (mkdocs.yml's ``extra.build``) checked; ``ConfigurationError`` names each
    wrong value or unknown option."""
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ConfigurationError(f"extra.{KEY}: expected a mapping of options, got {values!r}")
    settings = BuildSettings(config_file_path=config_file_path)
    settings.load_dict(values)
    failed, unknown = settings.validate()
    problems = [
        f"extra.{KEY}.{key}: {error}"
        + (f" (mkdocs.yml reads it from ${ENV_VARS[key]})" if key in ENV_VARS else "")
        for key, error in [*failed, *unknown]
    ]
    if problems:
        raise ConfigurationError("\n".join(problems))
    return settings


def of(config) -> BuildSettings:
    """The settings of MkDocs' ``config`` (its ``extra.build``), validated."""
    return validated(config.extra.get(KEY), config.config_file_path)


def read(project_root: Path) -> BuildSettings:
    """The settings in ``project_root``'s mkdocs.yml, read as MkDocs reads them (``!ENV`` from
    this process's environment)."""
    path = project_root / "mkdocs.yml"
    with path.open("rb") as file:
        config = yaml_load(file)
    return validated((config.get("extra") or {}).get(KEY), str(path))


# Process scope: the build running in this process (one at a time), its project root and its
# settings, for what no build object reaches (the store's folder, from every named cache).
_running: tuple[Path | None, BuildSettings] | None = None


def use(config) -> BuildSettings:
    """Validate the starting build's settings; ``current()`` returns them from now on."""
    global _running
    path = config.config_file_path
    _running = (Path(path).parent.resolve() if path else None, of(config))
    return _running[1]


def current(project_root: Path | None = None) -> BuildSettings:
    """The running build's settings (of ``project_root``'s build, if given); where no build of it
    runs in this process, those of its mkdocs.yml (default: this checkout's)."""
    if _running is not None and (project_root is None or project_root.resolve() == _running[0]):
        return _running[1]
    return read(project_root or ROOT)
