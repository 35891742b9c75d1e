"""Shared fixtures: one strict build of the site per test session, and the golden output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testkit.build import copy_project, mkdocs_build
from testkit.project import GOLDEN, ROOT
from testkit.shared import once_per_run


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """One strict fresh build of the checkout for the whole run (``testkit.shared``)."""

    def build(folder: Path) -> None:
        result = mkdocs_build(ROOT / "mkdocs.yml", folder / "site")
        assert result.returncode == 0, result.stderr
        (folder / "build.log").write_text(result.stderr)  # read by build_log

    return once_per_run(tmp_path_factory, worker_id, "built", build) / "site"


@pytest.fixture(scope="session")
def served_site(built_site: Path):
    """The session's build served over HTTP from 127.0.0.1: its base URL, ending in /."""
    from testkit.serving import serve

    with serve(built_site) as base:
        yield base


@pytest.fixture(scope="session")
def build_log(built_site: Path) -> str:
    """What the session's strict build printed (mkdocs logs to stderr)."""
    return built_site.with_name("build.log").read_text()


@pytest.fixture(scope="session")
def expected_practice_output() -> str:
    return (GOLDEN / "practice_output.txt").read_text()


@pytest.fixture(scope="session")
def browser():
    """The headless browser ``build_support.browser`` finds, one for the session: playwright's
    sync API allows one at a time (the browser tests, the print test and the version tests
    share it)."""
    from playwright.sync_api import sync_playwright

    from build_support.browser import launch

    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


@pytest.fixture
def no_browser(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Nowhere ``build_support.browser`` looks holds a browser (no CHROMIUM, an empty PATH, HOME
    and application folders); returns that environment, for a build run in a subprocess."""
    from build_support import browser

    empty = tmp_path_factory.mktemp("no-browser")
    for name in (browser.ENV_VAR, "PLAYWRIGHT_BROWSERS_PATH", "XDG_CACHE_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    for name in ("PATH", "HOME"):
        monkeypatch.setenv(name, str(empty))
    monkeypatch.setattr(browser, "MACOS_APP_FOLDERS", (empty,))
    return dict(os.environ)


@pytest.fixture(scope="session")
def published_site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The gh-pages tree that `make publish` writes (in a throw-away repository), laid out under
    the site_url's path, as the host serves it: versions.json, the root redirect, the alias.
    Made once for the whole run (``testkit.shared``)."""
    from testkit.author import extract_branch, publish_copy
    from testkit.site import site_prefix

    def publish(workdir: Path) -> None:
        repo = publish_copy(workdir)
        extract_branch(repo, "gh-pages", workdir / "served" / site_prefix())

    return once_per_run(tmp_path_factory, worker_id, "publish", publish) / "served"


@pytest.fixture(scope="session")
def published_repo(published_site: Path) -> Path:
    """The throw-away repository whose gh-pages branch `published_site` was read from."""
    return published_site.parent / "repo"


@pytest.fixture
def docs_copy(tmp_path: Path) -> Path:
    """A temporary copy of what a build reads (``testkit.build.copy_project``: the docs, config,
    hooks and package sources; the build serves the wheel it builds from them), for
    fault-injection builds."""
    return copy_project(tmp_path)  # mkdocs_build gives its builds an empty store of caches
