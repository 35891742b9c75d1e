"""build_support.browser: where the project finds a Chrome-family browser, in which order, and
what it says where there is none, and how ``make test`` installs playwright's own Chromium into
the user's cache only where none is found (stand-ins for playwright's installer: its download
host is not reached from every machine); a build whose diagrams are all cached needs no
browser; no make target runs a system package manager (that would need root)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from build_support import browser, pythons
from build_support.build_command import build_command
from testkit.author import author_env
from testkit.project import ROOT

FAKE_MAC_APPS = "Applications (system)"  # stands in for /Applications


def stub(folder: Path, name: str, *, executable: bool = True) -> Path:
    """An executable file called ``name`` (nothing runs it: discovery only looks)."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755 if executable else 0o644)
    return path


@pytest.fixture
def machine(tmp_path, monkeypatch) -> SimpleNamespace:
    """An empty machine: PATH folders, a HOME and an /Applications of its own, no browser."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr(browser, "MACOS_APP_FOLDERS", (tmp_path / FAKE_MAC_APPS,))
    return SimpleNamespace(
        root=tmp_path,
        home=home,
        bin1=tmp_path / "bin1",
        bin2=tmp_path / "bin2",
        env={"PATH": f"{tmp_path / 'bin1'}{os.pathsep}{tmp_path / 'bin2'}", "HOME": str(home)},
    )


def test_nothing_found_says_what_to_install_on_each_system(machine):
    with pytest.raises(browser.BrowserNotFound) as raised:
        browser.find(machine.env)
    message = str(raised.value)
    assert message.startswith("no Chrome-family browser found.")
    for expected in (
        "Debian/Ubuntu: sudo apt-get install chromium",
        "Fedora:        sudo dnf install chromium",
        "macOS:         brew install --cask google-chrome",
        "playwright install chromium",
        "set CHROMIUM to a Chrome-family browser's path",
        "chromium, chromium-browser, google-chrome, google-chrome-stable on PATH",
        str(machine.home / "Applications"),
    ):
        assert expected in message
    assert "apt-get update" not in message  # nothing is installed for the author


@pytest.mark.parametrize("name", browser.PATH_NAMES)
def test_each_name_on_path_is_found(machine, name):
    path = stub(machine.bin2, name)
    assert browser.find(machine.env) == browser.Found(path, f"PATH ({name})")


def test_names_are_tried_in_order_before_path_folders(machine):
    # google-chrome sits in the first PATH folder, chromium-browser in the second: the name
    # earlier in the list wins, wherever it is on PATH.
    stub(machine.bin1, "google-chrome")
    second = stub(machine.bin2, "chromium-browser")
    assert browser.find(machine.env).path == second


def test_a_file_that_is_not_executable_is_passed_over(machine):
    stub(machine.bin1, "chromium", executable=False)
    wanted = stub(machine.bin2, "google-chrome-stable")
    assert browser.find(machine.env).path == wanted


def test_chromium_variable_comes_first_as_a_path_or_a_name(machine):
    stub(machine.bin1, "chromium")
    mine = stub(machine.root / "elsewhere", "my-chrome")
    assert browser.find(machine.env | {"CHROMIUM": str(mine)}) == browser.Found(mine, "CHROMIUM")
    on_path = stub(machine.bin2, "another-chrome")
    assert browser.find(machine.env | {"CHROMIUM": "another-chrome"}).path == on_path


def test_chromium_variable_that_finds_nothing_is_an_error_not_a_fallback(machine):
    stub(machine.bin1, "chromium")
    missing = machine.root / "no-such-browser"
    with pytest.raises(browser.BrowserNotFound, match=rf"CHROMIUM={missing} is not an exec"):
        browser.find(machine.env | {"CHROMIUM": str(missing)})


def test_macos_applications_after_path(machine):
    system_app = stub(machine.root / FAKE_MAC_APPS, browser.MACOS_APPS[1])  # Chromium.app
    users_app = stub(machine.home / "Applications", browser.MACOS_APPS[0])  # Google Chrome.app
    assert browser.find(machine.env) == browser.Found(system_app, "macOS applications")
    system_app.unlink()
    assert browser.find(machine.env).path == users_app
    on_path = stub(machine.bin1, "chromium")
    assert browser.find(machine.env).path == on_path


def test_playwrights_own_chromium_last_newest_revision_first(machine):
    folder = machine.root / "pw-browsers"
    stub(folder / "chromium-1200", "chrome-linux/chrome")
    newest = stub(folder / "chromium-1255", "chrome-linux64/chrome")
    stub(folder / "firefox-1572", "firefox/firefox")
    env = machine.env | {"PLAYWRIGHT_BROWSERS_PATH": str(folder)}
    assert browser.find(env) == browser.Found(newest, "playwright (chromium-1255)")
    app = stub(machine.home / "Applications", browser.MACOS_APPS[0])
    assert browser.find(env).path == app  # anything installed by hand comes before it
    app.unlink()
    elsewhere = machine.root / "no-browsers-here"
    with pytest.raises(browser.BrowserNotFound, match=f"playwright's chromium in {elsewhere}"):
        browser.find(machine.env | {"PLAYWRIGHT_BROWSERS_PATH": str(elsewhere)})


@pytest.mark.skipif(sys.platform != "linux", reason="playwright's default folder on Linux")
def test_playwrights_default_folder_is_found_as_playwright_finds_it(machine):
    default = stub(machine.home / ".cache/ms-playwright/chromium-1255", "chrome-linux64/chrome")
    assert browser.find(machine.env).path == default
    cache = machine.root / "xdg-cache"
    elsewhere = stub(cache / "ms-playwright/chromium-1255", "chrome-linux64/chrome")
    assert browser.find(machine.env | {"XDG_CACHE_HOME": str(cache)}).path == elsewhere


def test_launch_uses_the_found_browser_and_the_one_set_of_arguments(machine, monkeypatch):
    path = stub(machine.bin1, "chromium")
    monkeypatch.setattr(os, "environ", machine.env)
    launched = {}
    chromium = SimpleNamespace(launch=lambda **options: launched.update(options) or "browser")
    assert browser.launch(SimpleNamespace(chromium=chromium), timeout=5) == "browser"
    assert launched == {"executable_path": str(path), "args": [*browser.LAUNCH_ARGS], "timeout": 5}


def test_the_command_prints_the_browser_or_what_to_install(machine):
    command = [sys.executable, "-m", "build_support.browser"]
    needed = subprocess.run(
        [*command, "make test needs one"], cwd=ROOT, env=machine.env, capture_output=True, text=True
    )
    assert needed.returncode == 1
    assert needed.stderr.startswith("make test needs one: no Chrome-family browser found.")
    assert "Install one:" in needed.stderr
    path = stub(machine.bin1, "google-chrome")
    found = subprocess.run(command, cwd=ROOT, env=machine.env, capture_output=True, text=True)
    assert found.returncode == 0
    assert found.stdout.strip() == f"{path}  (found by PATH (google-chrome))"


# Stand-ins for `playwright install --no-shell chromium` (browser.INSTALL_COMMAND), run as it
# is: each notes that it ran; one puts a browser where playwright's would go (the user's cache,
# by HOME), one fails as a download does without network, one installs a browser that does not
# start (as playwright's does without the system's libraries).
FAKE_INSTALL = """
import os, pathlib, sys
home = pathlib.Path(os.environ["HOME"])
(home / "install-ran").write_text(" ".join(sys.argv[1:]))
chrome = home / ".cache/ms-playwright/chromium-1255/chrome-linux64/chrome"
if sys.argv[1] == "fails":
    print("Error: getaddrinfo ENOTFOUND cdn.playwright.dev", file=sys.stderr)
    sys.exit(1)
