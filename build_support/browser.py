"""Which Chrome-family browser the project drives, and how it launches it: one home for both.

Mermaid draws the diagrams in it when the site is built (``hooks/mermaid_svg.py``, only for a
diagram not already cached), and the tests and benchmarks drive it through playwright. The
first one found wins:

1. ``CHROMIUM``, if set: a path, or a name on ``PATH`` (set but not found is an error);
2. ``chromium``, ``chromium-browser``, ``google-chrome``, ``google-chrome-stable`` on ``PATH``;
3. Google Chrome or Chromium in ``/Applications`` or ``~/Applications`` (macOS);
4. playwright's own chromium, where ``playwright install chromium`` put one: in
   ``PLAYWRIGHT_BROWSERS_PATH``, or playwright's default folder (newest revision first).

``python -m build_support.browser [--install] [WHAT NEEDS ONE]`` prints the one found, or what
to install. With ``--install`` (``make test``), where none is found, it first runs playwright's
``playwright install --no-shell chromium``, which downloads playwright's own Chromium into the
user's cache (4. above; no root), then looks again; where that fails too (no network) it prints
what to install. A machine with a browser never downloads one. Standard library only: the
numeric tests run without the docs stack.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "CHROMIUM"
PATH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
MACOS_APP_FOLDERS = (Path("/Applications"),)  # and the user's own ~/Applications
MACOS_APPS = (
    "Google Chrome.app/Contents/MacOS/Google Chrome",
    "Chromium.app/Contents/MacOS/Chromium",
)
# The executable inside playwright's chromium-<revision>/ folders, per platform, as its
# registry lays them out now (chrome-linux64, ...) and did before (chrome-linux, chrome-mac).
PLAYWRIGHT_EXECUTABLES = (
    "chrome-linux64/chrome",
    "chrome-linux-arm64/chrome",
    "chrome-linux/chrome",
    "chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
    "chrome-mac-x64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
    "chrome-mac/Chromium.app/Contents/MacOS/Chromium",
    "chrome-win64/chrome.exe",
    "chrome-win/chrome.exe",
)
# Headless, offline (no update or background requests: the site is checked for requests to
# other hosts) and without the sandbox, which refuses to start as root (CI containers).
LAUNCH_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)
# WebGPU in headless Chromium without a GPU: through SwiftShader, on the CPU (without these,
# jax-js finds "No available adapters"); tests/test_try_it_differential.py runs jax-js's webgpu
# backend with them added.
WEBGPU_ARGS = (
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
)
INSTALL_HINTS = (
    ("Debian/Ubuntu", "sudo apt-get install chromium  (Ubuntu: chromium-browser)"),
    ("Fedora", "sudo dnf install chromium"),
    ("macOS", "brew install --cask google-chrome"),
    ("any system", ".venv/bin/playwright install chromium  (playwright's own build)"),
)

# Run with the interpreter of .venv, where playwright is installed: it downloads the Chromium
# build that this playwright drives into its default folder (4. above), the user's cache.
# --no-shell: not the headless shell as well, which the project does not use.
INSTALL_COMMAND = (sys.executable, "-m", "playwright", "install", "--no-shell", "chromium")


class BrowserNotFound(RuntimeError):
    """No Chrome-family browser where the project looks; the message says what to install."""


@dataclass(frozen=True)
class Found:
    path: Path
    how: str  # how it was found: "CHROMIUM", "PATH (google-chrome)", ...


def find(environ: Mapping[str, str] | None = None) -> Found:
    """The browser to drive (see the module's docstring for the order); ``BrowserNotFound``
    where there is none. ``environ`` (default ``os.environ``) supplies every variable read."""
    environ = os.environ if environ is None else environ
    chosen = environ.get(ENV_VAR)
    if chosen:
        path = shutil.which(os.path.expanduser(chosen), path=environ.get("PATH", os.defpath))
        if path is None:
            raise BrowserNotFound(
                f"{ENV_VAR}={chosen} is not an executable file nor a command on PATH: "
                f"point {ENV_VAR} at a Chrome-family browser, or unset it"
            )
        return Found(Path(path), ENV_VAR)
    for how, path in _candidates(environ):
        if path.is_file() and os.access(path, os.X_OK):
            return Found(path, how)
    raise BrowserNotFound(not_found_message(environ))


def find_or_install(environ: Mapping[str, str] | None = None) -> Found:
    """``find``; where it finds nothing, say so, run ``INSTALL_COMMAND`` (its output on
    stderr), look again and check that what it installed starts. ``BrowserNotFound``, saying
    what to install, where either failed. A ``CHROMIUM`` that finds nothing stays an error:
    nothing is downloaded instead."""
    environ = os.environ if environ is None else environ
    try:
        return find(environ)
    except BrowserNotFound as error:
        if environ.get(ENV_VAR):
            raise
        missing = str(error)
    folder = " or ".join(map(str, _playwright_folders(environ))) or "playwright's folder"
    print(
        f"no Chrome-family browser found: installing playwright's own Chromium into {folder} "
        f"(no root): {' '.join(INSTALL_COMMAND)}",
        file=sys.stderr,
        flush=True,
    )
    installed = subprocess.run(INSTALL_COMMAND, env=dict(environ), stdout=sys.stderr.fileno())
    try:
        found = find(environ)
    except BrowserNotFound:
        raise BrowserNotFound(
            f"installing playwright's Chromium failed (exit {installed.returncode}); {missing}"
        ) from None
    # Playwright's build needs the system's libraries (libnss3, ...), which only root installs.
    runs = subprocess.run([found.path, "--version"], env=dict(environ), capture_output=True)
    if runs.returncode != 0:
        raise BrowserNotFound(
            f"playwright's Chromium, installed in {found.path}, does not start: "
            f"{runs.stderr.decode(errors='replace').strip()}\n"
            "Install a Chrome-family browser from the system's packages instead (they bring its "
            f"libraries), or its libraries: playwright install-deps chromium (as root).\n{missing}"
        )
    print(f"installed: {found.path}", file=sys.stderr)
    return found


def launch(playwright, extra_args: tuple[str, ...] = (), **options):
    """The found browser, launched by playwright (sync or async API) with the project's args
    (and ``extra_args``, e.g. ``WEBGPU_ARGS``)."""
    return playwright.chromium.launch(
        executable_path=str(find().path), args=[*LAUNCH_ARGS, *extra_args], **options
    )


def not_found_message(environ: Mapping[str, str]) -> str:
    """Where the project looked, and what to install."""
    macos = [*MACOS_APP_FOLDERS, _home(environ) / "Applications"]
    installs = "\n".join(f"  {system + ':':<15}{command}" for system, command in INSTALL_HINTS)
    return (
        "no Chrome-family browser found. Looked for: "
        f"${ENV_VAR} (not set); {', '.join(PATH_NAMES)} on PATH; "
        f"Google Chrome or Chromium in {' and '.join(map(str, macos))}; "
        f"playwright's chromium in {' and '.join(map(str, _playwright_folders(environ)))}.\n"
        f"Install one:\n{installs}\n"
        f"or set {ENV_VAR} to a Chrome-family browser's path."
    )


def _candidates(environ: Mapping[str, str]) -> Iterator[tuple[str, Path]]:
    search_path = environ.get("PATH", os.defpath)
    for name in PATH_NAMES:
        if path := shutil.which(name, path=search_path):
            yield f"PATH ({name})", Path(path)
    for folder in (*MACOS_APP_FOLDERS, _home(environ) / "Applications"):
        for app in MACOS_APPS:
            yield "macOS applications", folder / app
    for folder in _playwright_folders(environ):
        for revision in _newest_first(folder.glob("chromium-*")):
            for executable in PLAYWRIGHT_EXECUTABLES:
                yield f"playwright ({revision.name})", revision / executable


def _playwright_folders(environ: Mapping[str, str]) -> list[Path]:
    # As playwright's registry decides it (registryDirectory, defaultCacheDirectory).
    chosen = environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if chosen == "0":  # inside the installed package
        spec = importlib.util.find_spec("playwright")
        if spec is None or spec.origin is None:
            return []
        return [Path(spec.origin).parent / "driver" / "package" / ".local-browsers"]
    if chosen:
        return [Path(chosen).expanduser().absolute()]
    home = _home(environ)
    if sys.platform == "darwin":
        return [home / "Library" / "Caches" / "ms-playwright"]
    if sys.platform == "win32":
        local = environ.get("LOCALAPPDATA") or home / "AppData" / "Local"
        return [Path(local) / "ms-playwright"]
    return [Path(environ.get("XDG_CACHE_HOME") or home / ".cache") / "ms-playwright"]


def _newest_first(revisions: Iterator[Path]) -> list[Path]:
    def number(folder: Path) -> int:
        suffix = folder.name.rpartition("-")[2]
        return int(suffix) if suffix.isdigit() else -1

    return sorted(revisions, key=number, reverse=True)


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or Path.home())


def main(arguments: list[str]) -> int:
    """Print the browser found (``--install``: or installed); or, prefixed with what needs one
    (the other arguments), what to do."""
    install = "--install" in arguments
    needed_by = [argument for argument in arguments if argument != "--install"]
    try:
        found = find_or_install() if install else find()
    except BrowserNotFound as error:
        print(": ".join([*needed_by, str(error)]), file=sys.stderr)
        return 1
    print(f"{found.path}  (found by {found.how})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
