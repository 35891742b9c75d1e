"""Serve mermaid from the site itself, and load it only on pages that have a diagram.

Material renders ``pre.mermaid`` blocks in the browser and fetches mermaid from a CDN unless a
global ``mermaid`` already exists. This hook adds ``mermaid.min.js`` from the npm package
(installed by ``make setup`` from package-lock.json) to the site, and puts a script tag for it
into the content of each page that holds a diagram. The tag sits inside Material's content
container, so instant navigation runs it too when a reader moves to such a page.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

SITE_PATH = "assets/javascripts/mermaid.min.js"
_NPM_PATH = Path("node_modules/mermaid/dist/mermaid.min.js")


def _mermaid_source(config) -> Path:
    source = Path(config.config_file_path).parent / _NPM_PATH
    if not source.is_file():
        raise PluginError(f"{source} is missing: run `make setup` (npm ci) first")
    return source


def on_files(files, config):
    files.append(File.generated(config, SITE_PATH, abs_src_path=str(_mermaid_source(config))))
    return files


def on_page_content(html, page, config, files):
    if 'class="mermaid"' not in html:
        return html
    src = get_relative_url(SITE_PATH, page.url)
    return html + f'\n<script src="{src}"></script>\n'
