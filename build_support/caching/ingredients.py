"""Key ingredients beyond the code and the package: how a block's output is rendered, and the
environment variables that change what JAX, XLA or NumPy compute or report.

- **Rendering.** markdown-exec turns a block's output into HTML with the page's own Markdown
  settings: the stored HTML holds ``<abbr title>`` from the files pymdownx.snippets appends to
  every page (``auto_append``: the glossary) and code markup shaped by pymdownx.highlight's
  options. So a block's key holds every Markdown extension with its options, the content of
  every auto-appended file, markdown-exec's own options, and the versions of the libraries
  that render (Python-Markdown, pymdown-extensions, Pygments, MkDocs).
- **Environment.** The variables below are read by JAX, XLA, the CUDA/ROCm/TPU runtimes,
  NumPy or its BLAS, without any file changing: ``JAX_NUM_CPU_DEVICES=4`` gives four devices,
  ``JAX_ENABLE_X64=1`` float64 results. Code that uses ``jax`` or ``examples`` keys on every
  set variable with a ``JAX_VARIABLES`` prefix; every block keys on those of
  ``NUMERIC_VARIABLES``. ``IGNORED_VARIABLES`` change speed alone, never a printed value.
``TF_*`` is left out: XLA reads only logging switches there (``TF_CPP_*``, to the terminal,
never into an output), and the prefix is Terraform's too (``TF_VAR_*``, ``TF_CLI_*``).

The build's own code (every ``.py`` under ``build_support/``) runs the blocks and decides what
an entry holds (a notebook's cell ids, a session's outputs): an edit to it is in every key, but
for the modules that only read what was built (``NOT_IN_ENTRIES``).

Snippets included into a block (``--8<--``) are in its key through its code: pymdownx.snippets
expands them before markdown-exec sees the block, and ``expand_snippets`` does the same for the
pre-parse of a session (``execution.sessions.read_sessions``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

JAX_VARIABLES = (
    "JAX_",  # JAX_NUM_CPU_DEVICES, JAX_ENABLE_X64, JAX_PLATFORMS, JAX_DEFAULT_MATMUL_PRECISION...
    "XLA_",  # XLA_FLAGS (forced CPU device count, GPU autotuning), XLA_PYTHON_CLIENT_*
    "CUDA_",  # CUDA_VISIBLE_DEVICES: which GPUs JAX sees
    "NVIDIA_",  # container runtimes' NVIDIA_VISIBLE_DEVICES
    "NCCL_",
    "TPU_",
    "LIBTPU_",
    "ROCR_",  # ROCR_VISIBLE_DEVICES
    "HIP_",  # HIP_VISIBLE_DEVICES
    "GPU_DEVICE_ORDINAL",
)
NUMERIC_VARIABLES = (
    "NPY_",  # NumPy's switches (NPY_PROMOTION_STATE, NPY_DISABLE_CPU_FEATURES...)
    "NUMPY_",
    "OPENBLAS_",  # OPENBLAS_CORETYPE picks other kernels: other rounding
    "MKL_",
    "OMP_",  # thread counts can change a reduction's order, so its last digits
    "PYTHONHASHSEED",  # the printed order of a set of strings
)
IGNORED_VARIABLES = {
    "OPENBLAS_THREAD_TIMEOUT": "how long idle BLAS threads spin (the Makefile sets it): speed only",
    # JAX's import sets it in its own process wherever it finds no TPU (cloud_tpu_init.py), so a
    # build that imported JAX holds it and one that did not does not: every output re-ran under
    # make serve. Which devices JAX then uses is in the key already, as the backend label.
    "TPU_SKIP_MDS_QUERY": "JAX sets it on import where it finds no TPU; the devices are keyed",
}
RENDERING_TOOLS = ("mkdocs", "markdown", "pymdown-extensions", "pygments", "markdown-exec")


def variables(prefixes: tuple[str, ...], environ: Mapping[str, str] | None = None) -> str:
    """``NAME=value; ...`` of every set variable starting with one of ``prefixes``."""
    environ = os.environ if environ is None else environ
    names = sorted(
        name for name in environ if name.startswith(prefixes) and name not in IGNORED_VARIABLES
    )
    return "; ".join(f"{name}={environ[name]}" for name in names) or "none set"


def markdown_settings(config: Any) -> dict[str, Any]:
    """The Markdown extensions and their options, as MkDocs passes them to Python-Markdown,
    plus markdown-exec's own options: a callable option is named, never its address."""
    plugin = config.plugins.get("markdown-exec") if config.plugins else None
    return _plain(
        {
            "extensions": list(config.markdown_extensions),
            "options": dict(config.mdx_configs),
            "markdown-exec": dict(plugin.config) if plugin is not None else None,
        }
    )


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(name): _plain(item) for name, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_plain(item) for item in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if callable(value):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', repr(value))}"
    return f"{type(value).__module__}.{type(value).__qualname__}"  # an extension instance


def _snippets_options(config: Any) -> dict[str, Any]:
    return dict(config.mdx_configs.get("pymdownx.snippets") or {})


def auto_appended(config: Any) -> dict[str, bytes]:
    """``docs/includes/abbreviations.md`` -> its bytes, for every file pymdownx.snippets appends
    to every page, found as it finds them (relative to its ``base_path``, by default the
    working directory); a missing one maps to empty bytes (the build fails on it anyway)."""
    if "pymdownx.snippets" not in config.markdown_extensions:
        return {}
    options = _snippets_options(config)
    bases = options.get("base_path", ["."])
    bases = [bases] if isinstance(bases, str | os.PathLike) else bases
    found = {}
    for name in options.get("auto_append", []):
        paths = (Path(base) / name for base in bases)
        path = next((path for path in paths if path.is_file()), None)
        found[str(name)] = path.read_bytes() if path is not None else b""
    return found


def expand_snippets(markdown: str, config: Any) -> str:
    """The page's Markdown with every ``--8<--`` line replaced by the file it names, by
    pymdownx.snippets itself with the site's options (nothing appended): what superfences
    and markdown-exec will see. Unchanged when the site does not use the extension."""
    if "pymdownx.snippets" not in config.markdown_extensions:
        return markdown
    import markdown as python_markdown
    from pymdownx.snippets import SnippetExtension

    options = _snippets_options(config) | {"auto_append": [], "check_paths": False}
    converter = python_markdown.Markdown(extensions=[SnippetExtension(**options)])
    return "\n".join(converter.preprocessors["snippet"].run(markdown.split("\n")))


NOT_IN_ENTRIES = {
    "build_support/build_command.py",
    "build_support/caching/check_cache.py",
    "build_support/caching/compare.py",
    "build_support/publishing/record.py",
    "build_support/publishing/report.py",
    # A page's rendered HTML, keyed on its own: it reads what was built, never an output.
    "build_support/rendering/__init__.py",
    "build_support/rendering/page_cache.py",
}


def build_code() -> dict[str, bytes]:
    """``build_support/execution/sessions.py`` -> its bytes, for every module of the build's own
    code, in every subpackage, that can change what an entry holds (a new module is, until its
    path is listed in ``NOT_IN_ENTRIES``)."""
    package = Path(__file__).resolve().parent.parent
    paths = {path.relative_to(package.parent).as_posix(): path for path in package.rglob("*.py")}
    return {name: paths[name].read_bytes() for name in sorted(paths) if name not in NOT_IN_ENTRIES}
