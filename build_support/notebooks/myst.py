"""MyST Markdown (a notebook's Markdown cells, as Jupyter Book reads them) into the site's HTML.

Parsed by markdown-it-py with mdit-py-plugins' MyST plugins, the parser MyST-Parser itself is
built on (``myst_role``, ``myst_blocks``, ``colon_fence``, ``dollarmath``, ``deflist``):
CommonMark as Jupyter renders a cell, with what MyST adds rendered as what it means, never as
literal braces:

- admonition directives (```` ```{note} ````, ``:::{warning}``, ``{tip}``, ``{important}``,
  ``{seealso}``, ``{admonition} Title``, ...) become Material admonitions; ``:class: dropdown``
  and ``{dropdown}`` a collapsible one (``<details>``);
- ``{code-block}``/``{code}`` a highlighted listing, ``{math}`` a display formula (``$...$``,
  ``$$...$$`` and ``{math}`` become MathML in the page: ``tex.py``),
  ``{image}``/``{figure}`` an image; ``{toctree}`` and ``{contents}`` nothing; any other
  directive its body;
- ``(label)=`` an anchor; ``{ref}`` and ``{doc}`` a link where the target is on the site (a
  ``{ref}`` to a label before a heading shows the heading's text, even in the next Markdown
  cell; ``{ref}`Title <label>``` its title), its title or target as text otherwise, said at
  build time (``Resolver.unresolved``); ``{term}``, ``{math}``, ``{sub}``, ``{sup}``,
  ``{kbd}``, ``{abbr}`` what they mean; any other role (``{func}``, ``{class}``, ``{code}``,
  ...) inline code, as Sphinx shows it (``~`` keeps the last name, functions end in ``()``);
- headings get ids as the site's other pages do (Python-Markdown's ``toc`` slug, unique on the
  page) and a permalink; each is listed for the page's table of contents;
- a link to another page of the site (``other.md``, ``other.ipynb``, a label) becomes its URL;
  one to nothing on the site, its text (said at build time, as an unresolved ``{ref}``);
- an image on another host (a Colab badge, a remote figure) becomes its alt text: the site
  loads nothing from another host (``jupyter_book.remote_loads`` fails the build on any other
  such request a cell's HTML makes).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from markdown.extensions.toc import slugify, unique

__all__ = ["Heading", "Resolver", "highlighted", "render", "targets"]

# Admonition directives, by the Material type that draws them (its aliases as MyST names them)
ADMONITIONS = {
    "note": "note",
    "tip": "tip",
    "hint": "tip",
    "important": "tip",
    "warning": "warning",
    "caution": "warning",
    "attention": "warning",
    "danger": "danger",
    "error": "danger",
    "seealso": "info",
    "todo": "info",
    "versionadded": "info",
    "versionchanged": "info",
    "deprecated": "warning",
}
TITLES = {"seealso": "See also", "versionadded": "New in version", "deprecated": "Deprecated"}
_NOTHING = {"toctree", "tableofcontents", "contents", "glue:figure", "include", "literalinclude"}
_CODE = {"code-block", "code", "sourcecode", "code-cell", "ipython"}
_ASIDES = {"margin", "sidebar", "topic", "card", "tab-item", "dropdown"}
_OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")
_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>\s*$", re.DOTALL)
_FUNCTION_ROLES = {"func", "meth", "py:func", "py:meth"}
REMOTE = re.compile(r"^(?:https?:)?//", re.I)  # an address on another host


@dataclass
class Heading:
    level: int
    id: str
    name: str  # its text, as the table of contents shows it


@dataclass
class Resolver:
    """Where a reference goes on the site: each returns ``(href, title)`` or None.

    ``label``: a ``(label)=`` target (for ``{ref}`` and links naming a label); ``document``: a
    ``{doc}`` path or a link's relative path, from the page's own folder; ``ids``: the ids taken
    on the page (headings, targets, cells), kept unique; ``unresolved``: each role or link that
    found nothing, as the author wrote it (``jupyter_book.py`` names its cell at build time)."""

    label: Callable[[str], tuple[str, str] | None] = lambda name: None
    document: Callable[[str], tuple[str, str] | None] = lambda path: None
    ids: set[str] = field(default_factory=set)
    headings: list[Heading] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # each reference to nothing on the site


def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.myst_blocks import myst_block_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    md = (
        MarkdownIt("commonmark", {"html": True})
        .enable(["table", "strikethrough"])
        .use(myst_role_plugin)
        .use(myst_block_plugin)
        .use(colon_fence_plugin)
        .use(dollarmath_plugin)
        .use(deflist_plugin)
    )
    for name, rule in _RULES.items():
        md.add_render_rule(name, rule)
    return md


_PARSERS: list = []


def _md():
    if not _PARSERS:
        _PARSERS.append(_parser())
    return _PARSERS[0]


def render(text: str, resolver: Resolver, attachments: dict | None = None) -> str:
    """``text`` (one Markdown cell) as HTML; its headings are added to ``resolver.headings``."""
    md = _md()
    env: dict[str, Any] = {"resolver": resolver, "attachments": attachments or {}}
    tokens = md.parse(text, env)
    _resolve_links(tokens, resolver, env)
    return md.renderer.render(tokens, md.options, env)


def targets(text: str, after: str = "") -> list[tuple[str, str]]:
    """The ``(label)=`` targets of ``text`` (a cell), each with the title a ``{ref}`` to it
    shows: the heading right after it, else the label. A target that ends the cell names the
    heading opening ``after`` (the next cell, where it is Markdown), as Sphinx reads a
    notebook: each cell parsed alone, into one document."""
    tokens = _md().parse(text, {})
    found = []
    for index, token in enumerate(tokens):
        if token.type != "myst_target":
            continue
        rest = [t for t in tokens[index + 1 :] if t.type != "myst_target"]
        if not rest and after:
            rest = _md().parse(after, {})
        title = token.content.strip()
        if rest and rest[0].type == "heading_open":
            title = _plain(rest[1].children or [])
        found.append((token.content.strip(), title))
    return found


# ---------------------------------------------------------------- inline text


def _role_text(name: str, content: str) -> str:
    """What Sphinx shows for a role it does not link: its explicit title, else its target."""
    explicit = _EXPLICIT.match(content)
    if explicit:
        return explicit.group(1)
    text = content
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    text = text.lstrip("!")
    if name in _FUNCTION_ROLES and not text.endswith(")"):
        text += "()"
    return text


def _plain(children) -> str:
    """Inline tokens as plain text (a heading's name and slug)."""
    parts = []
    for child in children:
        if child.type in ("text", "code_inline", "math_inline"):
            parts.append(child.content)
        elif child.type == "myst_role":
            parts.append(_role_text(child.meta.get("name", ""), child.content))
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.children:
            parts.append(_plain(child.children))
    return "".join(parts).strip()


def _split_href(href: str) -> tuple[str, str]:
    path, _, fragment = href.partition("#")
    return path, fragment


def _resolve_links(tokens, resolver: Resolver, env) -> None:
    """Each link to a page or a label of the site gets its URL; one to nothing there is
    dropped, its text kept (``meta["drop"]``)."""
    for token in tokens:
        if token.children:
            _resolve_links(token.children, resolver, env)
        if token.type not in ("link_open", "image"):
            continue
        attribute = "href" if token.type == "link_open" else "src"
        href = str(token.attrGet(attribute) or "")
        if token.type == "image" and REMOTE.match(href):
            token.meta["remote"] = True  # shown as its text: the site loads nothing from afar
            continue
        if re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith(("#", "/")):
            if href.startswith("attachment:") and token.type == "image":
                _attachment(token, href, env)
            continue
        path, fragment = _split_href(href)
        found = None
        if path and "/" not in path and "." not in path:
            found = resolver.label(path)  # MyST: [text](label)
        if found is not None:
            fragment = ""
        elif path:
            found = resolver.document(path)
        if found is not None:
            url = found[0] + (f"#{fragment}" if fragment else "")
            token.attrSet(attribute, url)
        elif token.type == "link_open":
            token.meta["drop"] = True
            resolver.unresolved.append(
                f"the link to {href!r} names no page or label of the site: shown as its text"
            )


def _attachment(token, href: str, env) -> None:
    name = href.removeprefix("attachment:")
    bundle = env["attachments"].get(name) or {}
    for mime, data in bundle.items():
        if mime.startswith("image/"):
            token.attrSet("src", f"data:{mime};base64,{''.join(data).strip()}")
            return


# ---------------------------------------------------------------- render rules


def _heading_open(self, tokens, idx, options, env):
    token = tokens[idx]
    resolver: Resolver = env["resolver"]
    name = _plain(tokens[idx + 1].children or [])
    anchor = unique(slugify(name, "-") or "section", resolver.ids)
    resolver.ids.add(anchor)
    token.meta["id"] = anchor
    resolver.headings.append(Heading(int(token.tag[1]), anchor, name))
    return f'<{token.tag} id="{html.escape(anchor)}">'


def _heading_close(self, tokens, idx, options, env):
    opening = next(t for t in reversed(tokens[:idx]) if t.type == "heading_open")
    anchor = html.escape(opening.meta["id"])
    link = f'<a class="headerlink" href="#{anchor}" title="Permanent link">&para;</a>'
    return f"{link}</{tokens[idx].tag}>\n"


def _target(self, tokens, idx, options, env):
    resolver: Resolver = env["resolver"]
    label = tokens[idx].content.strip()
    if label in resolver.ids:
        return ""
    resolver.ids.add(label)
    return f'<div id="{html.escape(label)}" class="myst-target"></div>\n'


def _nothing(self, tokens, idx, options, env):
    return ""


def _link_open(self, tokens, idx, options, env):
    if tokens[idx].meta.get("drop"):
        depth = 0
        for token in tokens[idx + 1 :]:  # its close is dropped too
            if token.type == "link_open":
                depth += 1
            elif token.type == "link_close":
                if depth == 0:
                    token.meta["drop"] = True
                    break
                depth -= 1
        return ""
    return self.renderToken(tokens, idx, options, env)


def _link_close(self, tokens, idx, options, env):
    return "" if tokens[idx].meta.get("drop") else self.renderToken(tokens, idx, options, env)


def _image(self, tokens, idx, options, env):
    token = tokens[idx]
    if token.meta.get("remote"):  # a badge, a remote figure: its alt text, no request
        return html.escape(self.renderInlineAsText(token.children or [], options, env))
    return self.image(tokens, idx, options, env)


def _math_inline(self, tokens, idx, options, env):
    return f'<span class="arithmatex">\\({html.escape(tokens[idx].content)}\\)</span>'


def _math_block(self, tokens, idx, options, env):
    return f'<div class="arithmatex">\\[{html.escape(tokens[idx].content)}\\]</div>\n'


def _role(self, tokens, idx, options, env):
    token = tokens[idx]
    name = token.meta.get("name", "").removeprefix("py:")
    content = token.content
    resolver: Resolver = env["resolver"]
    explicit = _EXPLICIT.match(content)
    title, target = (explicit.group(1), explicit.group(2)) if explicit else ("", content)
    if name in ("ref", "doc", "download", "numref", "any"):
        look = resolver.label if name in ("ref", "numref", "any") else resolver.document
        found = look(target.strip())
        text = html.escape(title or (found[1] if found else target.strip()))
        if found is None:  # shown as Sphinx shows it: its title, else its target, as text
            what = "page" if look is resolver.document else "label"
            resolver.unresolved.append(
                f"{{{name}}}`{content}` names no {what} of the site: shown as the text "
                f"{html.unescape(text)!r}"
            )
        return f'<a href="{html.escape(found[0])}">{text}</a>' if found else text
    if name == "term":
        return html.escape(title or target)
    if name == "math":
        return _math_inline(self, tokens, idx, options, env)
    if name in ("sub", "sup", "kbd"):
        return f"<{name}>{html.escape(content)}</{name}>"
    if name == "abbr":
        short = re.match(r"^(.*?)\s*\((.*)\)\s*$", content, re.DOTALL)
        if short:
            return f'<abbr title="{html.escape(short[2])}">{html.escape(short[1])}</abbr>'
        return html.escape(content)
    if name in ("eq", "cite", "cite:p", "cite:t", "footcite"):
        return html.escape(content)
    return f"<code>{html.escape(_role_text(name, content))}</code>"


def _fence(self, tokens, idx, options, env):
    token = tokens[idx]
    info = token.info.strip()
    if not info.startswith("{"):
        language = info.split()[0] if info else ""
        return highlighted(token.content, language)
    name, _, argument = info[1:].partition("}")
    return _directive(name.strip(), argument.strip(), token.content, env)


# ---------------------------------------------------------------- directives


def _options(body: str) -> tuple[dict[str, str], str]:
    """A directive's ``:key: value`` lines (or ``---`` YAML block) and the rest, its body."""
    lines = body.split("\n")
    found: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        import yaml

        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            loaded = yaml.safe_load("\n".join(lines[1:end])) or {}
            found = {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
            return found, "\n".join(lines[end + 1 :])
    at = 0
    while at < len(lines) and (match := _OPTION.match(lines[at])):
        found[match[1]] = match[2]
        at += 1
    return found, "\n".join(lines[at:])


def _directive(name: str, argument: str, body: str, env) -> str:
    options, body = _options(body)
    resolver: Resolver = env["resolver"]
    inner = _md()

    def rendered(text: str) -> str:
        tokens = inner.parse(text, env)
        _resolve_links(tokens, resolver, env)
        return inner.renderer.render(tokens, inner.options, env)

    anchor = ""
    if options.get("name") and options["name"] not in resolver.ids:
        resolver.ids.add(options["name"])
        anchor = f' id="{html.escape(options["name"])}"'
    classes = options.get("class", "").split()
    if name in _NOTHING:
        return ""
    if name in _CODE:
        return highlighted(body, argument.split()[0] if argument else "python")
    if name == "math":
        return f'<div class="arithmatex"{anchor}>\\[{html.escape(body.strip())}\\]</div>\n'
    if name in ("image", "figure"):
        token_like = _image_html(argument, options, resolver)
        caption = f"<figcaption>{rendered(body)}</figcaption>" if body.strip() else ""
        return f"<figure{anchor}>{token_like}{caption}</figure>\n"
    if name in ADMONITIONS or name == "admonition" or name in _ASIDES:
        kind = ADMONITIONS.get(name) or next(
            (ADMONITIONS.get(c, c) for c in classes if c in ADMONITIONS), "note"
        )
        if name in ADMONITIONS:
            title = TITLES.get(name, name.capitalize())
            if name.startswith(("version", "deprecated")) and argument:
                title = f"{title} {argument}"
            elif argument:
                body = f"{argument}\n{body}"
        else:
            title = argument or name.replace("-", " ").capitalize()
        title_html = rendered(title).strip().removeprefix("<p>").removesuffix("</p>")
        content = rendered(body)
        if name == "dropdown" or "dropdown" in classes:
            open_ = " open" if "open" in options else ""
            return (
                f'<details class="{kind}"{anchor}{open_}><summary>{title_html}</summary>\n'
                f"{content}</details>\n"
            )
        return (
            f'<div class="admonition {kind}"{anchor}>\n'
            f'<p class="admonition-title">{title_html}</p>\n{content}</div>\n'
        )
    if name in ("epigraph", "pull-quote", "highlights", "blockquote"):
        return f"<blockquote{anchor}>\n{rendered(body)}</blockquote>\n"
    if name in ("raw",) and argument.strip() == "html":
        return body
    if name == "eval-rst":
        return highlighted(body, "rst")
    heading = f"<p><strong>{html.escape(argument)}</strong></p>\n" if argument else ""
    return f'<div class="myst-{html.escape(name)}"{anchor}>\n{heading}{rendered(body)}</div>\n'


def _image_html(source: str, options: dict[str, str], resolver: Resolver) -> str:
    found = resolver.document(source) if not re.match(r"^[a-z]+:", source) else None
    src = found[0] if found else source
    alt = html.escape(options.get("alt", ""))
    width = f' width="{html.escape(options["width"])}"' if "width" in options else ""
    return f'<img src="{html.escape(src)}" alt="{alt}"{width}>'


def highlighted(code: str, language: str = "python") -> str:
    """A listing as the site's other listings are (pymdownx.highlight's markup, Pygments)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    language = {"ipython3": "python", "ipython": "python", "": "text"}.get(language, language)
    try:
        lexer = get_lexer_by_name(language)
    except ClassNotFound:
        lexer, language = get_lexer_by_name("text"), "text"
    body = highlight(code, lexer, HtmlFormatter(wrapcode=True, nowrap=False))
    body = body.removeprefix('<div class="highlight">')
    return f'<div class="language-{html.escape(language)} highlight">{body}'


_RULES: dict[str, Callable] = {
    "heading_open": _heading_open,
    "heading_close": _heading_close,
    "myst_target": _target,
    "myst_line_comment": _nothing,
    "myst_block_break": _nothing,
    "myst_role": _role,
    "math_inline": _math_inline,
    "math_block": _math_block,
    "math_block_label": _math_block,
    "image": _image,
    "link_open": _link_open,
    "link_close": _link_close,
    "fence": _fence,
    "colon_fence": _fence,
}
