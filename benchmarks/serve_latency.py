"""Serve latency: how long a one-word prose edit takes to show under ``mkdocs serve``, for this
site (a throw-away copy; its outputs reused from the execution cache) and for a one-page
Material site, in the same run, edits in turns. Target: at most 2x the one-page site.

Each edit rewrites the page with a new word and polls the served page every 20 ms until the
word is there: the watcher's delay, the rebuild and the serving, as an author sees them.

``--block``: each edit on this site changes an executed block instead (the multiply-count
chart's, which then also prints the word), so the block runs again: the time an author waits to
see an edited block's output (target: at most 1 s slower than the build before the change being
judged, measured in the same way; printed, not judged here).

    python benchmarks/serve_latency.py [--edits 5] [--block]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from build_support.build_command import BUILD_ENV
from testkit.build import copy_env, copy_project
from testkit.project import SECTION_PAGE
from testkit.serving import LOCAL_HOST, free_port

MAX_RATIO = 2.0
SENTENCE = "The following analogy is the safest one."
BLOCK_LINE = "print(multiply_count_chart())"  # a line of an executed block on the section page


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
        self.in_block = sentence == BLOCK_LINE
        self.original = page.read_text()
        port = free_port()
        self.url = f"http://{LOCAL_HOST}:{port}/{url_path}"
        self.log = (root / "serve.log").open("w")
        self.server = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "--strict", "-a", f"{LOCAL_HOST}:{port}"],
            cwd=root,
            env={**os.environ, **BUILD_ENV, **env},
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    def edit(self, word: str) -> float:
        added = f'\nprint("<p>{word}</p>")' if self.in_block else f" {word}"
        text = self.original.replace(self.sentence, f"{self.sentence}{added}", 1)
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
    parser.add_argument("--block", action="store_true", help="edit an executed block, not prose")
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
                project / "docs" / f"{SECTION_PAGE}.md",
                f"{SECTION_PAGE}/",
                BLOCK_LINE if args.block else SENTENCE,
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
    edited = "block edits on this site, prose edits on" if args.block else "prose edits on each"
    print(f"# benchmarks/serve_latency.py: median of {args.edits} {edited}, in turns")
    for site in sites:
        runs = ", ".join(f"{t:.2f}" for t in times[site.name])
        print(
            f"{site.name + ':':<20} {statistics.median(times[site.name]):5.2f} s   (runs: {runs})"
        )
    ratio = ours / floor
    if args.block:
        print(f"ratio this site's block edit / one page's prose edit: {ratio:5.2f}x")
        return
    met = "met" if ratio <= MAX_RATIO else "MISSED"
    print(f"ratio this site / one page: {ratio:5.2f}x  (target <= {MAX_RATIO:g}x: {met})")


if __name__ == "__main__":
    main()
