"""Draw each mermaid diagram when the site is built, with mermaid itself, as an inline SVG.

A page's ``pre.mermaid`` blocks (printed by its live code at every build) are handed to
mermaid (``mermaid.min.js`` from the npm package, pinned in package-lock.json) in a headless
browser, and replaced by the SVG it draws. Readers then download no script for the
diagram (mermaid is 3.5 MB), and it shows without JavaScript, in print, and after Material's
instant navigation, which swaps in the page's HTML as it is. The browser (any Chrome-family
one: ``build_support.browser``) is needed only when a diagram is not in the cache.

Mermaid is given Material's own diagram stylesheet (``themeCSS``, read from the installed
theme), as Material does when it draws diagrams in the browser. That stylesheet colours the
diagram with Material's CSS variables, so one SVG follows the reader's colour scheme, and its
toggle, like the rest of the page. The drawing page loads Material's stylesheets too, so labels
are measured in the site's own fonts.

Drawn SVGs are kept in the store's ``diagrams`` cache (build_support/caching/store.py), keyed on the
diagram's source, mermaid's file, Material's stylesheets, this hook's drawing script, playwright's
version and the system's font folders (labels are measured in system fonts). Each entry holds the
version of the browser that drew it: where a browser is found, an entry drawn by another version
is drawn again; where none is, a cached diagram is still shown (nothing could draw another), so a
rebuild with unchanged diagrams needs no browser. Any other change draws again.
"""

from __future__ import annotations

import hashlib
import html
import importlib.metadata
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.exceptions import PluginError

from build_support import browser
from build_support.caching.cache import Cache, as_mapping, key_of
from build_support.caching.store import EntryFault
from build_support.theme import material_assets

MERMAID = Path("node_modules/mermaid/dist/mermaid.min.js")
_MATERIAL_DIAGRAM_CSS = "components/content/mermaid/index.css"
_DIAGRAM = re.compile(r'<pre class="mermaid"><code>(.*?)</code></pre>', re.DOTALL)

# The drawing script (mermaid_draw.js, beside this file): Material's settings for mermaid (its
# components/content/mermaid/index.ts), then one render per diagram. Each SVG is then trimmed of
# what a static drawing never uses: style rules that match none of its elements (mermaid ships
# its whole theme, Material its rules for every diagram type), the data attributes mermaid keeps
# for interaction and animation, and edge labels with no text. A label's <p> (not allowed inside
# a <span> in HTML) becomes a block <span>. Every id inside an SVG starts with the SVG's own id.
# Its text, as the file holds it (from its first, empty line), is in each drawing's cache key,
# which names the diagram's ids.
_DRAW = (Path(__file__).parent / "mermaid_draw.js").read_text(encoding="utf-8")
# The page it runs in (in each drawing's key too): Material's stylesheets, then mermaid.
_PAGE = (
    '<!doctype html><html><head>{stylesheets}<script src="{mermaid}"></script></head>'
    '<body data-md-color-scheme="default"><div class="md-typeset"></div></body></html>'
)


class Drawing:
    """What a drawing depends on besides its source (mermaid, Material's styles, the fonts, the
    browser's version), and the cache it is kept in; read once per build."""

    def __init__(self, config) -> None:
        root = Path(config.config_file_path).parent
        self.mermaid = root / MERMAID
        if not self.mermaid.is_file():
            raise PluginError(f"{self.mermaid} is missing: run `make setup` (npm ci) first")
        self.cache = Cache.for_project("diagrams", root)
        material = material_assets(config)
        self.stylesheets = sorted((material / "stylesheets").glob("*.min.css"))
        self.theme_css = _material_diagram_css(material / "javascripts")
        inputs = {
            "mermaid": hashlib.sha256(self.mermaid.read_bytes()).hexdigest(),
            "stylesheets": [path.name for path in self.stylesheets],  # named by their hash
            "theme_css": self.theme_css,
            "draw": _DRAW,
            "page": _PAGE,
            "playwright": importlib.metadata.version("playwright"),
            "fonts": fonts_fingerprint(),
        }
        self.fingerprint = json.dumps(inputs, sort_keys=True)
        # The browser that would draw now, if any: an entry drawn by another version is a miss.
        # Its version is checked, not keyed: a build whose diagrams are all cached needs no
        # browser, and where none is found no drawing could differ from the cached one.
        try:
            found = browser.find().path
        except browser.BrowserNotFound:
            self.browser = None
        else:
            self.browser = browser_version(str(found), Cache.for_project("browser-version", root))

    def key(self, source: str) -> str:
        return hashlib.sha256(f"{self.fingerprint}\n{source}".encode()).hexdigest()


