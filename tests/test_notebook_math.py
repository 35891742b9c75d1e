"""A notebook's formulas as MathML, written by KaTeX when the site is built
(build_support/notebooks/tex.py): the page loads nothing to show them, from the site or another
host, and a rebuild whose formulas are in the store starts no Node."""

from __future__ import annotations

import pytest

from build_support.caching.cache import Cache
from build_support.caching.store import FileStore
from build_support.notebooks import myst, tex

TEXT = "Inline $2^{19937}-1$ and {math}`a < b`, then\n\n$$\n\\frac{x}{y}\n$$\n\nand $\\nosuch$.\n"


def rendered() -> str:
    return myst.render(TEXT, myst.Resolver(label=lambda name: None, document=lambda path: None))


def test_formulas_become_mathml_with_their_tex_and_nothing_to_load(tmp_path):
    page = rendered()
    assert tex.formulas(page) == [
        ("2^{19937}-1", False),
        ("a < b", False),
        ("\\frac{x}{y}", True),
        ("\\nosuch", False),
    ]
    shown = tex.as_mathml(page, Cache("math", FileStore(tmp_path)))
    assert "arithmatex" not in shown and "\\(" not in shown and "\\[" not in shown
    assert shown.count("<math") == 4 and shown.count('display="block"') == 1
    assert '<annotation encoding="application/x-tex">a &lt; b</annotation>' in shown
    assert '<div class="notebook-math"><span class="katex"><math' in shown
    assert "<script" not in shown and "<link" not in shown and "src=" not in shown
    assert 'mathcolor="#cc0000"' in shown  # a formula KaTeX cannot read: its TeX, marked


def test_a_rebuild_takes_each_formula_from_the_store(tmp_path, monkeypatch):
    cache = Cache("math", FileStore(tmp_path))
    first = tex.as_mathml(rendered(), cache)

    def no_node(items, katex):
        raise AssertionError(f"Node started for {items}")

    monkeypatch.setattr(tex, "_katex", no_node)
    assert tex.as_mathml(rendered(), Cache("math", FileStore(tmp_path))) == first
    assert tex.as_mathml("<p>no formula</p>", None) == "<p>no formula</p>"


def test_without_katex_the_build_says_what_to_run(tmp_path):
    with pytest.raises(tex.TexError, match=r"katex\.js is missing: run `make setup`"):
        tex.as_mathml(rendered(), None, katex=tmp_path / "node_modules/katex/dist/katex.js")
