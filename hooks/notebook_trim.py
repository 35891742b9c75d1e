"""Notebook pages carry only the styles their cells use, and no loader for what the site lacks.

mkdocs-jupyter's template inlines JupyterLab's whole stylesheet (about 575 KB) into every
notebook page, adds a MathJax loader whose address is empty (``<script src="">``: the site
sets no ``custom_mathjax_url``, since it loads nothing from another host) and a script that
would import mermaid from cdnjs if a cell printed a diagram. Its documented switches
(``theme``, ``include_requirejs``, ``custom_mathjax_url``, ``no_input``, ...) keep all three.
So, once mkdocs-jupyter has rendered a notebook page, this hook

- keeps, of each inline ``<style>``, the rules whose classes all occur on the page, and the
  custom properties (``--jp-...``) that what is kept uses: the page looks the same;
- drops the MathJax loader and its configuration, and the cdnjs mermaid loader. A notebook
  whose output is a mermaid diagram fails the build instead of drawing nothing.

Parsing JupyterLab's stylesheet takes most of a second, so a trimmed page is kept in the store's
``notebook-trim`` cache (build_support/caching/store.py), keyed on the page as rendered, this
hook's own source and the versions of tinycss2 and Python: a rebuild with an unchanged notebook
page reads it back.
"""

from __future__ import annotations

import platform
import re
from pathlib import Path

import tinycss2
from mkdocs.exceptions import PluginError

from build_support.caching.cache import Cache, key_of

_STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.DOTALL)
_MATHJAX = re.compile(
    r"<!-- Load mathjax -->\s*<script src=\"\">\s*</script>.*?"
    r"<!-- End of mathjax configuration -->",
    re.DOTALL,
)
_MERMAID_LOADER = re.compile(
    r'<script type="module">(?:(?!</script>).)*?import\("https://[^"]*mermaid(?:(?!</script>).)*</script>',
    re.DOTALL,
)
_CLASS_ATTRIBUTE = re.compile(r'class="([^"]*)"')
_CLASS_IN_SELECTOR = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
_VAR = re.compile(r"var\(\s*(--[\w-]+)")


_LOGICAL = re.compile(r":(?:not|is|where|has|matches)\([^()]*\)|\[[^\]]*\]")


def _selector_may_match(selector: str, classes: set[str]) -> bool:
    # A selector may match when every class it requires is on the page. Classes inside
    # :not(), :is(), :where(), :has() and attribute selectors are not required: left out.
    while _LOGICAL.search(selector):
        selector = _LOGICAL.sub("", selector)
    return all(name in classes for name in _CLASS_IN_SELECTOR.findall(selector))


def _selectors(prelude: list) -> list[str]:
    """A rule's selectors: split at its top-level commas (not those inside ``:is(...)``)."""
    selectors: list[list] = [[]]
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            selectors.append([])
        else:
            selectors[-1].append(token)
    return [tinycss2.serialize(tokens).strip() for tokens in selectors]


def _rules(css: str) -> list:
    return tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)


def _kept_rules(rules: list, classes: set[str]) -> list[tuple[str, list]]:
    """(prelude, declarations or nested rules) of each rule that may match; at-rules kept."""
    kept = []
    for rule in rules:
        if rule.type == "qualified-rule":
            matching = [s for s in _selectors(rule.prelude) if _selector_may_match(s, classes)]
            if matching:
                declarations = tinycss2.parse_blocks_contents(
                    rule.content, skip_comments=True, skip_whitespace=True
                )
                kept.append((",".join(matching), declarations))
        elif rule.type == "at-rule" and rule.lower_at_keyword in {"media", "supports"}:
            inner = _kept_rules(_rules(tinycss2.serialize(rule.content or [])), classes)
            if inner:
                kept.append((f"@{rule.at_keyword}{tinycss2.serialize(rule.prelude)}", inner))
        elif rule.type == "at-rule":
            kept.append((tinycss2.serialize([rule]), None))
    return kept


