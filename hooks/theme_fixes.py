"""Small fixes to the HTML that Material and pymdownx write, each checked by the browser tests.

- The search dialog gets an accessible name (axe: aria-dialog-name).
- Each checklist checkbox is named by its item's text (axe: label).
- Notebook code cells that scroll sideways can be reached by keyboard (axe:
  scrollable-region-focusable); Material does this for its own code blocks, not for notebooks.
- The 404 page's ``base`` gets its trailing slash: without it the browser resolves
  ``sitemap.xml``, ``search/search_index.json`` and ``../versions.json`` one folder too high.
"""

from __future__ import annotations

import html
import re

_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_NAMED_SEARCH_DIALOG = _SEARCH_DIALOG.replace('role="dialog"', 'role="dialog" aria-label="Search"')
_TASK = re.compile(
    r'(<li class="task-list-item"><label class="task-list-control"><input type="checkbox")'
    r"([^>]*>.*?</label>)(.*?)</li>",
    re.DOTALL,
)
_TAG = re.compile(r"<[^>]+>")
_NOTEBOOK_CODE = re.compile(r'<div class="(highlight-ipynb[^"]*)"')
_BASE_WITHOUT_SLASH = re.compile(r'("base": "[^"]*[^/"])"')


def _name_checkbox(match: re.Match[str]) -> str:
    text = " ".join(html.unescape(_TAG.sub("", match[3])).split())
    label = html.escape(text, quote=True)
    return f'{match[1]} aria-label="{label}"{match[2]}{match[3]}</li>'


def _name_search_dialog(output: str) -> str:
    if _SEARCH_DIALOG not in output:
        raise ValueError("theme_fixes: Material's search dialog markup changed; update the hook")
    return output.replace(_SEARCH_DIALOG, _NAMED_SEARCH_DIALOG, 1)


def on_page_content(html_content, page, config, files):
    html_content = _NOTEBOOK_CODE.sub(r'<div class="\1" tabindex="0"', html_content)
    return _TASK.sub(_name_checkbox, html_content)


def on_post_page(output, page, config):
    return _name_search_dialog(output)


def on_post_template(output_content, template_name, config):
    if template_name != "404.html":
        return output_content
    output_content = _BASE_WITHOUT_SLASH.sub(r'\1/"', output_content, count=1)
    return _name_search_dialog(output_content)
