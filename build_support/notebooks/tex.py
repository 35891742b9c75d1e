"""TeX in a notebook's Markdown (``$...$``, ``$$...$$``, ``{math}``) as MathML, written into the
page when the site is built, by KaTeX (``node_modules/katex``, the version package-lock.json
pins, run with Node.js as ``make setup`` installs it).

Jupyter Book has MathJax typeset a formula in the reader's browser, loaded from a CDN; the site
loads nothing from another host, and MathJax served from the site would be a megabyte of script
for a few formulas. Browsers draw MathML themselves (MathML Core), so the page carries the
formula, with its TeX as the annotation a screen reader or a copy can use, and loads no script,
font or stylesheet for it. A formula KaTeX cannot read is shown as its TeX, marked as KaTeX marks
it (``katex-error``, the parse error as its title), as MathJax would show it.

Each formula's MathML is kept in the store's ``math`` cache, keyed on its TeX, display or
inline, and KaTeX's own file: a rebuild whose formulas are all there starts no Node.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import subprocess
from pathlib import Path

from ..caching.cache import Cache, key_of

KATEX = Path(__file__).resolve().parents[2] / "node_modules" / "katex" / "dist" / "katex.js"
# As ``myst.py`` writes a formula: inline, then display (a ``{math}`` directive keeps its id).
_FORMULA = re.compile(
    r'<span class="arithmatex">\\\((?P<inline>.*?)\\\)</span>'
    r'|<div class="arithmatex"(?P<id> id="[^"]*")?>\\\[(?P<display>.*?)\\\]</div>',
    re.DOTALL,
)
_RENDER = """
const katex = require(process.argv[1]);
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const shown = JSON.parse(input).map(([tex, display]) =>
    katex.renderToString(tex, { displayMode: display, output: "mathml", throwOnError: false })
  );
  process.stdout.write(JSON.stringify(shown));
});
"""


class TexError(Exception):
    """KaTeX could not be run: what is missing, and how to have it."""


def formulas(content: str) -> list[tuple[str, bool]]:
    """Each formula of a rendered page, as ``(TeX, display)``, in order."""
    return [
        (
            html.unescape(
                found["inline"] if found["inline"] is not None else found["display"]
            ).strip(),
            found["inline"] is None,
        )
        for found in _FORMULA.finditer(content)
    ]


def as_mathml(content: str, cache: Cache | None, katex: Path = KATEX) -> str:
    """``content`` (a notebook's page) with each formula ``myst.py`` wrote as MathML."""
    found = formulas(content)
    if not found:
        return content
    if not katex.is_file():
        raise TexError(f"{katex} is missing: run `make setup` (npm ci) first")
    version = hashlib.sha256(katex.read_bytes()).hexdigest()
    keys = [
        key_of("katex", version, tex, "display" if display else "inline") for tex, display in found
    ]
    shown = {key: cache.read_text(key) if cache else None for key in keys}
    missing = [
        (key, formula) for key, formula in zip(keys, found, strict=True) if shown[key] is None
    ]
    if missing:
        for (key, _), mathml in zip(
            missing, _katex([formula for _, formula in missing], katex), strict=True
        ):
            shown[key] = mathml
            if cache:
                cache.write_text(key, mathml)
    replaced = iter(keys)

    def mathml(match: re.Match) -> str:
        rendered = shown[next(replaced)]
        if match["inline"] is not None:
            return rendered
        return f'<div class="notebook-math"{match["id"] or ""}>{rendered}</div>'

    return _FORMULA.sub(mathml, content)


def _katex(items: list[tuple[str, bool]], katex: Path) -> list[str]:
    """KaTeX's MathML of each ``(TeX, display)``, in one run of Node."""
    try:
        result = subprocess.run(
            ["node", "-e", _RENDER, str(katex)],
            input=json.dumps(items),
            capture_output=True,
            encoding="utf-8",  # whatever the locale's is: MathML holds U+2212 and the like
            timeout=120,
            check=False,
        )
    except FileNotFoundError as error:
        raise TexError("node is not on PATH: install Node.js (README, Two commands)") from error
    if result.returncode != 0:
        raise TexError(f"KaTeX failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout)