def _declarations(kept: list) -> list:
    for prelude, body in kept:
        if body and prelude.startswith("@"):
            yield from _declarations(body)
        elif body:
            yield from (d for d in body if d.type == "declaration")


def _used_properties(kept_sheets: list[list], other_text: str) -> set[str]:
    """Custom properties used by kept declarations or the page, and by those they use."""
    definitions: dict[str, set[str]] = {}
    used = set(_VAR.findall(other_text))
    for kept in kept_sheets:
        for declaration in _declarations(kept):
            refs = set(_VAR.findall(tinycss2.serialize(declaration.value)))
            if declaration.name.startswith("--"):
                definitions.setdefault(declaration.name, set()).update(refs)
            else:
                used |= refs
    pending = list(used)
    while pending:
        for ref in definitions.get(pending.pop(), ()):
            if ref not in used:
                used.add(ref)
                pending.append(ref)
    return used


def _serialize(kept: list, used: set[str]) -> str:
    out = []
    for prelude, body in kept:
        if body is None:
            out.append(prelude)
        elif prelude.startswith("@"):
            inner = _serialize(body, used)
            if inner:
                out.append(f"{prelude}{{{inner}}}")
        else:
            declarations = [
                f"{d.name}:{tinycss2.serialize(d.value).strip()}"
                + ("!important" if d.important else "")
                for d in body
                if d.type == "declaration" and (not d.name.startswith("--") or d.name in used)
            ]
            if declarations:
                out.append(f"{prelude}{{{';'.join(declarations)}}}")
    return "".join(out)


def trim_styles(page_html: str) -> str:
    """Each inline <style> of ``page_html`` cut to what may apply to the page's elements."""
    classes = {name for value in _CLASS_ATTRIBUTE.findall(page_html) for name in value.split()}
    sheets = [_kept_rules(_rules(match[2]), classes) for match in _STYLE.finditer(page_html)]
    used = _used_properties(sheets, _STYLE.sub("", page_html))
    trimmed = iter([_serialize(kept, used) for kept in sheets])

    def replace(match: re.Match[str]) -> str:
        css = next(trimmed)
        return f"{match[1]}{css}{match[3]}" if css else ""

    return _STYLE.sub(replace, page_html)


_HOOK_SOURCE = Path(__file__).read_bytes()


def trimming_tools() -> str:
    """The tools a trimmed page depends on besides this hook's source, with their versions
    (``tinycss2 1.4.0; Python 3.12.8``): part of its key in the cache."""
    return f"tinycss2 {tinycss2.__version__}; Python {platform.python_version()}"


def trimmed_page(page_html: str, cache: Cache) -> str:
    """``trim_styles(page_html)``, read back from ``cache`` when this page was trimmed before."""
    key = key_of(_HOOK_SOURCE, trimming_tools(), page_html)
    trimmed = cache.read_text(key)
    if trimmed is None:
        trimmed = trim_styles(page_html)
        cache.write_text(key, trimmed)
    return trimmed


_cache: dict[str, Cache] = {}  # this build's (a fault is reported once per build)


def on_config(config):
    _cache["trim"] = Cache.for_project("notebook-trim", Path(config.config_file_path).parent)
    return config


def on_page_content(html_content, page, config, files):
    if '<div class="jupyter-wrapper">' not in html_content:
        return html_content  # not a page mkdocs-jupyter rendered
    if re.search(r'class="[^"]*\bjp-Mermaid\b', html_content):
        raise PluginError(
            f"{page.file.src_uri}: a cell outputs a mermaid diagram, which the site cannot draw "
            "(it loads nothing from another host); print it into a Markdown page instead"
        )
    html_content = _MATHJAX.sub("", html_content)
    html_content = _MERMAID_LOADER.sub("", html_content)
    return trimmed_page(html_content, _cache["trim"])
