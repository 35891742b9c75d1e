"""mike with the builder the Makefile chose: mike runs ``properdocs`` whenever ProperDocs is
installed (``mike/mkdocs_utils.py`` decides once, at import), and ``uv.lock`` installs it beside
MkDocs. ``make publish`` runs mike through this, so that ``BUILDER`` (default ``mkdocs``) decides.

A deploy's commit message on gh-pages names the commit it was built from (mike's ``Deployed
da88029 to v2026.08.01 with ...``); where the files the site is built from differ from that
commit (``make publish ALLOW_DIRTY=1``), it adds ``, with uncommitted changes: <files>``
(``uncommitted.py``): mike builds the working tree, not the commit it names.

    python -m build_support.publishing.mike_builder mkdocs|properdocs MIKE-ARGUMENTS...
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

from mike import commands, driver, git_utils, mkdocs_utils
from mike.app_version import version as mike_version

from .uncommitted import uncommitted, uncommitted_note

BUILDERS = {"mkdocs": "MkDocs", "properdocs": "ProperDocs"}
"""The builders the site builds with: the command (and distribution) and its name."""


def choose(builder: str) -> None:
    """Make mike build with ``builder`` and name it in its gh-pages commits."""
    if builder not in BUILDERS:
        raise SystemExit(f"builder {builder!r}: one of {', '.join(BUILDERS)}")
    mkdocs_utils._program_name = builder
    mkdocs_utils._brand = BUILDERS[builder]
    mkdocs_utils._version = metadata.version(builder)


def deploy_message(version: str, changed: list[str]) -> str:
    """mike's own deploy message, and the uncommitted changes it deploys, where there are."""
    message = (
        f"Deployed {git_utils.get_latest_commit('HEAD', short=True)} to {version} with "
        f"{mkdocs_utils.version_info()} and mike {mike_version}"
    )
    return f"{message}, {uncommitted_note(changed)}" if changed else message


_mike_deploy = commands.deploy


def _deploy(cfg, version, *args, message=None, **kwargs):
    """mike's deploy, with ``deploy_message`` where no ``--message`` was given."""
    if message is None:
        message = deploy_message(version, uncommitted(Path.cwd()))
    return _mike_deploy(cfg, version, *args, message=message, **kwargs)


if __name__ == "__main__":
    commands.deploy = _deploy  # driver.deploy calls it through the module
    choose(sys.argv[1])
    sys.argv = ["mike", *sys.argv[2:]]
    sys.exit(driver.main())
