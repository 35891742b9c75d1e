"""`make serve` in headless chromium: every page, light and dark, without a console error.

The development server differs from the published site: no versions.json (mike writes it),
a live-reload script, the site at the server's root. Each page is loaded once per scheme.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from testkit.browser_pages import DRAWN_DIAGRAMS, SCHEMES, PageReport, open_page
from testkit.project import ARTIFACTS, ROOT, SECTION_PAGE
from testkit.serving import answering, fetch_text, free_port
from testkit.site import built_pages

RUNNING = 'class="admonition info notebook-running"'  # notebook_page.RUNNING_NOTICE
SETTLED = "search/search_index.json"  # Material fetches it once the page has started


def fetch(url: str) -> str:
    return fetch_text(url) or RUNNING  # not served yet: as if still running


@pytest.fixture(scope="module")
def dev_server() -> str:
    """`make serve` on a free port, in a process group of its own (make starts mkdocs)."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    log_path = ARTIFACTS / "make-serve.log"
    log = log_path.open("w")  # closed below
    server = subprocess.Popen(
        ["make", "-s", "serve", f"DEV_ADDR=127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240  # the first build runs before it listens
        while not answering(port):
            assert server.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, "make serve did not start answering"
            time.sleep(0.5)
        base = f"http://127.0.0.1:{port}/"
        # A notebook the store does not hold runs on after the first build; its end rebuilds
        # and reloads every page (a visit would lose its page): the site settles first.
        notebooks = (ROOT / "docs" / "notebooks").glob("*")  # every format: .py, .ipynb, MyST .md
        for notebook in sorted(n for n in notebooks if n.suffix in {".py", ".ipynb", ".md"}):
            while RUNNING in fetch(f"{base}notebooks/{notebook.stem}/"):
                assert server.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, f"{notebook.name} still running"
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)  # no process left behind for a later test
            server.wait()
            raise AssertionError(f"make serve did not end: {log_path.read_text()}") from None
        finally:
            log.close()


def visit_served(browser, base: str, path: str, scheme: str) -> PageReport:
    report = PageReport(url=base + path, scheme=scheme, diagrams_in_html=0)
    page = open_page(browser, scheme, report)
    with page.expect_response(lambda response: response.url.endswith(SETTLED), timeout=20_000):
        page.goto(report.url, wait_until="load")  # live reload keeps a request open: no idle
    page.wait_for_timeout(500)  # errors logged just after the search index arrived
    report.node_fills = page.evaluate(DRAWN_DIAGRAMS)
    report.diagrams_drawn = len(report.node_fills)
    page.context.close()
    return report


def test_make_serve_pages_log_no_console_error(browser, dev_server, built_site: Path):
    reports = [
        visit_served(browser, dev_server, path, scheme)
        for path in built_pages(built_site)
        for scheme in SCHEMES
    ]
    found = [
        f"{r.url} ({r.scheme}): {item}"
        for r in reports
        for item in r.console_errors + r.page_errors + r.other_hosts
    ]
    assert found == [], "\n".join(found)
    drawn = {r.scheme: r.node_fills for r in reports if r.url.endswith(f"/{SECTION_PAGE}/")}
    assert len(drawn["light"]) == len(drawn["dark"]) == 1 and drawn["light"] != drawn["dark"]


def test_the_install_line_under_make_serve_points_at_the_wheel_it_serves(dev_server):
    """The dev server has no version folder: the line the author previews must still work."""
    import re
    import urllib.request

    from bs4 import BeautifulSoup

    html = urllib.request.urlopen(f"{dev_server}{SECTION_PAGE}/", timeout=30).read().decode()
    command = BeautifulSoup(html, "html.parser").select_one(".install-box pre code").get_text()
    [url] = re.findall(r"python -m pip install (\S+\.whl)", command)
    assert url.startswith(dev_server), url
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200 and response.read(2) == b"PK", url


def _server(tmp_path: Path, *theme_folders: Path):
    """A dev server as `mkdocs serve` has it when ``on_serve`` runs: docs/ and mkdocs.yml
    watched (and ``theme_folders``, as --watch-theme adds them), not yet started (its socket
    made, to be closed)."""
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.livereload import LiveReloadServer

    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    config = MkDocsConfig(config_file_path=str(tmp_path / "mkdocs.yml"))
    config.load_dict({"site_name": "x", "docs_dir": str(tmp_path / "docs")})
    config.validate()
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    for path in (config.docs_dir, config.config_file_path, *map(str, theme_folders)):
        server.watch(path)
    return server, config


def _polled(server) -> dict[tuple[str, bool], float]:
    """Each watch's folder, whether recursive, and how often it is polled (seconds)."""
    emitters = server.observer.emitters
    return {(one.watch.path, one.watch.is_recursive): one.timeout for one in emitters}


def test_under_serve_the_watched_files_are_polled_every_tenth_of_a_second(tmp_path):
    """MkDocs polls every 0.5 s: on average 0.25 s before a rebuild starts. on_serve gives the
    same watches a poll every 0.1 s; with a watch it does not know of, it leaves MkDocs' own."""
    from build_support import serve_staging

    server, config = _server(tmp_path)
    mkdocs_own = _polled(server)
    assert set(mkdocs_own.values()) == {0.5} and len(mkdocs_own) == 2
    serve_staging.poll_often(server, config)
    every = serve_staging.POLL_EVERY_S
    assert every == 0.1
    assert _polled(server) == dict.fromkeys(mkdocs_own, every)  # the same watches
    (tmp_path / "extra").mkdir()
    server.watch(str(tmp_path / "extra"))  # a --watch folder, added after on_serve
    assert set(_polled(server).values()) == {every} and len(_polled(server)) == 3
    server.server_close()

    theme = tmp_path / "theme"
    theme.mkdir()
    server, config = _server(tmp_path / "other", theme)
    before = server.observer
    serve_staging.poll_often(server, config)
    assert server.observer is before and len(before.emitters) == 3
    assert set(_polled(server).values()) == {0.5}
    server.server_close()