def browser_version(executable: str, cache: Cache) -> str:
    """What ``executable --version`` prints (``Chromium 131.0.6778.85 ...``), read once per
    install of the browser: its answer is kept in the store, keyed on the file's identity."""
    path = Path(executable).resolve()
    try:
        stat = path.stat()
    except OSError:
        return f"no browser at {executable}"
    key = key_of(str(path), str(stat.st_size), str(stat.st_mtime_ns))
    version = cache.read_text(key)
    if version is None:
        try:
            result = subprocess.run(
                [executable, "--version"], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"{executable} --version failed: {error}"  # a miss: drawing will say more
        version = result.stdout.strip() or f"{executable} --version printed nothing"
        if result.returncode == 0:
            cache.write_text(key, version)
    return version


FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.fonts", "~/.local/share/fonts")
FONT_DIRS += ("/Library/Fonts", "/System/Library/Fonts", "~/Library/Fonts")  # macOS


def fonts_fingerprint() -> str:
    """The fonts the browser can measure labels in (the site sets ``font: false``: system
    fonts), as the folders that hold them: adding, removing or replacing a font changes the
    modification time of its folder. A walk of folders only, well under a millisecond."""
    digest = hashlib.sha256()
    for top in FONT_DIRS:
        for folder, subfolders, _ in os.walk(os.path.expanduser(top)):
            subfolders.sort()
            digest.update(f"{folder} {os.stat(folder).st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _material_diagram_css(javascripts: Path) -> str:
    # Material bundles the stylesheet into its script; the source map beside it holds it whole.
    for source_map in javascripts.glob("bundle.*.min.js.map"):
        sources = json.loads(source_map.read_text(encoding="utf-8"))
        for name, text in zip(sources["sources"], sources["sourcesContent"], strict=True):
            if name.endswith(_MATERIAL_DIAGRAM_CSS):
                return text
    raise PluginError(f"mermaid_svg: no {_MATERIAL_DIAGRAM_CSS} in {javascripts}'s source map")


_drawing: Drawing | None = None


def on_config(config):
    global _drawing
    _drawing = Drawing(config)
    return config


def _draw(drawing: Drawing, diagrams: list[tuple[str, str]], where: str) -> list[str]:
    """Run mermaid on ``(id, source)`` pairs in one headless browser; return their SVGs."""
    try:
        browser.find()  # here, on a cache miss only: a build with every diagram cached needs none
    except browser.BrowserNotFound as error:
        raise PluginError(
            f"{where}: {len(diagrams)} diagram(s) to draw (not in the cache), and {error}"
        ) from None
    # Playwright's sync API refuses a thread that already runs an event loop (or another
    # sync_playwright, as in the browser tests): a thread of its own always works.
    with ThreadPoolExecutor(max_workers=1) as thread:
        result = thread.submit(_draw_in_chromium, drawing, diagrams).result()
    if "error" in result:
        raise PluginError(f"{where}: mermaid could not draw diagram {result['error']}")
    return result["svgs"]


def drawing_page(drawing: Drawing) -> str:
    """The page mermaid draws in: Material's stylesheets and mermaid, each loaded by the browser
    from its file (handed over the driver's pipe, mermaid's 3.5 MB took 0.4 s more)."""
    # Resolved: the config file's path, and so these, may be relative (`mkdocs build`).
    uris = [path.resolve().as_uri() for path in drawing.stylesheets]
    links = "".join(f'<link rel="stylesheet" href="{uri}">' for uri in uris)
    return _PAGE.format(stylesheets=links, mermaid=drawing.mermaid.resolve().as_uri())


def _draw_in_chromium(drawing: Drawing, diagrams: list[tuple[str, str]]) -> dict:
    from playwright.sync_api import sync_playwright  # only when something is to be drawn

    with tempfile.TemporaryDirectory(prefix="diagrams-") as folder:
        page_file = Path(folder) / "draw.html"
        page_file.write_text(drawing_page(drawing), encoding="utf-8")
        with sync_playwright() as playwright:
            chrome = browser.launch(playwright)
            try:
                page = chrome.new_page()
                page.goto(page_file.as_uri())  # once loaded: its stylesheets and mermaid too
                return page.evaluate(_DRAW, [drawing.theme_css, diagrams])
            finally:
                chrome.close()


def as_drawing(payload: bytes) -> dict[str, str]:
    """A stored drawing: ``{"svg": ..., "browser": <the version that drew it>}``."""
    drawn = as_mapping(payload)
    svg, drew = drawn.get("svg"), drawn.get("browser")
    if not (isinstance(svg, str) and svg.startswith("<svg") and isinstance(drew, str)):
        raise EntryFault("not a drawn SVG with its browser's version")
    return drawn


def svgs_for(drawing: Drawing, sources: list[str], where: str) -> list[str]:
    """The SVG of each source, from the cache or drawn now (all misses in one browser)."""
    keys = [drawing.key(source) for source in sources]
    svgs = {key: cached_svg(drawing, key) for key in keys}
    missing = {key: source for key, source in zip(keys, sources, strict=True) if not svgs[key]}
    if missing:
        ids = [(f"diagram-{key[:12]}", source) for key, source in missing.items()]
        for key, svg in zip(missing, _draw(drawing, ids, where), strict=True):
            drawing.cache.write_mapping(key, {"svg": svg, "browser": drawing.browser or "unknown"})
            svgs[key] = svg
    return [svgs[key] for key in keys]


def cached_svg(drawing: Drawing, key: str) -> str | None:
    """The cached SVG for ``key``; None when there is none, or another version of the browser
    found now drew it."""
    drawn = drawing.cache.read(key, as_drawing).entry
    if drawn is None or drawing.browser not in (None, drawn["browser"]):
        return None  # not drawn yet, or by another version of the browser found now
    return drawn["svg"]


def on_page_content(html_content, page, config, files):
    return inline_svgs(html_content, _drawing, page.file.src_uri)


def inline_svgs(html_content: str, drawing: Drawing, where: str) -> str:
    """``html_content`` with each ``pre.mermaid`` block replaced by its SVG (ids made unique
    where the same diagram shows twice); ``where`` names the page in errors."""
    sources = [html.unescape(match[1]) for match in _DIAGRAM.finditer(html_content)]
    if not sources:
        return html_content
    svgs = iter(svgs_for(drawing, sources, where))
    seen: dict[str, int] = {}

    def inline(match: re.Match[str]) -> str:
        svg = next(svgs)
        name = re.search(r'\bid="([^"]+)"', svg)[1]  # the first id is the SVG's own
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:  # the same diagram again on this page: its ids must differ
            svg = svg.replace(name, f"{name}-{seen[name]}")
        return f'<div class="course-diagram">{svg}</div>'

    return _DIAGRAM.sub(inline, html_content)
