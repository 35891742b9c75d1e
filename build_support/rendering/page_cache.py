"""A page's rendered HTML, reused from the store while nothing that feeds it changed.

MkDocs renders every page through the theme's Jinja templates on every build
(``mkdocs.commands.build._build_page``: ``template.render(context)``), and every page of
Material carries the whole navigation: N pages render O(N) nav items each. This module keeps
the output of that one call in the store (``caching/store.py``, cache ``pages``), under a key of
everything the render can read, and hands it back instead of rendering while the key is the
same. Everything before the render (the Markdown, every ``on_page_context``, Material's search
index) and after it (every ``on_post_page``: the site's hooks) still runs, on the reused HTML.

What the key holds (``PageRenders.key``), in two parts:

- **the site's**, read at the build's first page: the config, every option (the Markdown
  extensions, ``extra``, the plugins' own configs, the hooks' files by SHA-256), in canonical
  JSON; every file the template loader can read (the overrides' and every template by
  SHA-256; an installed theme's other files, its icons among them, by its version); the Jinja
  environment (its compiler settings, its
  globals, filters and tests, each callable named and, where it is the project's own code, its
  file's SHA-256); Python's version and every installed distribution's (mkdocs, Material,
  every plugin, Jinja);
- **the page's**, read at its render: the template's name, and every value of the context
  MkDocs and the plugins handed to it: the page (its content, table of contents, meta, title,
  URLs, and every other attribute a plugin set), its previous and next pages, its ancestors,
  the whole navigation (each item's title, URL, meta, and whether it is active), the site's
  pages, ``base_url``, the scripts and stylesheets.

The site's part is read once a build, and so is the navigation, but for its active items (read
at each page) and any item whose fingerprint changed since (``_fingerprint``, read at each page:
O(N) cheap reads, where describing it all would be O(N) JSON): a plugin that changes the
config, or another page's meta in place, in the middle of a build is not seen.

A value the key cannot describe (an object with no state to read, a cycle) leaves that page
rendered, every build, and said once. A render that logged a warning is not kept: the next
build renders it and warns again (``--strict`` counts it). Paths in the key are written from
the project's root (``<project>``) or Python's prefix (``<prefix>``), so that another checkout
of the same sources reuses the same entries. Some values change between builds without anything
changing (``VOLATILE``): the build's clock (``build_date_utc``), a page's date
(``update_date``), the folder the build writes (``site_dir``, one per build under ``make
build``), the store's folder and FRESH (``extra.build``); each is in the key only where a
template's source names it (the theme's own ``sitemap.xml`` and ``404.html`` are
rendered on their own, never as a page, and so not read for that). FRESH=1 reads nothing and
stores every render.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from jinja2 import Environment, Template

from ..caching.cache import Cache, canonical, digest, key_of
from ..caching.environment import installed_distributions
from ..caching.store import EntryFault
from ..serve_templates import compiler_settings

CACHE_NAME = "pages"
LAYOUT = "page-render-1"  # what the key holds, and how: changed with this module's keying
VOLATILE = ("build_date_utc", "update_date", "site_dir", "cache_dir", "fresh")
"""Values that differ between builds of the same sources: the build's clock, a page's date, the
folder the build writes (one per build under ``make build``), and the build's own store and
FRESH switch (``extra.build``). Each is in the key only where a template's source names it."""
TEMPLATE_SUFFIXES = {".html", ".htm", ".xml", ".j2", ".jinja", ".jinja2", ".txt", ".md"}
"""A file the loader can read with one of these suffixes is keyed on its SHA-256 and read for
``VOLATILE``'s names (``template_files``)."""
MAX_DEPTH = 24
# The attributes of a page that only the page itself shows, left out where another page (the
# navigation, previous/next links) refers to it: a prose edit to one page renders it alone.
OWN_ONLY = {
    "content",
    "markdown",
    "toc",
    "present_anchor_ids",
    "links_to_anchors",
    "file",
    "parent",
    "children",
    "previous_page",
    "next_page",
}
_STRUCTURE_MODULES = ("mkdocs.", "properdocs.")
log = logging.getLogger("mkdocs.hooks.page_render_cache")


class Undescribable(Exception):
    """A value in a page's context that the key cannot describe: the page is rendered."""


