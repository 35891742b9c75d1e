"""A build or a serve run without ``make`` is as safe as one run with it. First of the hooks: its
``on_config`` runs before any other plugin's or hook's (priority 100), before anything starts.

- ``mkdocs build`` or ``properdocs build`` run directly (a habit, an IDE's task) into the
  checkout's ``site/``: the same command line is run again under the driver ``make build`` runs
  (``build_support/site_swap.py``; ``exec``, the same process id), so it takes the checkout's
  build lock, stages in ``site.builds/`` and is swapped into ``site/`` in one step, and says how
  it ended in the driver's one line. Re-run rather than staged from here, because only the
  driver can tell a build that finished from one that did not: MkDocs fails a strict build for
  its warnings after the last hook has run (``on_post_build``), and a hook never learns it.
  Re-run rather than refused, because this is the command every MkDocs user types.
- Refused in one line naming what to run instead: ``mike deploy`` run directly (a deploy is
  ``make publish``'s: fresh, ``latest`` kept in version order, what changed recorded; mike's own
  reading of the configuration, for ``mike list`` or ``alias``, passes), ``mkdocs gh-deploy``,
  and a build of ``site/`` started from Python (there is no command line to run again).
- A build into a folder its caller names (``-d``/``--site-dir``, ``site_dir=``; the tests' and
  ``make check-cache``'s scratch builds; ``mkdocs serve``'s temporary folder) is left as MkDocs
  does it: nothing reads that folder while it is written but its caller.
- ``mkdocs serve`` watches ``examples/`` and ``hooks/`` because ``mkdocs.yml``'s ``watch`` lists
  them, however it is started.
- SIGTERM and SIGHUP are a Ctrl-C (``KeyboardInterrupt`` in the main thread), so that MkDocs'
  own clean-up runs: its temporary site (``$TMPDIR/mkdocs_*``), the serve's staging beside it
  and rebuild requests (``serve_staging.py``), and every temporary folder the build's hooks
  opened. Python's default for them ends the process at once, leaving all of it in ``TMPDIR``.
  The first is the one: later SIGTERMs and SIGHUPs are ignored while the clean-up runs (a
  Ctrl-C or SIGKILL still ends it).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import threading
from pathlib import Path

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
from mkdocs.exceptions import Abort

from build_support import process_tree, site_swap

MIKE_VERSION_ENV = "MIKE_DOCS_VERSION"  # set by mike for the build it deploys
_started_by: list[str] = []  # on_startup's command: build, serve, gh-deploy, mike (its own process)


def _stop(signum: int, frame: object) -> None:
    # Once only: ``kill -TERM -PGID`` reaches make and MkDocs, and make passes a SIGTERM of its
    # own on; a second KeyboardInterrupt inside MkDocs' clean-up would cut it short (the server's
    # thread left running, the process hung at exit, temporary folders left behind).
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    raise KeyboardInterrupt(process_tree.signal_name(signum))


def on_startup(command, dirty):
    _started_by[:] = [command]
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, _stop)


def _builder() -> str:
    """The builder's name (``mkdocs``, ``properdocs``), as its command line runs it."""
    script = Path(sys.argv[0])
    return script.parent.name if script.name == "__main__.py" else script.name


def _refuse(what: str, instead: str) -> None:
    raise Abort(f"{what}: {instead}; site/ is left as it was")


def on_config(config):
    root = Path(os.path.abspath(config.config_file_path)).parent  # site may be a link: not resolved
    site = Path(os.path.abspath(config.site_dir))
    if os.environ.get(site_swap.SITE_DIR_ENV) or site != root / site_swap.SITE:
        return config  # the driver's staging folder, or a folder that is not the checkout's site/
    cli = click.get_current_context(silent=True)  # MkDocs' command line, where it runs from it
    if cli is not None and cli.params.get("site_dir"):
        return config  # -d: the caller's own folder (the tests', make check-cache's)
    if _started_by == ["mike"] and "deploy" not in sys.argv[1:]:
        return config  # mike reading the configuration (list, alias, set-default): no build
    if _started_by == ["mike"] or os.environ.get(MIKE_VERSION_ENV):  # mike, or the build it runs
        _refuse("mike deploy", "run `make publish` (it runs mike itself, fresh and locked)")
    if cli is None or cli.info_name != "build":
        what = f"{_builder()} {cli.info_name}" if cli else "a build of site/ started from Python"
        _refuse(what, "run `make build` (or `make publish` to deploy)")
    what = f"{_builder()} build"
    site_swap.reenter(root, what, [sys.executable, *sys.orig_argv[1:]])  # does not return


on_config.mkdocs_priority = 100  # before every plugin and hook: nothing has started yet
