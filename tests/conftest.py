"""Shared fixtures: one strict build of the site per test session, and the golden output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .helpers import GOLDEN, ROOT, mkdocs_build


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site_dir = tmp_path_factory.mktemp("site")
    result = mkdocs_build(ROOT / "mkdocs.yml", site_dir)
    assert result.returncode == 0, result.stderr
    site_dir.with_name("build.log").write_text(result.stderr)  # read by build_log
    return site_dir


@pytest.fixture(scope="session")
def build_log(built_site: Path) -> str:
    """What the session's strict build printed (mkdocs logs to stderr)."""
    return built_site.with_name("build.log").read_text()


@pytest.fixture(scope="session")
def expected_practice_output() -> str:
    return (GOLDEN / "practice_output.txt").read_text()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian chromium, one for the session: playwright's sync API allows one at a time
    (the browser tests, the print test and the version tests share it)."""
    from playwright.sync_api import sync_playwright

    from .browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def published_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gh-pages tree that `make publish` writes (in a throw-away repository), laid out under
    the site_url's path, as the host serves it: versions.json, the root redirect, the alias."""
    from .browser import extract_branch, publish_copy, site_prefix

    workdir = tmp_path_factory.mktemp("publish")
    repo = publish_copy(workdir)
    served = workdir / "served"
    extract_branch(repo, "gh-pages", served / site_prefix())
    return served


@pytest.fixture(scope="session")
def published_repo(published_site: Path) -> Path:
    """The throw-away repository whose gh-pages branch `published_site` was read from."""
    return published_site.parent / "repo"


@pytest.fixture
def docs_copy(tmp_path: Path) -> Path:
    """A temporary copy of the project's docs, config, hooks and package sources (the build
    serves the wheel it builds from them), for fault-injection builds."""
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("docs", "hooks", "overrides", "examples"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=ignore)
    for name in ("mkdocs.yml", "pyproject.toml", "hatch_build.py", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")  # mermaid, served by the site
    return tmp_path  # mkdocs_build gives its builds an empty store of caches of their own
