"""What each build executed, and which outputs changed since the previously published version.

Every build writes ``execution-record.json`` into the site: one line per executed output with
its page, block id, the SHA-256 of the output and whether the output is expected to change
from build to build (timings). ``make publish`` (mike) publishes it with the version, so the
next ``make publish`` compares its outputs with the previous version's, read from the local
``gh-pages`` branch: a dependency bump that changes a printed output shows up by name.

The record also keeps, for every block a page shows with its source and a text output, that
source and the text shown under it, and the environment that computed it: the wheel carries
them (``expected_outputs``) for ``python -m examples verify`` on a reader's machine.

    python -m build_support.publishing.record VERSION  # the changes recorded in VERSION on gh-pages
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from .aliases import BRANCH, on_branch

RECORD_FILE = "execution-record.json"


@dataclass(frozen=True)
class Output:
    page: str
    block_id: str
    digest: str
    expected_to_change: bool
    source: str = ""  # these three only for a block shown with its source and a text output
    shown: str | None = None  # the text under it, as the page shows it
    environment: dict[str, str] | None = None  # where it was computed (examples.verify)


@dataclass
class Drift:
    compared_with: str | None  # the previous version, or None when there is none
    changed: list[Output] = field(default_factory=list)
    expected: list[Output] = field(default_factory=list)  # changed, as timings do
    added: list[Output] = field(default_factory=list)
    removed: list[Output] = field(default_factory=list)

    def lines(self) -> list[str]:
        if self.compared_with is None:
            return ["no previous version on gh-pages to compare with"]
        since = f"since {self.compared_with}"
        lines = [f"changed {since}: {o.page} {o.block_id}" for o in self.changed]
        lines += [
            f"changed {since} (expected: timings): {o.page} {o.block_id}" for o in self.expected
        ]
        lines += [f"new {since}: {o.page} {o.block_id}" for o in self.added]
        lines += [f"gone {since}: {o.page} {o.block_id}" for o in self.removed]
        if not self.changed and not self.added and not self.removed:
            lines.insert(0, f"no output changed {since} apart from those expected to change")
        return lines


def compare(previous: list[Output], current: list[Output], compared_with: str | None) -> Drift:
    drift = Drift(compared_with)
    if compared_with is None:
        return drift
    before = {(o.page, o.block_id): o for o in previous}
    now = {(o.page, o.block_id): o for o in current}
    for identity, output in now.items():
        old = before.get(identity)
        if old is None:
            drift.added.append(output)
        elif old.digest != output.digest:
            (drift.expected if output.expected_to_change else drift.changed).append(output)
    drift.removed = [output for identity, output in before.items() if identity not in now]
    return drift


def write(site_dir: Path, version: str, outputs: list[Output], drift: Drift) -> Path:
    path = site_dir / RECORD_FILE
    record = {
        "version": version,
        "compared_with": drift.compared_with,
        "changes": drift.lines(),
        "outputs": [asdict(output) for output in outputs],
    }
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path


# Where markdown-exec puts a block's source relative to its output (its ``source=`` option).
SOURCE_FIRST = {"above", "block", "tabbed-left"}
SOURCE_LAST = {"below", "tabbed-right"}


class _CodeTexts(HTMLParser):
    """The text of every ``<code>`` element, as a browser shows it (tags out, entities decoded)."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "code":
            if self._depth == 0:
                self.texts.append("")
            self._depth += 1

    def handle_endtag(self, tag):
        if tag == "code" and self._depth:
            self._depth -= 1

    def handle_data(self, data):
        if self._depth:
            self.texts[-1] += data


def shown_output(options: dict[str, Any], html: str) -> str | None:
    """The text under a block that shows its source and a text result (``html`` is what
    markdown-exec made of it); None for any other block."""
    location, result = options.get("source", ""), options.get("result", "")
    if not result or location not in SOURCE_FIRST | SOURCE_LAST:
        return None
    parser = _CodeTexts()
    parser.feed(html)
    if len(parser.texts) != 2:  # a failed block shows its traceback instead
        return None
    return parser.texts[1] if location in SOURCE_FIRST else parser.texts[0]


def expected_outputs(outputs: list[Output], version: str, current_environment) -> dict[str, Any]:
    """What the wheel carries for ``python -m examples verify``: each block shown with its text
    output (source and output), each timed block (listed, never compared), and the environment
    the outputs were computed in (``current_environment()`` when no block recorded one: an
    entry cached before blocks recorded it; the cache's key makes it this build's)."""
    blocks, environments = [], []
    for output in outputs:
        if output.expected_to_change:
            blocks.append({"page": output.page, "block_id": output.block_id, "timed": True})
        elif output.shown is not None:
            blocks.append(
                {
                    "page": output.page,
                    "block_id": output.block_id,
                    "source": output.source,
                    "output": output.shown,
                }
            )
            environments.append(output.environment)
    recorded = [environment for environment in environments if environment]
    return {
        "version": version,
        "environment": recorded[0] if recorded else current_environment(),
        "blocks": blocks,
    }


def previous_version(repo: Path, version: str) -> str | None:
    """The newest version on gh-pages other than ``version`` (or ``version`` itself when it is
    the only one: a redeploy compares with what it replaces)."""
    listing = on_branch(repo, "versions.json")
    if listing is None:
        return None
    versions = [entry["version"] for entry in json.loads(listing)]
    others = [v for v in versions if v != version]
    if others:
        return others[0]  # mike lists the newest first
    return version if version in versions else None


def previous_outputs(repo: Path, version: str) -> tuple[str | None, list[Output]]:
    previous = previous_version(repo, version)
    if previous is None:
        return None, []
    text = on_branch(repo, f"{previous}/{RECORD_FILE}")
    if text is None:
        return None, []
    return previous, [Output(**output) for output in json.loads(text)["outputs"]]


def main(argv: list[str]) -> int:
    """Print the changes recorded in ``VERSION``'s record on gh-pages (after make publish)."""
    (version,) = argv
    text = on_branch(Path.cwd(), f"{version}/{RECORD_FILE}")
    if text is None:
        print(f"no {RECORD_FILE} in {BRANCH}:{version}/", file=sys.stderr)
        return 1
    for line in json.loads(text)["changes"]:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
