"""Versioned reading: two versions deployed with mike, opened in headless chromium.

The version ``make publish`` deploys (alias latest) and an older one, deployed after it into
the same throw-away repository's gh-pages branch with the section page's version changed.
On every version the version selector, the install line and the served wheel agree; every
version except latest shows the outdated notice, which links to the same page in latest.
Screenshots of the install box and of the notice, light and dark, go to test-artifacts/.
"""

from __future__ import annotations

import io
import zipfile
from email.parser import Parser
from pathlib import Path
from urllib.parse import urljoin

import pytest
from packaging.version import Version

from testkit.author import extract_branch, publish_as, run_in, section_version
from testkit.browser_pages import SCHEMES, PageReport, open_page
from testkit.project import ARTIFACTS, SECTION_PAGE
from testkit.serving import serve
from testkit.site import INSTALL, site_prefix

OLD_RELEASE = "v2026.01.05.1"  # older than any release this course publishes
OLD_SECTION = "v2026.01.05"  # its one section's version
SECTION_FILE = Path("docs") / f"{SECTION_PAGE}.md"


@pytest.fixture(scope="session")
def two_versions(published_repo: Path, tmp_path_factory) -> Path:
    """The gh-pages tree with OLD_RELEASE deployed beside the published version, by ``make
    publish``, committed as an author commits a release (make publish refuses what is not)."""
    # An older release, its one section at an older version (ARCHITECTURE, "The course model").
    publish_as(published_repo, OLD_RELEASE, published_repo / SECTION_FILE, OLD_SECTION)
    run_in(published_repo, "git", "commit", "-qam", "an older release")
    set_up = ("-o", ".venv/.synced", "-o", "node_modules/.installed")  # the checkout's, shared
    try:
        run_in(published_repo, "make", *set_up, "publish")
    finally:
        run_in(published_repo, "git", "reset", "-q", "--hard", "HEAD~1")
    served = tmp_path_factory.mktemp("two-versions") / "served"
    extract_branch(published_repo, "gh-pages", served / site_prefix())
    return served


@pytest.fixture(scope="session")
def two_versions_url(two_versions: Path) -> str:
    with serve(two_versions) as base:
        yield base + site_prefix()


def wheel_version(wheel: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(archive.read(name).decode())["Version"]


def read_version(browser, base: str, folder: str, scheme: str, shots: str | None = None):
    """Open the section page in ``folder``; what the reader sees of its version."""
    url = f"{base}{folder}/{SECTION_PAGE}/"
    report = PageReport(url=url, scheme=scheme, diagrams_in_html=0)
    page = open_page(browser, scheme, report)
    page.goto(url, wait_until="networkidle")
    selector = page.locator(".md-version__current")
    selector.wait_for(timeout=10_000)  # drawn once versions.json has loaded
    notice = page.locator('[data-md-component="outdated"]')
    if folder == OLD_RELEASE:
        notice.wait_for(state="visible", timeout=10_000)
    command = page.locator("div.install-box pre code").first.inner_text().strip()  # the CPU tab
    seen = {
        "selector": selector.inner_text().strip(),
        "command": command,
        "notice": notice.is_visible(),
        "notice_link": urljoin(url, notice.locator("a").get_attribute("href")),
    }
    assert command.startswith(INSTALL), command
    wheel_name = command.rsplit("/", 1)[1].split("#sha256=")[0]  # the file the line checks
    response = page.request.get(f"{base}{seen['selector']}/{wheel_name}")
    seen["wheel_status"] = response.status
    seen["wheel_version"] = wheel_version(response.body()) if response.ok else None
    if shots:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{shots}-{scheme}.png"
        if folder == OLD_RELEASE:  # the notice with the page's header under it
            box = notice.bounding_box()
            page.screenshot(path=path, clip={**box, "height": box["height"] + 120})
        else:
            page.locator("div.install-box").screenshot(path=path)
    page.context.close()
    seen["errors"] = report.page_errors + report.console_errors + report.other_hosts
    return seen


@pytest.mark.parametrize("scheme", SCHEMES)
def test_only_older_versions_show_the_notice_and_each_version_agrees_with_itself(
    browser, two_versions_url, scheme
):
    current = section_version()
    for folder, version, outdated, shots in [
        (OLD_RELEASE, OLD_RELEASE, True, "outdated-notice"),
        (current, current, False, "install-box"),
        ("latest", current, False, None),
    ]:
        seen = read_version(browser, two_versions_url, folder, scheme, shots)
        assert seen["selector"] == version, (folder, seen)
        assert seen["notice"] == outdated, (folder, seen)
        assert seen["errors"] == [], (folder, seen)
        # The install line names this version's folder and wheel, and the folder serves it.
        assert f"/{version}/" in seen["command"], (folder, seen)
        assert seen["wheel_status"] == 200, (folder, seen)
        assert seen["wheel_version"] == str(Version(version)), (folder, seen)
        if outdated:
            assert seen["notice_link"] == f"{two_versions_url}latest/{SECTION_PAGE}/"


def test_the_notice_takes_the_reader_to_the_same_page_in_latest(browser, two_versions_url):
    page = open_page(browser, "light")
    page.goto(f"{two_versions_url}{OLD_RELEASE}/glossary/", wait_until="networkidle")
    notice = page.locator('[data-md-component="outdated"] a')
    notice.wait_for(state="visible", timeout=10_000)
    notice.click()
    page.wait_for_url(f"{two_versions_url}latest/glossary/")
    assert page.locator("h1").first.inner_text().startswith("Glossary")
    assert not page.locator('[data-md-component="outdated"]').is_visible()
    page.context.close()


def test_the_old_version_serves_its_own_wheel(two_versions):
    root = two_versions / site_prefix()
    old = sorted(path.name for path in (root / OLD_RELEASE).glob("*.whl"))
    current = sorted(path.name for path in (root / section_version()).glob("*.whl"))
    assert len(old) == len(current) == 1
    assert old != current
    assert f"-{Version(OLD_RELEASE)}-" in old[0]
