"""Under ``mkdocs serve``, pages answer while a rebuild runs (a block may run for a minute): the
last whole build stays served until the next is whole (``build_support/serve_staging.py``).
Last of the hooks: its ``on_post_build`` moves in what every other hook wrote."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from build_support import serve_staging, serve_templates


def on_startup(command, dirty):
    if command == "serve":
        serve_staging.SERVE.lock.serving = True


def on_serve(server, config, builder):
    serve_staging.serve_without_waiting(server)
    serve_staging.poll_often(server, config)  # a rebuild starts 0.05 s after an edit, not 0.25
    serve_staging.watch_for_rebuilds(server)  # a notebook still running asks for one when done
    return server


def on_config(config):
    serve_staging.take_lock(config.config_file_path)  # one build of the checkout at a time
    config.site_dir = serve_staging.staged(config.site_dir)
    return config


def on_env(env, config, files):
    if serve_staging.SERVE.lock.serving:  # a serve rebuild compiles only the templates it has not
        serve_templates.compile_once(env)
    return env


def on_post_build(config):
    serve_staging.move_in(config.site_dir)
    serve_staging.release_lock()


def on_build_error(error):
    serve_staging.release_lock()


def on_shutdown():
    serve_staging.discard_staging()  # a rebuild stopped half way (Ctrl-C, SIGTERM)
