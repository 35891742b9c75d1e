"""ProperDocs, the maintained fork of MkDocs 1.6, ready to take over: ``make build
BUILDER=properdocs`` builds the site strictly, the section page's content the same as MkDocs'
build of it, and ``make publish`` runs the builder ``BUILDER`` names, although mike would pick
ProperDocs whenever it is installed (``build_support/publishing/mike_builder.py``)."""

from __future__ import annotations

from build_support.publishing import mike_builder
from testkit.author import make_dry_run
from testkit.build import mkdocs_build
from testkit.project import ROOT
from testkit.site import page


def test_properdocs_builds_the_section_page_as_mkdocs_does(built_site, tmp_path):
    site = tmp_path / "site"
    result = mkdocs_build(ROOT / "mkdocs.yml", site, builder="properdocs")
    assert result.returncode == 0, result.stderr[-4000:]
    mkdocs_article, properdocs_article = (page(s).select_one("article") for s in (built_site, site))
    assert properdocs_article is not None
    assert str(properdocs_article).splitlines() == str(mkdocs_article).splitlines()


def test_make_build_and_publish_run_the_builder_chosen():
    assert ".venv/bin/mkdocs build --strict" in make_dry_run("build")
    assert ".venv/bin/properdocs build --strict" in make_dry_run("build", "BUILDER=properdocs")
    assert "mike_builder mkdocs deploy" in make_dry_run("publish")
    assert "mike_builder properdocs deploy" in make_dry_run("publish", "BUILDER=properdocs")


def test_mike_runs_the_builder_chosen_though_properdocs_is_installed():
    from mike import mkdocs_utils

    chosen = mkdocs_utils._program_name, mkdocs_utils._brand, mkdocs_utils._version
    assert chosen[0] == "properdocs"  # mike's own choice, with uv.lock's ProperDocs installed
    try:
        mike_builder.choose("mkdocs")
        assert mkdocs_utils.version_info().startswith("MkDocs 1.6")
        assert mkdocs_utils._program_name == "mkdocs"
    finally:
        mkdocs_utils._program_name, mkdocs_utils._brand, mkdocs_utils._version = chosen