class _Warnings(logging.Handler):
    """Counts the warnings logged while a page renders."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _kind(value: Any) -> str | None:
    """MkDocs' (or ProperDocs') structure class of ``value`` by name: Page, Section, Link,
    Navigation, File, Theme; None for anything else."""
    for klass in type(value).__mro__:
        if klass.__module__.startswith(_STRUCTURE_MODULES) and klass.__name__ in {
            "Page",
            "Section",
            "Link",
            "Navigation",
            "File",
            "Theme",
            "BasePlugin",
        }:
            return klass.__name__
    return None


@dataclass
class Describer:
    """Values as canonical JSON, for the key: paths written from the project's root or Python's
    prefix, ``VOLATILE`` names left out unless ``named``."""

    project: Path
    named: set[str] = field(default_factory=set)
    active: bool = True  # each item's active state (False: the navigation's memo leaves it out)
    _digests: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._roots = [(str(self.project), "<project>"), (sys.prefix, "<prefix>")]
        self._roots += [(sys.base_prefix, "<base-prefix>")]

    def text(self, value: str) -> str:
        for root, name in self._roots:
            if value.startswith(root):
                return name + value[len(root) :]
        return value

    def file_digest(self, path: str | None) -> str | None:
        """A source file's SHA-256 (memoized for the build), where it is the project's own; an
        installed package's file changes with its version, which the key holds."""
        if not path or not path.startswith(str(self.project)):
            return None
        if path not in self._digests:
            try:
                self._digests[path] = digest(Path(path).read_bytes())
            except OSError:
                self._digests[path] = "unreadable"
        return self._digests[path]

    def mapping(self, value: Mapping, skip: tuple[str, ...] = (), depth: int = 0) -> dict:
        found = {}
        for key, item in value.items():
            name = key if isinstance(key, str) else canonical(self(key, depth + 1))
            if name in VOLATILE and name not in self.named:
                found[name] = "<read by no template>"
            elif name not in skip:
                found[name] = self(item, depth + 1)
        return found

    def __call__(self, value: Any, depth: int = 0) -> Any:
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            return self.text(str(value))
        if depth > MAX_DEPTH:
            raise Undescribable(f"a value nested deeper than {MAX_DEPTH} ({type(value).__name__})")
        kind = _kind(value)
        if kind is not None:
            return getattr(self, f"_{kind.lower()}")(value, depth)
        if isinstance(value, Mapping):
            return self.mapping(value, depth=depth)
        if isinstance(value, list | tuple):
            return [self(item, depth + 1) for item in value]
        if isinstance(value, set | frozenset):
            return sorted((self(item, depth + 1) for item in value), key=canonical)
        if isinstance(value, datetime | date):
            return value.isoformat()
        if isinstance(value, Path):
            return self.text(str(value))
        if isinstance(value, ModuleType):
            path = getattr(value, "__file__", None)
            return {"module": self.text(value.__name__), "sha256": self.file_digest(path)}
        if callable(value) and hasattr(value, "__qualname__"):
            return self.callable(value)
        if isinstance(value, functools.partial):
            arguments = {"args": value.args, "keywords": value.keywords}
            return {"partial": self.callable(value.func), **self.mapping(arguments, depth=depth)}
        if _state_in_dict(value):
            state = self.mapping(vars(value), depth=depth)
            return {"object": _name(type(value)), "state": state}
        text = repr(value)
        if " at 0x" in text:
            raise Undescribable(f"a {_name(type(value))} with no state to read")
        return {"object": _name(type(value)), "repr": text}

    def callable(self, value: Any) -> dict:
        function = getattr(value, "__func__", value)
        code = getattr(function, "__code__", None)
        path = code.co_filename if code is not None else getattr(function, "__file__", None)
        if path is None and isinstance(function, type):
            path = getattr(sys.modules.get(function.__module__), "__file__", None)
        return {"callable": _name(function), "sha256": self.file_digest(path)}

    # ---------------------------------------------------------------- MkDocs' structure

    def page(self, page: Any, depth: int = 0) -> dict:
        """The page being rendered: every attribute, its neighbours and ancestors by reference."""
        found = self._page(page, depth)  # as the navigation shows it
        found["parent"] = self.ancestors(page)
        for name in ("previous_page", "next_page"):
            neighbour = getattr(page, name, None)
            found[name] = None if neighbour is None else self._page(neighbour, depth + 1)
        own = {name: value for name, value in vars(page).items() if name in OWN_ONLY}
        for name in ("content", "markdown"):  # long: their digest, cheaper than their JSON
            if isinstance(own.get(name), str):
                own[name] = {"sha256": digest(self.text(own[name]))}
        found |= self.mapping(own, skip=("parent", "previous_page", "next_page"), depth=depth)
        return found

    def ancestors(self, item: Any) -> list:
        return [self._section(section, 0, children=False) for section in item.ancestors]

    def _page(self, page: Any, depth: int) -> dict:
        """A page as another page's navigation, previous or next link shows it."""
        found = {"page": self(page.title), "url": page.url}
        if self.active:
            found["active"] = page.active
        found |= {"is_index": page.is_index, "is_homepage": page.is_homepage}
        public = {
            name: value
            for name, value in vars(page).items()
            if not name.startswith("_") and name not in OWN_ONLY
        }
        return found | self.mapping(public, skip=("title", "url", "active"), depth=depth)

    def _section(self, section: Any, depth: int, children: bool = True) -> dict:
        found = {"section": self(section.title)}
        if self.active:
            found["active"] = section.active
        if children:
            found["children"] = [self(child, depth + 1) for child in section.children or ()]
        rest = {name: v for name, v in vars(section).items() if not name.startswith("_")}
        return found | self.mapping(rest, ("title", "active", "children", "parent"), depth)

    def _link(self, link: Any, depth: int) -> dict:
        rest = {name: v for name, v in vars(link).items() if not name.startswith("_")}
        return {"link": self.mapping(rest, ("parent",), depth)}

    def _navigation(self, nav: Any, depth: int) -> dict:
        homepage = nav.homepage
        return {
            "items": [self(item, depth + 1) for item in nav.items],
            "homepage": None if homepage is None else homepage.url,
            "pages": len(nav.pages),
        }

    def _file(self, file: Any, depth: int) -> dict:
        return {
            "file": file.src_uri,
            "dest": file.dest_uri,
            "url": file.url,
            "inclusion": str(getattr(file, "inclusion", "")),
        }

    def _theme(self, theme: Any, depth: int) -> dict:
        custom = getattr(theme, "custom_dir", None)
        return {
            "theme": theme.name,
            "dirs": [self.text(os.path.abspath(folder)) for folder in theme.dirs],
            "custom_dir": self.text(os.path.abspath(custom)) if custom else None,
            "static_templates": sorted(theme.static_templates),
            "options": self.mapping(dict(theme.items()), depth=depth),
        }

    def _baseplugin(self, plugin: Any, depth: int) -> dict:
        """A plugin as templates read it (``config.plugins.search.config``): its class and its
        config, never its build state (the search index grows page by page)."""
        return {"plugin": _name(type(plugin)), "config": self(plugin.config, depth + 1)}


