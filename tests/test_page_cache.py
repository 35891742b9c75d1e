"""A page's render reused from the store equals a fresh render, after each change an author makes
(hooks/page_render_cache.py, build_support/rendering/page_cache.py).

A small Material site (four pages in a nav with a section, a template in ``overrides/`` that
reads ``config.extra``, a hook of its own that rewrites every page after the render) is built
twice side by side after each change: with the store the previous builds filled, and fresh (an
empty store, FRESH=1); every file of the two sites must be the same (``compare.differences``,
as ``make check-cache``), and the cached build must have rendered exactly the pages the change
reaches (its log says how many it reused). The tests run in file order and build on each
other: each change lands on a store that holds the previous state (each count holds as well
after any other order). Two tests in the build's process check what the differential builds
cannot reach: a value the key cannot describe, the build's clock, a render that logged a warning.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from jinja2 import Environment

from build_support.build_command import BUILD_ENV, CACHE_DIR_ENV, FRESH_ENV
from build_support.caching.cache import Cache
from build_support.caching.compare import differences
from build_support.caching.store import FileStore
from build_support.rendering.page_cache import Describer, PageRenders, Undescribable
from testkit.build import mkdocs_build
from testkit.small_site import hook

PAGES = 4
MKDOCS_YML = f"""\
site_name: Page cache
site_url: https://example.org/
strict: true
theme:
  name: material
  font: false
  custom_dir: overrides
  features:
    - navigation.footer
plugins:
  - search
hooks:
  - {hook("page_render_cache")}
  - stamp.py
nav:
  - Home: index.md
  - First: first.md
  - Part two:
      - second.md
      - third.md
extra:
  banner: Course notes
  build: {{fresh: !ENV FRESH, cache_dir: !ENV COURSE_CACHE_DIR}}
"""
MAIN_HTML = """\
{% extends "base.html" %}
{% block announce %}<p class="banner">{{ config.extra.banner }}</p>{% endblock %}
"""
# After the render, on the reused HTML as on a fresh one: what the build's own hooks do.
STAMP_PY = """\
import os


def on_post_page(output, page, config):
    stamp = os.environ.get("PAGE_STAMP", "none")
    return output.replace("</body>", f"<!-- stamped {stamp} --></body>")
"""
FILES = {
    "mkdocs.yml": MKDOCS_YML,
    "stamp.py": STAMP_PY,
    "overrides/main.html": MAIN_HTML,
    "docs/index.md": "# Home\n\nThe course's first page.\n",
    "docs/first.md": "# First\n\nA page of prose.\n\n## A heading\n\nMore prose.\n",
    "docs/second.md": "# Second steps\n\nThe second page.\n",
    "docs/third.md": "# Third steps\n\nThe third page.\n",
}
_RENDERS = re.compile(r"Page renders: (\d+) of (\d+) reused")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("page-cache") / "project"
    for name, text in FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    assert cached_and_fresh(project) == 0  # an empty store: every page rendered, and kept
    return project


def cached_and_fresh(project: Path, **env: str) -> int:
    """Build with the project's store and fresh, side by side; assert the two sites are the
    same; how many renders the cached build reused."""
    out = project.parent
    sides = [
        (out / "cached", {"fresh": False, "cache_dir": out / "store"}),
        (out / "fresh", {"fresh": True, "cache_dir": out / "fresh-store"}),
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(
            pool.map(
                lambda side: mkdocs_build(project / "mkdocs.yml", side[0], env=env, **side[1]),
                sides,
            )
        )
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
    assert differences(out / "cached", out / "fresh") == []
    found = _RENDERS.search(results[0].stderr)
    assert found is not None, results[0].stderr[-2000:]
    assert int(found[2]) == PAGES
    fresh = _RENDERS.search(results[1].stderr)
    assert fresh is not None and fresh[1] == "0"  # FRESH=1 reads no render
    return int(found[1])


def edit(project: Path, name: str, old: str, new: str) -> None:
    path = project / name
    text = path.read_text()
    assert old in text, f"{old!r} not in {name}"
    path.write_text(text.replace(old, new, 1))


def page(project: Path, name: str) -> str:
    return (project.parent / "cached" / name / "index.html").read_text()


def test_nothing_changed_reuses_every_render(site):
    assert cached_and_fresh(site) == PAGES


def test_a_config_named_by_a_relative_path_reuses_every_render(site):
    # mkdocs serve's first build names mkdocs.yml as typed, each rebuild by its absolute path.
    env = {**os.environ, **BUILD_ENV, CACHE_DIR_ENV: str(site.parent / "store"), FRESH_ENV: ""}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml"]
    command += ["-d", str(site.parent / "relative")]
    result = subprocess.run(command, cwd=site, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"Page renders: {PAGES} of {PAGES} reused" in result.stderr


def test_a_prose_edit_renders_that_page_alone(site):
    edit(site, "docs/first.md", "More prose.", "More prose, edited.")
    assert cached_and_fresh(site) == PAGES - 1
    assert "More prose, edited." in page(site, "first")


def test_a_page_title_elsewhere_in_the_nav_renders_every_page(site):
    # third.md's title comes from its heading: every page's nav shows it, second.md's "next".
    edit(site, "docs/third.md", "# Third steps", "# Third and last steps")
    assert cached_and_fresh(site) == 0
    assert "Third and last steps" in page(site, "second")
    assert "Third and last steps" in page(site, "")


def test_the_nav_order_renders_every_page(site):
    second, third = "      - second.md\n", "      - third.md\n"
    edit(site, "mkdocs.yml", second + third, third + second)
    assert cached_and_fresh(site) == 0


def test_a_template_in_overrides_renders_every_page(site):
    edit(site, "overrides/main.html", '<p class="banner">', '<p class="banner notice">')
    assert cached_and_fresh(site) == 0
    assert 'class="banner notice"' in page(site, "first")


def test_a_config_value_in_extra_renders_every_page(site):
    edit(site, "mkdocs.yml", "banner: Course notes", "banner: Course notes, second edition")
    assert cached_and_fresh(site) == 0
    assert "Course notes, second edition" in page(site, "first")


def test_a_page_meta_value_renders_every_page(site):
    # Material reads page.meta (here: the page's description), and every nav item's (its icon,
    # its status): a page's front matter feeds every page.
    edit(site, "docs/second.md", "# Second", "---\ndescription: The second page\n---\n# Second")
    assert cached_and_fresh(site) == 0
    assert 'content="The second page"' in page(site, "second")


def test_what_runs_after_the_render_runs_on_the_reused_html(site):
    assert cached_and_fresh(site, PAGE_STAMP="first") == PAGES
    assert cached_and_fresh(site, PAGE_STAMP="second") == PAGES
    assert "<!-- stamped second -->" in page(site, "first")


def test_the_key_refuses_what_it_cannot_describe_and_leaves_out_the_build_clock(tmp_path):
    describe = Describer(tmp_path)
    assert describe(str(tmp_path / "docs" / "a.md")) == "<project>/docs/a.md"  # any checkout
    clock = {"build_date_utc": "2026-12-06T01:02:03", "banner": "Notes"}
    assert describe(clock) == {"build_date_utc": "<read by no template>", "banner": "Notes"}
    describe.named.add("build_date_utc")  # a template that shows the clock: in the key
    assert describe(clock) == clock

    class Opaque:
        __slots__ = ()

    with pytest.raises(Undescribable):  # no state to read: its page renders every build
        describe({"value": Opaque()})
    loop: list = []
    loop.append(loop)
    with pytest.raises(Undescribable):
        describe(loop)


class _Config(dict):
    """A config as templates see it (a mapping), with the theme MkDocs' config has."""

    theme = None


