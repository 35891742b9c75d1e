"""Open in Colab (hooks/colab.py): where ``repo_url`` names a GitHub repository, the notebook
page and the section page's install box link to Colab's GitHub route for the ``.ipynb`` that
mike deployed for this version on gh-pages; elsewhere no link, and one INFO line says why.

The deploy test runs ``make publish`` in a throw-away repository whose ``mkdocs.yml`` names a
GitHub ``repo_url``, and follows every Colab link into that repository's gh-pages branch."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from bs4 import BeautifulSoup

from build_support import section
from testkit.author import extract_branch, publish_copy, section_version
from testkit.hooks import load_hook
from testkit.project import SECTION_PAGE
from testkit.site import page

colab = load_hook("colab")

REPOSITORY = "course-owner/course-repo"
COLAB = "https://colab.research.google.com/github/"
# The course's own links: to a notebook the site deployed to its gh-pages branch
COURSE_LINK = re.compile(r"colab\.research\.google\.com/github/[^\s\"']+/blob/gh-pages/")
NOTEBOOK = "notebooks/p5-9-1-practice-in-jax"  # the manuscript's notebook


def test_only_a_github_repo_url_names_a_repository():
    assert colab.github_repository("https://github.com/o/r") == "o/r"
    assert colab.github_repository("https://github.com/o/r.git") == "o/r"
    assert colab.github_repository("https://github.com/o-1/r.name/") == "o-1/r.name"
    for elsewhere in (None, "", "https://gitlab.com/o/r", "https://github.com/o", "file:///r"):
        assert colab.github_repository(elsewhere) is None, elsewhere


def test_the_link_goes_at_the_end_of_the_install_box_and_nowhere_else():
    markdown = '# T\n\n!!! tip install-box "Box"\n    One.\n\n    Two.\n\nAfter the box.\n'
    added = colab.with_box_links(markdown, ["[Colab](u)"])
    assert added == (
        '# T\n\n!!! tip install-box "Box"\n    One.\n\n    Two.\n\n    [Colab](u)\n\n'
        "After the box.\n"
    )
    assert colab.with_box_links("# No box\n", ["x"]) == "# No box\n"


def test_without_repo_url_no_link_is_shown_and_the_build_says_why_once(built_site, build_log):
    why = [line for line in build_log.splitlines() if "colab: no 'Open in Colab' links" in line]
    assert len(why) == 1, why
    assert why[0].startswith("INFO") and "repo_url in mkdocs.yml is not set" in why[0]
    for html in built_site.rglob("*.html"):
        # A notebook's own text may link to Colab (JAX's tutorials' badges): not the course's
        assert COURSE_LINK.search(html.read_text()) is None, html


def with_github_repo_url(config: str) -> str:
    assert "\nrepo_url:" not in config
    return config.replace("\nsite_url:", f"\nrepo_url: https://github.com/{REPOSITORY}\nsite_url:")


@pytest.fixture(scope="module")
def deployed(tmp_path_factory) -> Path:
    """The gh-pages tree that ``make publish`` deployed this version to, with repo_url set, in
    a throw-away repository (mike's ``latest`` alias is a symbolic link there)."""
    workdir = tmp_path_factory.mktemp("colab")
    repo = publish_copy(workdir, with_github_repo_url)
    extract_branch(repo, "gh-pages", workdir / "gh-pages")
    return workdir / "gh-pages"


def colab_links(tree: Path, page_path: str) -> list[str]:
    html = (tree / page_path / "index.html").read_text()
    return [
        a["href"]
        for a in BeautifulSoup(html, "html.parser").select("a[href]")
        if a["href"].startswith(COLAB) and COURSE_LINK.search(a["href"])
    ]


def notebook_pages() -> dict[str, list[str]]:
    """Each section page's name, with its notebooks' pages (``notebooks/x``), as the course model
    reads them from the project: every notebook's link goes in its own section's box."""
    return {
        one.name: [page.rsplit(".", 1)[0] for page in section.notebooks_of(one)]
        for one in section.sections()
    }


def has_set_up_cell(notebook: str) -> bool:
    """The notebook (``notebooks/x``) installs the course's package in its first cell."""
    sources = sorted((section.ROOT / "docs").glob(f"{notebook}.*"))
    return any("{{ install.requirement }}" in path.read_text(encoding="utf-8") for path in sources)


def test_every_colab_link_opens_an_ipynb_that_mike_deployed_for_this_version(deployed):
    version = section_version()
    wheel = re.sub(r"[-_.]+", "_", section.distribution_name())
    pages = notebook_pages()
    assert any(pages.values()), pages  # a notebook to link to
    for section_page, notebooks in pages.items():
        for name in (section_page, *notebooks):
            wanted = notebooks if name == section_page else [name]
            for folder in (version, "latest"):
                links = colab_links(deployed, f"{folder}/{name}/")
                # Its own notebooks, one link each; a section's page: no other section's.
                assert len(links) == len(wanted), (folder, name, links)
                for link, notebook in zip(links, wanted, strict=True):
                    route = urlsplit(link).path.removeprefix("/github/")
                    owner_repo, _, rest = route.partition("/blob/gh-pages/")
                    assert owner_repo == REPOSITORY, link
                    # Release-exact: the latest alias links to the release's own folder.
                    ipynb = f"{version}/{notebook}/{notebook.rsplit('/', 1)[1]}.ipynb"
                    assert rest == ipynb, link
                    deployed_notebook = deployed / rest
                    assert deployed_notebook.is_file() and not deployed_notebook.is_symlink()
                    notebook_json = nbformat.read(deployed_notebook, as_version=4)
                    first_code = next(
                        cell.source for cell in notebook_json.cells if cell.cell_type == "code"
                    )
                    if not has_set_up_cell(notebook):  # an author's tutorial, as they wrote it
                        continue
                    hashed = rf'"https://\S+/{version}/{wheel}-\S+\.whl#sha256=[0-9a-f]{{64}}"'
                    assert re.search(hashed, first_code), first_code


def test_each_section_pages_link_sits_in_its_install_box(deployed):
    for section_page, notebooks in notebook_pages().items():
        html = (deployed / section_version() / section_page / "index.html").read_text()
        box = BeautifulSoup(html, "html.parser").select_one("div.install-box")
        links = [a["href"] for a in box.select("a[href]") if a["href"].startswith(COLAB)]
        assert len(links) == len(notebooks), (section_page, links)


def test_the_notebook_page_shows_the_link_beside_its_downloads(deployed, built_site):
    html = (deployed / section_version() / NOTEBOOK / "index.html").read_text()
    soup = BeautifulSoup(html, "html.parser")
    download = soup.select_one("p.notebook-download")
    link = download.find_next_sibling("p")
    assert "colab-link" in link["class"] and link.a["href"].startswith(COLAB)
    assert page(built_site, NOTEBOOK).select_one("p.colab-link") is None  # repo_url unset


def test_the_repository_link_fetches_nothing_from_github(deployed):
    """repo_url also puts the repository in Material's header; its source component would
    fetch stars and forks from api.github.com (overrides/partials/source.html drops it)."""
    html = (deployed / section_version() / SECTION_PAGE / "index.html").read_text()
    soup = BeautifulSoup(html, "html.parser")
    assert soup.select("a.md-source[href='https://github.com/" + REPOSITORY + "']")
    assert soup.select('[data-md-component="source"]') == []
