"""Under ``mkdocs serve``, the theme's templates are compiled once a process, not once a rebuild.

MkDocs makes a new Jinja environment for every build, so every serve rebuild would parse and
compile Material's templates again (``base.html``, ``main.html``, the partials: 0.19 s of a
0.6 s prose-edit rebuild, paid by the first page rendered). ``COMPILED`` keeps each template's
compiled code in memory as Jinja's own bytecode cache does (``jinja2.BytecodeCache``): under the
template's name and file, with the SHA-1 of its source, which Jinja checks before it uses the
code (an edited template is compiled again), and with every setting of the environment that
changes what the compiler writes. ``hooks/serve_last_build.py`` gives it to each serve
rebuild's environment; ``mkdocs build`` compiles afresh: one build, nothing to reuse.
"""

from __future__ import annotations

from types import CodeType

from jinja2 import BytecodeCache, Environment
from jinja2.bccache import Bucket


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
