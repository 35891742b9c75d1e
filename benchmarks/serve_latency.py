"""Serve latency: how long a one-word prose edit takes to show under ``mkdocs serve``, for this
site (a throw-away copy; its outputs reused from the execution cache) and for a one-page
Material site, in the same run, edits in turns. Target: at most 2x the one-page site.

Each edit rewrites the page with a new word and polls the served page every 20 ms until the
word is there: the watcher's delay, the rebuild and the serving, as an author sees them.

    python benchmarks/serve_latency.py [--edits 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from build_support import section
from build_support.site_tools import BUILD_ENV, copy_env, copy_project

MAX_RATIO = 2.0
SENTENCE = "The following analogy is the safest one."


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def _wait_for(url: str, word: str, timeout_s: float = 300) -> float:
    start = time.perf_counter()
    while word not in _fetch(url):
        if time.perf_counter() - start > timeout_s:
            raise SystemExit(f"{word!r} never showed at {url}")
        time.sleep(0.02)
    return time.perf_counter() - start


class Site:
    def __init__(self, name: str, root: Path, page: Path, url_path: str, sentence: str, env):
        self.name, self.root, self.page, self.sentence = name, root, page, sentence
        self.original = page.read_text()
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}/{url_path}"
        self.log = (root / "serve.log").open("w")
        self.server = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "--strict", "-a", f"127.0.0.1:{port}"],
            cwd=root,
            env={**os.environ, **BUILD_ENV, **env},
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    def edit(self, word: str) -> float:
        text = self.original.replace(self.sentence, f"{self.sentence} {word}", 1)
        self.page.write_text(text)
        return _wait_for(self.url, word)

    def stop(self) -> None:
        self.server.terminate()
        try:
            self.server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        project = copy_project(Path(tmp, "project"))
        one_page = Path(tmp, "one-page")
        (one_page / "docs").mkdir(parents=True)
        (one_page / "mkdocs.yml").write_text("site_name: One page\ntheme:\n  name: material\n")
        (one_page / "docs" / "index.md").write_text(f"# One page\n\n{SENTENCE}\n")
        sites = [
            Site(
                "this site",
                project,
                project / section.page_path(),
                f"{section.page_name()}/",
                SENTENCE,
                copy_env(project) | {"FRESH": ""},
            ),
            Site("one-page Material", one_page, one_page / "docs/index.md", "", SENTENCE, {}),
        ]
        try:
            for site in sites:  # the first build (cold for this site), then one edit to warm up
                _wait_for(site.url, "</html>")
                site.edit("warmup")
            times: dict[str, list[float]] = {site.name: [] for site in sites}
            for i in range(args.edits):
                for site in sites:
                    times[site.name].append(site.edit(f"edited{i}word"))
        finally:
            for site in sites:
                site.stop()

    ours, floor = (statistics.median(times[site.name]) for site in sites)
    print(f"# benchmarks/serve_latency.py: median of {args.edits} prose edits each, in turns")
    for site in sites:
        runs = ", ".join(f"{t:.2f}" for t in times[site.name])
        print(
            f"{site.name + ':':<20} {statistics.median(times[site.name]):5.2f} s   (runs: {runs})"
        )
    ratio = ours / floor
    met = "met" if ratio <= MAX_RATIO else "MISSED"
    print(f"ratio this site / one page: {ratio:5.2f}x  (target <= {MAX_RATIO:g}x: {met})")


if __name__ == "__main__":
    main()