def _state_in_dict(value: Any) -> bool:
    """Whether ``vars(value)`` holds its state: an instance of heap types only (classes made by a
    class statement; a static C type keeps its state in itself, and its repr is read instead),
    none with ``__slots__`` (``functools.partial``, a C heap type, is described before this)."""
    if not hasattr(value, "__dict__"):
        return False
    for klass in type(value).__mro__[:-1]:  # object has neither
        if not klass.__flags__ & _HEAP_TYPE or getattr(klass, "__slots__", ()):
            return False
    return True


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def _name(value: Any) -> str:
    return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', '?')}"


def _absolute_paths(config: Any) -> dict:
    """The config's options, its file's path made absolute: ``mkdocs serve`` gives its first
    build the path as typed (``mkdocs.yml``) and each rebuild the absolute one."""
    options = dict(config.items())
    if options.get("config_file_path"):
        options["config_file_path"] = os.path.abspath(options["config_file_path"])
    return options


def _walk(items: Any, depth: int = 0) -> Any:
    """The navigation's items in order, each with its depth."""
    for item in items or ():
        yield depth, item
        if getattr(item, "is_section", False):
            yield from _walk(item.children, depth + 1)


def _fingerprint(item: Any, depth: int) -> tuple:
    """What tells that a navigation item changed since it was described, read for every item at
    every page, so cheap: its depth, kind and title, its meta's identity and size, how many
    attributes it has. Missed: another page's meta edited in place to the same size, or another
    attribute of it set anew, by a plugin in the middle of a build (after its first page)."""
    state = vars(item)
    meta = state.get("meta")
    size = len(meta) if isinstance(meta, dict) else -1
    return (depth, type(item).__name__, item.title, id(meta), size, len(state))