chrome.parent.mkdir(parents=True)
starts = "exit 0" if sys.argv[1] == "works" else "echo no libnss3 >&2; exit 127"
chrome.write_text("#!/bin/sh\\n" + starts)
chrome.chmod(0o755)
"""


def fake_install(monkeypatch, outcome: str) -> None:
    monkeypatch.setattr(browser, "INSTALL_COMMAND", (sys.executable, "-c", FAKE_INSTALL, outcome))


def test_a_machine_with_a_browser_never_downloads_one(machine, monkeypatch):
    fake_install(monkeypatch, "works")
    path = stub(machine.bin2, "google-chrome")
    assert browser.find_or_install(machine.env) == browser.Found(path, "PATH (google-chrome)")
    missing = machine.root / "no-such-browser"
    with pytest.raises(browser.BrowserNotFound, match=rf"CHROMIUM={missing} is not an exec"):
        browser.find_or_install(machine.env | {"CHROMIUM": str(missing)})  # the user's choice
    assert not (machine.home / "install-ran").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="playwright's default folder on Linux")
def test_where_none_is_found_playwrights_chromium_is_installed_in_the_users_cache(
    machine, monkeypatch, capfd
):
    fake_install(monkeypatch, "works")
    found = browser.find_or_install(machine.env)
    cache = machine.home / ".cache" / "ms-playwright"
    assert found == browser.Found(
        cache / "chromium-1255/chrome-linux64/chrome", "playwright (chromium-1255)"
    )
    assert (machine.home / "install-ran").read_text() == "works"
    said = capfd.readouterr().err
    assert (
        f"no Chrome-family browser found: installing playwright's own Chromium into {cache}" in said
    )
    assert f"installed: {found.path}" in said
    assert browser.find_or_install(machine.env) == found  # once there, found like any other


def test_where_the_installation_fails_it_says_what_to_install(machine, monkeypatch, capfd):
    fake_install(monkeypatch, "fails")
    with pytest.raises(browser.BrowserNotFound) as raised:
        browser.find_or_install(machine.env)
    message = str(raised.value)
    assert message.startswith("installing playwright's Chromium failed (exit 1); no Chrome-family")
    assert "Debian/Ubuntu: sudo apt-get install chromium" in message
    assert "ENOTFOUND" in capfd.readouterr().err  # what playwright said, shown as it said it
    assert (machine.home / "install-ran").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="playwright's default folder on Linux")
def test_an_installed_chromium_that_does_not_start_says_what_to_install(machine, monkeypatch):
    fake_install(monkeypatch, "does-not-start")
    with pytest.raises(browser.BrowserNotFound, match="does not start: no libnss3") as raised:
        browser.find_or_install(machine.env)
    assert "Debian/Ubuntu: sudo apt-get install chromium" in str(raised.value)


def test_the_command_installs_only_when_asked(machine, monkeypatch, capfd):
    fake_install(monkeypatch, "fails")
    monkeypatch.setattr(os, "environ", machine.env)
    assert browser.main(["make test needs one"]) == 1
    assert not (machine.home / "install-ran").exists()
    assert browser.main(["--install", "make test needs one"]) == 1
    assert (machine.home / "install-ran").exists()
    said = capfd.readouterr().err
    assert (
        "make test needs one: installing playwright's Chromium failed (exit 1); no Chrome" in said
    )


# A site of one page with one diagram, built by mkdocs with the diagram hook alone.
SITE_CONFIG = """\
site_name: one diagram
theme: {name: material}
markdown_extensions:
  - pymdownx.superfences:
      custom_fences:
        - name: mermaid
          class: mermaid
          format: !!python/name:pymdownx.superfences.fence_code_format
