"""The theme's templates compiled once, not once a build.

MkDocs makes a new Jinja environment for every build, so every build would parse and compile
Material's templates again (``base.html``, ``main.html``, the partials: 0.19 s of a 0.6 s
prose-edit rebuild under ``mkdocs serve``; ~15 % of the section's nothing-changed build).
Both caches here are Jinja's own bytecode cache protocol (``jinja2.BytecodeCache``): a
template's compiled code kept under its name and file, with the SHA-1 of its source, which
Jinja checks before it uses the code (an edited template is compiled again), and with every
setting of the environment that changes what the compiler writes (``compiler_settings``).

- ``COMPILED``, under ``mkdocs serve``: in the process, for every rebuild
  (``hooks/serve_last_build.py``);
- ``StoredTemplates``, for ``mkdocs build``: in the build's store (cache ``templates``), keyed
  besides by the Python and Jinja versions (Jinja's header checks the format, not the release).
  A FRESH=1 build compiles afresh (``hooks/page_render_cache.py``).
"""

from __future__ import annotations

import sys
from types import CodeType

import jinja2
from jinja2 import BytecodeCache, Environment
from jinja2.bccache import Bucket

from .caching.cache import Cache, key_of


def compiler_settings(environment: Environment) -> tuple:
    """What, besides a template's source, the code Jinja compiles from it depends on: its
    syntax, whitespace handling, extensions, escaping, finalizer, and the filters and tests it
    knows (an unknown one fails the compile)."""
    return (
        environment.block_start_string,
        environment.block_end_string,
        environment.variable_start_string,
        environment.variable_end_string,
        environment.comment_start_string,
        environment.comment_end_string,
        environment.line_statement_prefix,
        environment.line_comment_prefix,
        environment.trim_blocks,
        environment.lstrip_blocks,
        environment.newline_sequence,
        environment.keep_trailing_newline,
        tuple(sorted(environment.extensions)),
        environment.optimized,
        repr(environment.autoescape),
        repr(environment.finalize),
        environment.is_async,
        tuple(sorted(environment.filters)),
        tuple(sorted(environment.tests)),
    )


class CompiledTemplates(BytecodeCache):
    """Compiled templates held in this process, keyed as above."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, tuple], tuple[str, CodeType]] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        held = self._held.get((bucket.key, compiler_settings(bucket.environment)))
        if held is not None and held[0] == bucket.checksum:
            bucket.code = held[1]

    def dump_bytecode(self, bucket: Bucket) -> None:
        key = (bucket.key, compiler_settings(bucket.environment))
        self._held[key] = (bucket.checksum, bucket.code)


# Process scope: MkDocs loads the hooks afresh for every serve rebuild.
COMPILED = CompiledTemplates()


def compile_once(environment: Environment) -> Environment:
    """``environment`` (a serve rebuild's) with the templates compiled by earlier rebuilds."""
    environment.bytecode_cache = COMPILED
    return environment


class StoredTemplates(BytecodeCache):
    """Compiled templates kept in the build's store (``cache``), keyed as above."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def _key(self, bucket: Bucket) -> str:
        settings = repr(compiler_settings(bucket.environment))
        return key_of("jinja", bucket.key, settings, jinja2.__version__, sys.version)

    def load_bytecode(self, bucket: Bucket) -> None:
        found = self.cache.read(self._key(bucket))
        if found.entry is not None:
            bucket.bytecode_from_string(found.entry)  # Jinja checks the header and checksum

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.cache.write(self._key(bucket), bucket.bytecode_to_string())