def loader_folders(environment: Environment) -> list[Path]:
    """The folders the environment's loader reads templates from (a FileSystemLoader's, or the
    loaders a ChoiceLoader or PrefixLoader holds)."""
    pending, folders = [environment.loader], []
    while pending:
        loader = pending.pop(0)
        if loader is None:
            continue
        folders += [Path(path) for path in getattr(loader, "searchpath", [])]
        pending += list(getattr(loader, "loaders", []))
        pending += list(getattr(loader, "mapping", {}).values())
    return folders


def template_files(folders: list[Path], describe: Describer, static: set[str]) -> dict:
    """Every file the loader can read, folder by folder: a template's SHA-256 (its source read
    for ``VOLATILE``'s names, into ``describe.named``); any other file of the project's own
    folders by SHA-256 too; in an installed package's folder (Material's icons, scripts and
    stylesheets: some 14,000 files) only how many there are, the package's version (in the
    key) standing for their content."""
    installed = tuple(os.path.join(prefix, "") for prefix in {sys.prefix, sys.base_prefix})
    found: dict[str, Any] = {}
    for folder in folders:
        listing: dict[str, Any] = {}
        absolute = os.path.abspath(folder)
        of_a_package = absolute.startswith(installed)
        others = 0
        for root, dirs, files in os.walk(absolute):
            dirs.sort()
            for name in sorted(files):
                template = os.path.splitext(name)[1].lower() in TEMPLATE_SUFFIXES
                if of_a_package and not template:
                    others += 1
                    continue
                path = os.path.join(root, name)
                relative = path[len(absolute) + 1 :].replace(os.sep, "/")
                try:
                    with open(path, "rb") as file:
                        data = file.read()
                except OSError:
                    listing[relative] = "unreadable"
                    continue
                listing[relative] = digest(data)
                if template and relative not in static:  # rendered on their own, never a page's
                    describe.named |= {n for n in VOLATILE if n.encode() in data}
        listing["<other files>"] = others
        found[describe.text(absolute)] = digest(canonical(listing))
    return found


def environment_of(environment: Environment, describe: Describer) -> dict:
    """What the Jinja environment brings to a render besides the templates."""
    return {
        "compiler": describe(list(compiler_settings(environment))),
        "globals": describe.mapping(environment.globals),
        "filters": describe.mapping(environment.filters),
        "tests": describe.mapping(environment.tests),
        "extensions": sorted(environment.extensions),
        "policies": describe.mapping(environment.policies),
    }


def _decompress(payload: bytes) -> str:
    try:
        return zlib.decompress(payload).decode()
    except (zlib.error, UnicodeDecodeError) as error:
        raise EntryFault("not a compressed page") from error