hooks: [%s]
"""
PAGE = "# One diagram\n\n```mermaid\nflowchart LR\n  A[cached] --> B[drawn]\n```\n"


def build(site: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The strict build of the one-page site. Its store is the default one, ``site/.cache``
    (its mkdocs.yml sets no ``extra.build``), kept from one build to the next."""
    command = [*build_command(site / "mkdocs.yml", site / "site"), "-q"]
    return subprocess.run(command, cwd=site, env=env, capture_output=True, text=True, timeout=120)


def test_a_build_with_every_diagram_cached_needs_no_browser(tmp_path, request):
    site = tmp_path / "site-src"
    (site / "docs").mkdir(parents=True)
    (site / "docs" / "index.md").write_text(PAGE)
    (site / "mkdocs.yml").write_text(SITE_CONFIG % (ROOT / "hooks" / "mermaid_svg.py"))
    (site / "node_modules").symlink_to(ROOT / "node_modules")
    # /Applications cannot be hidden from a build in another process.
    apps = [folder / app for folder in browser.MACOS_APP_FOLDERS for app in browser.MACOS_APPS]
    if any(app.exists() for app in apps):
        pytest.skip(f"a browser in {browser.MACOS_APP_FOLDERS[0]} is found by any build")

    drawn = build(site, dict(os.environ))  # with this machine's browser: the diagram is drawn
    assert drawn.returncode == 0, drawn.stderr
    svg = (site / "site" / "index.html").read_text()
    assert '<div class="course-diagram"><svg' in svg and '<pre class="mermaid"' not in svg

    no_browser = request.getfixturevalue("no_browser")
    (site / "site" / "index.html").unlink()
    cached = build(site, no_browser)
    assert cached.returncode == 0, cached.stderr
    assert (site / "site" / "index.html").read_text() == svg

    (site / "docs" / "index.md").write_text(PAGE.replace("[drawn]", "[not drawn yet]"))
    missed = build(site, no_browser)
    assert missed.returncode == 1
    failure = "index.md: 1 diagram(s) to draw (not in the cache), and no Chrome-family browser"
    assert failure in missed.stderr
    assert "Install one:" in missed.stderr and "apt-get install chromium" in missed.stderr