class _File:
    src_uri, dest_uri, url = "page.md", "page/index.html", "page/"


class _Page:
    title, url, active, is_index, is_homepage, ancestors = "Page", "page/", True, False, False, []

    def __init__(self, content: str) -> None:
        self.file, self.meta, self.content = _File(), {}, content


def test_a_render_that_logged_a_warning_is_rendered_again_not_reused(tmp_path):
    def warn(text: str) -> str:
        logging.getLogger("mkdocs.test").warning("a template warned")
        return text

    environment = Environment()
    environment.globals["warn"] = warn
    template = environment.from_string(
        "{{ warn(page.content) if page.meta.warn else page.content }}"
    )
    for turn, meta in enumerate(({}, {}, {"warn": True}, {"warn": True})):
        renders = PageRenders(tmp_path, Cache("pages", FileStore(tmp_path / "store")))
        page = _Page("Some prose.")
        page.meta = meta
        assert renders.render(template, "main.html", {"page": page, "config": _Config()}) == (
            "Some prose."
        )
        # The plain page is kept, then reused; the one that warned is rendered each time.
        assert (renders.reused, len(renders.warned)) == [(0, 0), (1, 0), (0, 1), (0, 1)][turn]


@pytest.mark.parametrize("kept", ["in the process (serve)", "in the store (build)"])
def test_a_template_is_compiled_once_and_again_when_edited_or_compiled_otherwise(tmp_path, kept):
    """MkDocs makes a new Jinja environment for every build and serve rebuild; the compiled
    templates are kept by the template's source and the settings the compiler reads
    (``serve_templates``): in the process under serve, in the store for builds (each build a
    cache of its own over the same store, as each ``mkdocs build`` process is)."""
    import jinja2

    from build_support import serve_templates

    (tmp_path / "templates").mkdir()
    template = tmp_path / "templates" / "page.html"
    template.write_text("{{ word | upper }}")
    compiled = []

    class Counting(jinja2.Environment):
        def _compile(self, source, filename):
            compiled.append(filename)
            return super()._compile(source, filename)

    in_process = serve_templates.CompiledTemplates()

    def rebuild(**settings) -> str:
        env = Counting(loader=jinja2.FileSystemLoader(tmp_path / "templates"), **settings)
        if kept == "in the store (build)":
            store = Cache("templates", FileStore(tmp_path / "store"))
            env.bytecode_cache = serve_templates.StoredTemplates(store)
        else:
            env.bytecode_cache = in_process
        return env.get_template("page.html").render(word="hi")

    assert rebuild() == "HI" and len(compiled) == 1
    assert rebuild() == "HI" and len(compiled) == 1  # the next build: not compiled again
    template.write_text("{{ word }}!")
    assert rebuild() == "hi!" and len(compiled) == 2  # an edited template is compiled again
    assert rebuild(variable_start_string="[[", variable_end_string="]]") == "{{ word }}!"
    assert len(compiled) == 3  # another syntax: compiled for it
    assert rebuild() == "hi!" and len(compiled) == 3
    assert serve_templates.compile_once(jinja2.Environment()).bytecode_cache is (
        serve_templates.COMPILED
    )