@dataclass
class PageRenders:
    """One build's page renders: looked up in the store, rendered and kept where missing."""

    project: Path
    cache: Cache
    read_enabled: bool = True
    reused: int = 0
    rendered: list[str] = field(default_factory=list)  # the pages rendered (and kept)
    not_described: dict[str, str] = field(default_factory=dict)  # page -> why
    warned: list[str] = field(default_factory=list)
    _site: str | None = None
    _describe: Describer | None = None
    _pages: tuple[Any, Any] | None = None  # the site's pages' list, and its description
    _nav: tuple[Any, list, str] | None = None  # the navigation, its fingerprint, its digest

    @classmethod
    def for_build(cls, project: Path, cache_dir: str, fresh: bool) -> PageRenders:
        from ..caching.store import FileStore

        return cls(project, Cache(CACHE_NAME, FileStore(Path(cache_dir))), not fresh)

    def site_key(self, environment: Environment, config: Any) -> str:
        """The site's part of every page's key, read at the build's first page."""
        if self._site is None:
            describe = Describer(self.project)
            static = set(getattr(config.theme, "static_templates", ()))
            files = template_files(loader_folders(environment), describe, static)
            site = {
                "layout": LAYOUT,
                "python": sys.version,
                "installed": installed_distributions(),
                "templates": files,
                "environment": environment_of(environment, describe),
                "config": describe.mapping(_absolute_paths(config)),
            }
            self._describe, self._site = describe, key_of(site)
        return self._site

    def key(self, environment: Environment, name: str, context: Mapping[str, Any]) -> str:
        """The key of one page's render of the template ``name`` with ``context``; raises
        ``Undescribable``."""
        site = self.site_key(environment, context["config"])
        describe = self._describe
        assert describe is not None
        page = {"template": name}
        for part, value in context.items():
            if part == "config":
                continue  # the site's part holds it
            if part in VOLATILE and part not in describe.named:
                continue
            if part == "page":
                page[part] = describe.page(value)
            elif part == "pages":
                page[part] = self._site_pages(value, describe)
            elif part == "nav" and _kind(value) == "Navigation":
                page[part] = self._navigation(value, describe)
            else:
                page[part] = describe(value)
        return key_of(site, page)

    def _navigation(self, nav: Any, describe: Describer) -> dict:
        """The whole navigation as a page shows it: every item described (without its active
        state) once a build, and again only where an item's fingerprint changed since; which
        items are active, read at each page."""
        items = list(_walk(nav.items))
        fingerprint = [_fingerprint(item, depth) for depth, item in items]
        if self._nav is None or self._nav[0] is not nav or self._nav[1] != fingerprint:
            self._nav = (nav, fingerprint, key_of(replace(describe, active=False)(nav)))
        active = [index for index, (_, item) in enumerate(items) if item.active]
        return {"items": self._nav[2], "active": active}

    def _site_pages(self, pages: Any, describe: Describer) -> Any:
        """The site's pages (``context['pages']``, the one list MkDocs hands every page)."""
        if self._pages is None or self._pages[0] is not pages:
            self._pages = (pages, describe(pages))
        return self._pages[1]

    def render(self, template: Template, name: str, context: Mapping[str, Any]) -> str:
        """``template.render(context)``, or the stored HTML of the same render."""
        page = context.get("page")
        if page is None or not isinstance(context.get("config"), Mapping):
            return template.render(context)  # a theme's own template (404, sitemap): every time
        where = page.file.src_uri
        try:
            key = self.key(template.environment, name, context)
        except Undescribable as why:
            if not self.not_described:
                log.info("Page renders: %s is rendered every build: %s", where, why)
            self.not_described[where] = str(why)
            return template.render(context)
        if self.read_enabled:
            html = self.cache.read(key, _decompress).entry
            if html is not None:
                self.reused += 1
                return html
        html = _render_noting_warnings(template, context, self, where)
        self.rendered.append(where)
        if where not in self.warned:
            self.cache.write(key, zlib.compress(html.encode(), 1), page=where)
        return html

    def summary(self) -> str:
        total = self.reused + len(self.rendered) + len(self.not_described)
        line = f"{self.reused} of {total} reused, {len(self.rendered)} rendered"
        if 0 < len(self.rendered) <= 3:
            line += f" ({', '.join(self.rendered)})"
        if self.not_described:
            line += f", {len(self.not_described)} not keyable (rendered)"
        if self.warned:
            line += f", {len(self.warned)} logged a warning (not kept)"
        return line if self.read_enabled else f"{line} (FRESH=1: none read)"


def _render_noting_warnings(
    template: Template, context: Mapping[str, Any], renders: PageRenders, where: str
) -> str:
    handler = _Warnings()
    loggers = [logging.getLogger(), logging.getLogger("mkdocs")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        return template.render(context)
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        if handler.count:
            renders.warned.append(where)


def reuse_renders(environment: Environment, renders: PageRenders) -> Environment:
    """``environment`` whose pages' templates render through ``renders``: ``get_template(name)``
    as MkDocs' ``_build_page`` calls it (no parent) gives the template wrapped; the templates
    extended or included by a render (a parent given) are Jinja's own."""
    get_template: Callable[..., Template] = environment.get_template

    def get_page_template(name, parent=None, globals=None):
        template = get_template(name, parent, globals)
        return template if parent is not None else ReusedRender(template, name, renders)

    environment.get_template = get_page_template  # type: ignore[method-assign]
    return environment


class ReusedRender:
    """A template whose ``render(context)`` goes through ``PageRenders``; everything else is
    the template's own."""

    def __init__(self, template: Template, name: str, renders: PageRenders) -> None:
        self._template, self._name, self._renders = template, name, renders

    def render(self, *args: Any, **kwargs: Any) -> str:
        if len(args) == 1 and not kwargs and isinstance(args[0], Mapping):
            return self._renders.render(self._template, self._name, args[0])
        return self._template.render(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._template, name)
