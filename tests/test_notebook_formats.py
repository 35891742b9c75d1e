"""Notebooks as the ecosystem writes them become pages as their authors meant them
(build_support/notebooks/formats.py, jupyter_book.py, myst.py): MyST Markdown and
``.ipynb`` notebooks execute at build, with the same cache and errors as jupytext's; their cell
tags act as Jupyter Book acts on them; their MyST becomes what it means, never literal braces;
no prompt column. Two of JAX's own tutorials (tests/data/jax/, Apache-2.0, see its README) run
as their authors wrote them, beside a small notebook of every tag and directive
(tests/data/notebooks/).

The builds are of a small site that loads the project's execution hook (``testkit.small_site``),
as in test_notebook_limits.py: what is tested is the hook, not the course's pages.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from build_support.notebooks import myst
from testkit.build import mkdocs_build
from testkit.small_site import hook, site_config

DATA = Path(__file__).parent / "data"
JAX = ("automatic-vectorization", "jit-compilation")
JAX_PAGE = "notebooks/jit-compilation.md"
NOTEBOOKS = [f"notebooks/{name}.md" for name in (*JAX, "tags-and-myst")] + [
    "notebooks/tags-as-ipynb.ipynb",
    "notebooks/tags-as-py.py",
    "notebooks/stored.ipynb",
]
# A jupytext .py written as the course's own notebooks are: its set-up cell installs the package
COURSE_STYLE = "notebooks/course-style.py"
COURSE_STYLE_TEXT = """\
# %% [markdown]
# # Course style

# %%
PACKAGE = "{{ install.requirement }}"
print("COURSE-STYLE-MARK", 6 * 7)
"""
# Left of MyST as literal text: a role, a directive's fence, a target line
LITERAL_MYST = re.compile(r"\{[a-z][\w:-]*\}`|```\{|:::\{|^\([\w-]+\)=\s*$", re.MULTILINE)


def site(root: Path, nav: list[str], extra_files: dict[str, str] | None = None) -> Path:
    """A small site whose nav lists ``nav`` (the home page first)."""
    docs = root / "docs" / "notebooks"
    docs.mkdir(parents=True, exist_ok=True)
    (root / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    for name, text in (extra_files or {}).items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text, encoding="utf-8")
    config = site_config("notebook formats", hooks=(hook("execution"), hook("notebook_download")))
    nav_lines = "".join(f"  - {entry}\n" for entry in ["index.md", *nav])
    config = config.replace("hooks:\n", f"nav:\n{nav_lines}hooks:\n", 1)
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    return root / "mkdocs.yml"


def stored_notebook() -> str:
    """An ``.ipynb`` shown with its stored outputs: its code would print something else."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "mystnb": {"execution_mode": "off"},
    }
    cell = nbformat.v4.new_code_cell('print("FRESH-RUN-MARK")')
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="STORED-OUTPUT-MARK\n")]
    collapsed = nbformat.v4.new_code_cell('print("COLLAPSED-IN-JUPYTERLAB")')
    collapsed.metadata = {"jupyter": {"source_hidden": True}}
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Stored outputs\n\n{func}`print`"),
        cell,
        collapsed,
    ]
    return nbformat.writes(notebook)


def article(site_dir: Path, src_uri: str) -> str:
    page = site_dir / src_uri.rsplit(".", 1)[0] / "index.html"
    text = page.read_text(encoding="utf-8")
    return text[text.index("<article") : text.index("</article>")]