def test_no_make_target_runs_apt_get():
    # Every command each target would run, set-up included (-B: as if nothing were up to date);
    # quoted text (the install hints make test prints) is not a command.
    targets = ["setup", "build", "serve", "test", "bench", "publish"]
    dry_run = subprocess.run(
        ["make", "-n", "-B", *targets], cwd=ROOT, env=author_env(), capture_output=True, text=True
    )
    assert dry_run.returncode == 0, dry_run.stderr
    quoted = re.compile(r"'[^']*'" + r'|"[^"]*"')
    commands = [quoted.sub("", line) for line in dry_run.stdout.splitlines()]
    assert len(commands) > 10 and any("mkdocs build" in command for command in commands)
    installing = re.compile(r"\b(apt-get|apt|dnf|brew)\b")
    assert not [command for command in commands if installing.search(command)]


@pytest.mark.skipif(sys.platform != "linux", reason=".ci/run runs on Debian")
@pytest.mark.parametrize(
    ("browser_present", "pythons_present"),
    [(False, 1), (True, 1), (True, 2)],
    ids=["no browser, one Python", "a browser, one Python", "a browser, two Pythons"],
)
def test_ci_installs_as_root_only_what_is_missing_then_runs_make_test_and_the_checks(
    machine, browser_present, pythons_present
):
    """.ci/run, with stand-ins for apt-get and make that write down how they were called: a
    browser where none is found, and Debian's python3 where fewer than two Pythons of the
    matrix are (make check-pythons compares the oldest and the newest)."""
    found = list(pythons.found().values())
    if len(found) < pythons_present:
        pytest.skip(f"fewer than {pythons_present} Pythons of the matrix on this machine")
    ran = machine.root / "ran"
    for name in ("apt-get", "make"):
        stub(machine.bin1, name).write_text(f'#!/bin/sh\necho {name} "$@" >> {ran}\n')
    for name in ("bash", "dirname"):
        (machine.bin1 / name).symlink_to(shutil.which(name))
    (machine.bin1 / "python3").symlink_to(sys.executable)
    machine.bin2.mkdir()
    for python in found[-pythons_present:]:
        (machine.bin2 / Path(python).name).symlink_to(python)
    if browser_present:
        stub(machine.bin2, "chromium")
    result = subprocess.run(
        [ROOT / ".ci" / "run"], env=machine.env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    missing = [] if browser_present else ["chromium"]
    missing += ["python3"] if pythons_present < 2 else []
    apt = ["apt-get update -qq", f"apt-get install -y -qq {' '.join(missing)}"] if missing else []
    checks = ["make test", "make check-cache", "make check-pythons"]
    assert ran.read_text().splitlines() == [*apt, *checks]
