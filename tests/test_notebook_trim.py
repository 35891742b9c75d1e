"""hooks/notebook_trim.py: notebook pages keep the styles their elements use, and no dead loader."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import tinycss2
from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError

from build_support.caching.cache import Cache
from build_support.caching.store import Entry, FileStore
from testkit.hooks import load_hook
from testkit.site import page

notebook_trim = load_hook("notebook_trim")

NOTEBOOK = "notebooks/p5-9-1-practice-in-jax"


def styles(html: str) -> list[str]:
    """The text of each <style> in ``html``."""
    return [style.get_text() for style in BeautifulSoup(html, "html.parser").find_all("style")]


def test_rules_for_classes_not_on_the_page_go():
    html = (
        "<style>.a .b{color:red}.a .gone{color:blue}.a,.gone{margin:0}"
        ".x:is(.a, .gone) .b{padding:0}@media print{.gone{display:none}.b{display:block}}</style>"
        '<div class="a"><p class="b">text</p></div>'
    )
    assert styles(notebook_trim.trim_styles(html)) == [
        ".a .b{color:red}.a{margin:0}@media print{.b{display:block}}"
    ]


def test_logical_selectors_keep_their_alternatives():
    html = '<style>:is(.a, .gone) .b{color:red}.b:not(.gone){margin:0}</style><b class="a b"></b>'
    assert styles(notebook_trim.trim_styles(html)) == [
        ":is(.a, .gone) .b{color:red}.b:not(.gone){margin:0}"
    ]


def test_custom_properties_stay_only_when_used_even_through_another():
    html = (
        "<style>.a{--used:var(--base);--base:1px;--unused:2px;--also-unused:var(--base)}"
        ".a{padding:var(--used)!important}</style>"
        '<div class="a" style="margin: var(--inline)"></div>'
        "<style>.a{--inline:3px}.gone{--x:1px}</style>"
    )
    assert styles(notebook_trim.trim_styles(html)) == [
        ".a{--used:var(--base);--base:1px}.a{padding:var(--used)!important}",
        ".a{--inline:3px}",
    ]


def test_a_style_left_empty_is_dropped():
    html = "<p>x</p><style>.gone{color:red}</style>"
    assert notebook_trim.trim_styles(html) == "<p>x</p>"


def test_a_trimmed_page_is_read_back_for_the_same_page_and_trimmed_anew_for_another(tmp_path):
    store = FileStore(tmp_path)
    cache = Cache("notebook-trim", store)
    page_html = '<p class="kept">x</p><style>.kept{color:red}.gone{color:blue}</style>'
    first = notebook_trim.trimmed_page(page_html, cache)
    assert first == notebook_trim.trim_styles(page_html)
    [(entry, _)] = store.entries("notebook-trim")
    store.put("notebook-trim", entry.name, Entry(b"read back"))  # a valid entry, other text
    assert notebook_trim.trimmed_page(page_html, cache) == "read back"  # read, not trimmed
    other = page_html.replace("red", "green")
    assert notebook_trim.trimmed_page(other, cache) == notebook_trim.trim_styles(other)
    assert len(store.entries("notebook-trim")) == 2


def test_a_trimmed_page_is_checksummed_and_keyed_on_tinycss2s_version(tmp_path, monkeypatch):
    assert f"tinycss2 {tinycss2.__version__}" in notebook_trim.trimming_tools()
    store = FileStore(tmp_path)
    cache = Cache("notebook-trim", store)
    page_html = '<p class="kept">x</p><style>.kept{color:red}</style>'
    notebook_trim.trimmed_page(page_html, cache)
    [(entry, _)] = store.entries("notebook-trim")
    entry.write_bytes(entry.read_bytes().replace(b"color:red", b"color:RED"))  # edited on disk
    assert notebook_trim.trimmed_page(page_html, cache) == notebook_trim.trim_styles(page_html)
    monkeypatch.setattr(tinycss2, "__version__", f"{tinycss2.__version__}.another")
    notebook_trim.trimmed_page(page_html, cache)
    assert len(store.entries("notebook-trim")) == 2  # another tinycss2: another entry


def test_a_notebook_that_outputs_a_mermaid_diagram_fails_the_build():
    content = '<div class="jupyter-wrapper"><div class="jp-Mermaid"><pre>graph TD</pre></div></div>'
    notebook = SimpleNamespace(file=SimpleNamespace(src_uri="notebooks/n.py"))
    with pytest.raises(PluginError, match=r"notebooks/n\.py: a cell outputs a mermaid diagram"):
        notebook_trim.on_page_content(content, notebook, None, None)


def test_built_notebook_page_has_no_dead_loader_and_only_used_styles(built_site):
    html = (built_site / NOTEBOOK / "index.html").read_text()
    soup = page(built_site, NOTEBOOK)
    assert soup.select('script[src=""]') == []
    assert "cdnjs" not in html and "MathJax" not in html
    css = "".join(style.get_text() for style in soup.select("article style"))
    assert ".jupyter-wrapper .clipboard-copy-txt{display:none}" in css  # a rule its cells need
    assert "jp-Mermaid" not in css and "--md-red-50" not in css  # what no cell uses