def visible_text(fragment: str) -> str:
    """The text a reader sees: tags and comments gone, entities read."""
    fragment = re.sub(r"<!--.*?-->", "", fragment, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One site with every format, built fresh, from the cache, and fresh again."""
    root = tmp_path_factory.mktemp("formats")
    config = site(root, [*NOTEBOOKS, COURSE_STYLE])
    notebooks = root / "docs" / "notebooks"
    for name in JAX:
        shutil.copy(DATA / "jax" / f"{name}.md", notebooks)
    shutil.copy(DATA / "notebooks" / "tags-and-myst.md", notebooks)
    import jupytext  # as an author converts one: jupytext --to ipynb

    converted = jupytext.read(notebooks / "tags-and-myst.md")
    jupytext.write(converted, notebooks / "tags-as-ipynb.ipynb", fmt="ipynb")
    jupytext.write(converted, notebooks / "tags-as-py.py", fmt="py:percent")  # --to py:percent
    (root / "docs" / COURSE_STYLE).write_text(COURSE_STYLE_TEXT, encoding="utf-8")
    # The .ipynb Jupyter writes beside a paired jupytext .py: not a notebook of its own
    pair = jupytext.reads(COURSE_STYLE_TEXT, fmt="py:percent")
    jupytext.write(pair, notebooks / "course-style.ipynb", fmt="ipynb")
    (notebooks / "stored.ipynb").write_text(stored_notebook(), encoding="utf-8")
    # Fresh, then cached from that run's store; then fresh again, from an empty store: the
    # cached build must equal a fresh one that ran every cell again (make check-cache's claim).
    cache = root / "cache"
    fresh = mkdocs_build(config, root / "fresh", cache_dir=cache, timeout=240)
    assert fresh.returncode == 0, fresh.stderr[-4000:]
    cached = mkdocs_build(config, root / "cached", fresh=False, cache_dir=cache, timeout=240)
    assert cached.returncode == 0, cached.stderr[-4000:]
    again = mkdocs_build(config, root / "again", cache_dir=root / "cache-again", timeout=240)
    assert again.returncode == 0, again.stderr[-4000:]
    return root, fresh, cached


def test_notebooks_of_every_format_become_pages_as_their_authors_meant_them(built):
    """One test of the one site (pytest-xdist would otherwise build it once per process)."""
    check_every_format_executes_and_a_cached_build_equals_the_fresh_one(built)
    for uri in (
        "notebooks/tags-and-myst.md",
        "notebooks/tags-as-ipynb.ipynb",
        "notebooks/tags-as-py.py",
    ):
        check_cell_tags_act_as_jupyter_book_acts_on_them(built, uri)
    check_a_py_converted_reads_as_its_ipynb_and_the_course_style_keeps_its_page(built)
    for uri in NOTEBOOKS:
        check_no_literal_myst_no_prompts_and_every_anchor_on_the_page(built, uri)
    check_myst_roles_directives_and_targets_become_what_they_mean(built)
    check_a_reference_to_nothing_on_the_site_is_said_at_build_time(built)
    check_the_download_line_says_what_is_true_of_each_notebook(built)


def check_every_format_executes_and_a_cached_build_equals_the_fresh_one(built):
    root, fresh, cached = built
    executed = [uri for uri in NOTEBOOKS if uri != "notebooks/stored.ipynb"]
    for uri in executed:
        assert re.search(rf"Executed {re.escape(uri)} {re.escape(uri)}: ran", fresh.stderr)
        assert re.search(rf"Executed {re.escape(uri)} {re.escape(uri)}: reused", cached.stderr)
    vectorization = visible_text(article(root / "fresh", "notebooks/automatic-vectorization.md"))
    assert "Array([11., 20., 29.], dtype=float32)" in vectorization  # convolve(x, w), computed
    jit = visible_text(article(root / "fresh", "notebooks/jit-compilation.md"))
    assert "TracerBoolConversionError" in jit  # a raises-exception cell's error, shown
    assert "\n30\n" in jit  # and the cells after it ran: print(g_jit_correct(10, 20))
    for uri in NOTEBOOKS:
        assert article(root / "again", uri) == article(root / "cached", uri), uri
    # Where each ran, as a block's label says it: the build's own words where the notebook
    # printed none (JAX's kernel on JAX's backend; the tags notebook, without jax, on NumPy)
    assert '<p class="run-label">computed on cpu · ' in article(root / "fresh", JAX_PAGE)
    assert re.search(
        r"Executed notebooks/jit-compilation.md .* computed on \w+ · \d+ device", fresh.stderr
    )
    tags = article(root / "fresh", "notebooks/tags-and-myst.md")
    assert '<p class="run-label">computed on cpu · numpy ' in tags
    stored = visible_text(article(root / "fresh", "notebooks/stored.ipynb"))
    assert "STORED-OUTPUT-MARK" in stored and "FRESH-RUN-MARK\n" not in stored
    folded = re.findall(
        r"<details[^>]*>(.*?)</details>",
        article(root / "fresh", "notebooks/stored.ipynb"),
        re.DOTALL,
    )
    assert any("COLLAPSED-IN-JUPYTERLAB" in part for part in folded)  # JupyterLab's own fold
    assert "Executed notebooks/stored.ipynb notebooks/stored.ipynb: reused" in fresh.stderr
    assert "not run: its stored outputs" in fresh.stderr


def check_a_py_converted_reads_as_its_ipynb_and_the_course_style_keeps_its_page(built):
    """A tutorial converted with ``jupytext --to py:percent`` is the page its ``.ipynb`` is (but
    for its downloads); a ``.py`` with the course's set-up cell keeps mkdocs-jupyter's page."""
    root, fresh, _ = built

    def body(uri):
        return re.sub(r'<p class="notebook-download">.*?</p>', "", article(root / "fresh", uri))

    assert body("notebooks/tags-as-py.py") == body("notebooks/tags-as-ipynb.ipynb")
    assert '<a href="tags-as-py.py" download>jupytext source</a>' in article(
        root / "fresh", "notebooks/tags-as-py.py"
    )
    course = article(root / "fresh", COURSE_STYLE)
    assert "jp-InputPrompt" in course and "COURSE-STYLE-MARK 42" in visible_text(course)
    assert '<p class="run-label">' not in course  # no label of the build's: as P5-9.1's page
    assert "Executed notebooks/course-style.ipynb" not in fresh.stderr  # its pair: left out
    assert not (root / "fresh" / "notebooks" / "course-style.ipynb").exists()


def check_cell_tags_act_as_jupyter_book_acts_on_them(built, uri):
    root, _, _ = built
    page = article(root / "fresh", uri)
    text = visible_text(page)
    assert "REMOVED-CELL-MARK" not in page
    assert "OUTPUT-OF-REMOVED-INPUT" in text and "REMOVED-INPUT-MARK" not in text
    assert "SHOWN-INPUT-MARK" in text and "REMOVED-OUTPUT-MARK\n" not in text
    folded = re.findall(r"<details[^>]*>(.*?)</details>", page, re.DOTALL)
    assert any("HIDDEN-INPUT-MARK" in visible_text(part) for part in folded)
    assert "OUTPUT-OF-HIDDEN-INPUT" in text
    assert not any("OUTPUT-OF-HIDDEN-INPUT\n" in visible_text(part) for part in folded)
    assert any("HIDDEN-OUTPUT-MARK\n" in visible_text(part) for part in folded)
    assert "ValueError: EXPECTED-ERROR-MARK" in text  # expected, shown
    assert "SKIPPED-CELL-RAN" in text and "SKIPPED-CELL-RAN 42" not in text  # shown, not run
    assert "SKIPPED-CELL-RAN\n" not in text.replace('print("SKIPPED-CELL-RAN")', "")
    assert "RAN-AFTER-THE-ERROR 42" in text  # the run went on past the expected error
    assert "\x1b[" not in page and "ipykernel_" not in page
    assert "_course" not in page  # the build's own cell (where it ran) is never shown


def check_no_literal_myst_no_prompts_and_every_anchor_on_the_page(built, uri):
    root, _, _ = built
    page = article(root / "fresh", uri)
    text = visible_text(page)
    assert not LITERAL_MYST.search(text), LITERAL_MYST.search(text)
    assert not re.search(r"\b(?:In|Out)\s*\[\d*\]:", text)
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for target in re.findall(r'href="#([^"]+)"', page):
        assert target in ids, target
    toc = re.findall(
        r'href="#([^"]+)" class="md-nav__link"',
        (root / "fresh").joinpath(uri.rsplit(".", 1)[0], "index.html").read_text(encoding="utf-8"),
    )
    assert all(target in ids for target in toc)
    assert bool(toc) == ("<h2" in page)  # the table of contents lists the page's sections


def check_myst_roles_directives_and_targets_become_what_they_mean(built):
    root, _, _ = built
    page = article(root / "fresh", "notebooks/tags-and-myst.md")
    assert '<div class="admonition note">' in page and "A note with <strong>bold</strong>" in page
    assert '<div class="admonition warning">' in page
    assert re.search(
        r'<div class="admonition tip">\s*<p class="admonition-title">Custom title', page
    )
    assert re.search(r'<details class="tip"><summary>Tip</summary>\s*<p>Folded tip.', page)
    assert 'id="tags-and-myst"' in page
    assert '<a href="../jit-compilation/#jit-compilation">Just-in-time compilation</a>' in page
    assert '<a href="../automatic-vectorization/#automatic-vectorization">the vectorization' in page
    assert re.search(r'<a href="../jit-compilation/">[^<]+</a>', page)  # {doc}
    text = visible_text(page)
    assert "a page not on the site" in text and "missing-page" not in page  # its text, no link
    assert "nowhere-label" in text and 'href="#nowhere-label"' not in page
    assert "<code>dot()</code>" in page and "<code>x + 1</code>" in page
    assert "<math" in page and '<annotation encoding="application/x-tex">a^2</annotation>' in page
    assert "tracer" in text
    assert '<a href="#tags-and-myst">a label as a link</a>' in page
    # A badge on another host: its text, linked; nothing the browser would fetch from there
    assert re.search(
        r'<a href="https://colab\.research\.google\.com/[^"]+">Open In Colab</a>', page
    )
    assert "colab-badge.svg" not in page
    ids = re.findall(r'<h2 id="([^"]+)"', page)
    assert ids == ["cells", "cells_1"]  # two headings of one name, two ids
    # A label ending one cell: a {ref} to it shows the heading opening the next, as Sphinx does
    assert '<a href="#across-cells">A heading in the next cell</a>' in page


def check_a_reference_to_nothing_on_the_site_is_said_at_build_time(built):
    """Shown as Sphinx shows it (its title, else its target, as text: never braces), and said
    in one line naming the notebook and the cell, in every format and whether or not the run
    was reused; not a failure (JAX's tutorials name JAX's other pages)."""
    _, fresh, cached = built
    for uri in ("notebooks/tags-and-myst.md", "notebooks/tags-as-ipynb.ipynb"):
        for log in (fresh.stderr, cached.stderr):
            lines = [
                re.sub(r"^INFO\s+-\s+", "", line)
                for line in log.splitlines()
                if f"notebook {uri}: cell " in line and line.startswith("INFO")
            ]
            assert sorted(lines) == [
                f"notebook {uri}: cell 1: {{doc}}`a page not on the site <missing-page>` names "
                "no page of the site: shown as the text 'a page not on the site'",
                f"notebook {uri}: cell 1: {{ref}}`nowhere-label` names no label of the site: "
                "shown as the text 'nowhere-label'",
            ]  # the references that resolve (a label across cells too) are not named


def check_the_download_line_says_what_is_true_of_each_notebook(built):
    root, _, _ = built
    page = article(root / "fresh", "notebooks/tags-and-myst.md")
    assert "Download this notebook (tags-and-myst.ipynb)" in page
    assert "installs this version's package" not in page  # it has no set-up cell
    assert '<a href="tags-and-myst.md" download>MyST source</a>' in page
    folder = root / "fresh" / "notebooks"
    assert (folder / "tags-and-myst" / "tags-and-myst.md").is_file()
    downloaded = json.loads((folder / "tags-and-myst" / "tags-and-myst.ipynb").read_text())
    assert downloaded["cells"][0]["cell_type"] == "markdown"
    stored = json.loads((folder / "stored" / "stored.ipynb").read_text())
    assert "".join(stored["cells"][1]["outputs"][0]["text"]) == "STORED-OUTPUT-MARK\n"


def build_one(root: Path, name: str, text: str, nav: str | None = None):
    config = site(root, [nav or f"notebooks/{name}"], {f"notebooks/{name}": text})
    return mkdocs_build(config, root / "site", cache_dir=root / "cache", timeout=120)


MYST_HEAD = (
    "---\njupytext:\n  text_representation:\n    format_name: myst\n"
    "kernelspec:\n  name: python3\n  display_name: Python 3\n  language: {language}\n---\n\n"
)


def test_an_unexpected_error_fails_the_build_naming_notebook_and_cell(tmp_path):
    text = MYST_HEAD.format(language="python") + (
        "# Broken\n\n```{code-cell}\nx = 1\n```\n\nText.\n\n"
        "```{code-cell}\n:tags: [hide-input]\nraise KeyError('unexpected')\n```\n"
    )
    result = build_one(tmp_path, "broken.md", text)
    assert result.returncode == 1
    assert (
        "notebook notebooks/broken.md failed to execute: notebooks/broken.md:19: cell 4 "
        "(raise KeyError('unexpected')) failed:" in result.stderr
    )
    assert "KeyError: 'unexpected'" in result.stderr and "\x1b[" not in result.stderr


def test_an_output_loading_from_another_host_fails_the_build_naming_the_cell(tmp_path):
    text = MYST_HEAD.format(language="python") + (
        "# Plot\n\n```{code-cell}\nfrom IPython.display import HTML\n"
        "HTML('<script src=\"https://cdn.example.com/plot.js\"></script>')\n```\n"
    )
    result = build_one(tmp_path, "plot.md", text)
    assert result.returncode == 1
    assert (
        "notebook notebooks/plot.md: cell 2: its output loads "
        "<script src=https://cdn.example.com/plot.js> from another host" in result.stderr
    )


def test_a_notebook_may_set_its_own_cell_time_limit_and_is_held_to_it(tmp_path):
    head = MYST_HEAD.format(language="python").replace(
        "---\n\n", "mystnb:\n  execution_timeout: 1\n---\n\n"
    )
    text = head + "# Slow\n\n```{code-cell}\nimport time\ntime.sleep(5)\n```\n"
    result = build_one(tmp_path, "slow.md", text)
    assert result.returncode == 1
    assert "notebooks/slow.md:15: cell 2 (import time) did not finish within 1 s" in result.stderr


def test_a_notebook_in_another_language_fails_the_build_naming_it(tmp_path):
    text = MYST_HEAD.format(language="R") + "# R\n\n```{code-cell}\n1 + 1\n```\n"
    result = build_one(tmp_path, "other.md", text)
    assert result.returncode == 1
    assert "notebook notebooks/other.md: its kernel's language is R" in result.stderr


def test_a_nav_entry_the_build_cannot_render_fails_naming_the_file(tmp_path):
    (tmp_path / "docs" / "snippets").mkdir(parents=True)
    (tmp_path / "docs" / "snippets" / "helper.py").write_text("print('a helper')\n")
    result = build_one(tmp_path, "one.md", "# One\n", nav="Helper: snippets/helper.py")
    assert result.returncode == 1
    assert "nav entry 'Helper' names snippets/helper.py, which the build cannot render" in (
        result.stderr
    )


def test_a_markdown_page_with_front_matter_but_no_kernelspec_stays_a_page(tmp_path):
    page = "---\ntitle: Plain\n---\n\n# Plain page\n\nIt says {func}`kept` as Markdown does.\n"
    result = build_one(tmp_path, "plain.md", page)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Executed notebooks/plain.md" not in result.stderr
    assert "{func}" in (tmp_path / "site" / "notebooks" / "plain" / "index.html").read_text()


# ---------------------------------------------------------------- the MyST renderer alone


def test_the_renderer_leaves_no_role_or_directive_as_text_and_keeps_code_spans():
    resolver = myst.Resolver()
    rendered = myst.render(
        "Use {class}`jax.Array`, {py:meth}`~a.b.c`, {sub}`2`, {abbr}`JIT (just in time)`.\n\n"
        "```{seealso}\nThe {mod}`jax.random` module.\n```\n\n"
        "```{toctree}\nother\n```\n\n"
        "```{code-block} bash\necho `{func}` stays\n```\n\n"
        "Literal `` {func}`x` `` in code.\n",
        resolver,
    )
    assert "<code>jax.Array</code>" in rendered and "<code>c()</code>" in rendered
    assert "<sub>2</sub>" in rendered and '<abbr title="just in time">JIT</abbr>' in rendered
    assert '<div class="admonition info">' in rendered and "See also" in rendered
    assert "toctree" not in rendered and "other" not in rendered
    assert "{func}" in rendered  # inside code, as the author wrote it
    assert not LITERAL_MYST.search(re.sub(r"<code>.*?</code>", "", rendered, flags=re.DOTALL))


def test_the_colab_line_claims_an_install_only_where_the_notebook_has_the_set_up_cell(tmp_path):
    """hooks/colab.py: the section page's line says the notebook's first cell installs the
    package only for a notebook with the course's set-up cell, not for an author's tutorial."""
    from mkdocs.structure.files import File
    from mkdocs_jupyter.plugin import NotebookFile

    from build_support import section
    from testkit.hooks import load_hook

    colab = load_hook("colab")
    docs = tmp_path / "docs"
    (docs / "notebooks").mkdir(parents=True)
    (docs / "notebooks" / "p5-9-1-own.py").write_text('# %%\nP = "{{ install.requirement }}"\n')
    (docs / "notebooks" / "p5-9-1-tutorial.md").write_text("# A tutorial\n")
    files = [
        NotebookFile(File(uri, str(docs), str(tmp_path / "site"), True), True, str(tmp_path))
        for uri in ("notebooks/p5-9-1-own.py", "notebooks/p5-9-1-tutorial.md")
    ]
    colab._state = colab.ColabLinks("o/r", "v1", section.sections())
    colab.on_files(files, None)
    owner = section.section_of("notebooks/p5-9-1-own.py")
    box = '!!! tip install-box "Install"\n    pip install it\n'

    class Page:
        class file:
            src_uri = owner.page

    lines = colab.on_page_markdown(box, Page, None, None).splitlines()
    own = next(line for line in lines if "p5-9-1-own.ipynb" in line)
    tutorial = next(line for line in lines if "p5-9-1-tutorial.ipynb" in line)
    assert own.endswith("its first cell installs this version's package there, with the GPU line.")
    assert tutorial.endswith("and run it.") and "installs" not in tutorial


def test_a_warning_printed_names_no_kernel_path():
    """A warning's line names the cell's code file, in a folder named after the kernel's
    process: a fresh run's differs, so it is said as an error's traceback says it."""
    import nbformat

    from build_support.notebooks.kernels import steady_errors

    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("jnp.array(1.0, dtype=jnp.float64)")
    warning = "/tmp/ipykernel_781/1258726447.py:1: UserWarning: Explicitly requested dtype\n"
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=warning)]
    notebook.cells = [cell]
    steady_errors(notebook)
    assert cell.outputs[0]["text"] == "<cell>:1: UserWarning: Explicitly requested dtype\n"


def test_an_authors_ipynb_is_kept_by_git_and_only_the_course_notebooks_pair_is_not():
    """An author's ``.ipynb`` under ``docs/notebooks/`` is a notebook, committed as any page
    (a fresh clone builds it); the pair Jupyter writes beside P5-9.1's ``.py`` is ignored."""
    import subprocess

    root = Path(__file__).resolve().parents[1]

    def ignored(path: str) -> bool:
        check = ["git", "-C", str(root), "check-ignore", "-q", "--no-index", path]
        return subprocess.run(check, check=False).returncode == 0

    assert not ignored("docs/notebooks/p5-9-2-common-gotchas-in-jax.ipynb")
    assert ignored("docs/notebooks/p5-9-1-practice-in-jax.ipynb")


def test_the_projects_lint_reads_a_py_notebook_not_an_authors_ipynb(tmp_path):
    """``make test``'s ruff lints the project's code, a ``.py`` notebook with it; an ``.ipynb``
    (as a MyST ``.md``) is a tutorial kept as its authors wrote it (JAX's 2-space indent)."""
    import subprocess
    import sys

    import nbformat

    root = Path(__file__).resolve().parents[1]
    shutil.copy(root / "pyproject.toml", tmp_path)
    notebooks = tmp_path / "docs" / "notebooks"
    notebooks.mkdir(parents=True)
    tutorial = nbformat.v4.new_notebook()
    tutorial.cells = [nbformat.v4.new_code_cell("def f(x):\n  return x*2")]
    (notebooks / "tutorial.ipynb").write_text(nbformat.writes(tutorial), encoding="utf-8")
    (notebooks / "course.py").write_text("# %%\nprint('the project code')\n", encoding="utf-8")
    ruff = Path(sys.executable).with_name("ruff")
    listed = subprocess.run(
        [str(ruff), "check", "--no-cache", "--show-files", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "course.py" in listed and "tutorial.ipynb" not in listed
