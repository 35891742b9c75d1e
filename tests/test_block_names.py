"""Every block has a name of its own (issue 48): its ``id``, else its ``title``, else its page
and line (``index.md:7``), in failures, the Build report, the record and the readers'
``expected-outputs.json``; one build reports every failing block, then fails; a session block's
failure points at the line that raised, in whichever block it is
(``build_support/execution/fences.py``: ``named``; ``guard.Failing``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from build_support.execution import fences
from build_support.publishing.record import Output, expected_outputs
from testkit.build import mkdocs_build
from testkit.small_site import ONE_PAGE_CONFIG

NAMED = """\
# Names

```python exec="on" source="above" result="text"
print("first")
```

```python exec="on" title="Twice" source="above" result="text"
print("second")
```

```python exec="on" title="Twice" source="above" result="text"
print("third")
```

```python exec="on" id="own-id" title="ignored for a name"
print("fourth")
```

```python exec="on" session="s"
def bump():
    raise ValueError("bumped")
```
"""


def _site(tmp_path: Path, page: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    (tmp_path / "docs" / "index.md").write_text(page)
    return tmp_path


def _build(site: Path, **options) -> tuple[int, str]:
    result = mkdocs_build(site / "mkdocs.yml", site / "site", timeout=300, **options)
    return result.returncode, result.stdout + result.stderr


def test_a_block_is_named_by_its_id_title_or_page_and_line():
    found = fences.named(list(fences.read(NAMED, fences.LANGUAGES)), "index.md")
    names = [fence.options[fences.BLOCK_NAME] for fence in found]
    assert names == [
        "index.md:3",
        "Twice (index.md:7)",
        "Twice (index.md:11)",
        "own-id",
        "index.md:19",
    ]


def test_a_fence_inside_md_is_named_by_its_line_in_the_page():
    page = '# P\n\n````md exec="on"\ntext\n\n```python exec="on"\nprint(1)\n```\n````\n'
    (fence,) = fences.named(list(fences.read(page, fences.LANGUAGES)), "p.md")
    assert fence.options[fences.BLOCK_NAME] == "p.md:6"


def test_moving_a_block_keeps_its_key():
    before = next(fences.read('```python exec="on"\nprint(1)\n```\n', fences.LANGUAGES))
    after = next(fences.read('\n\n\n```python exec="on"\nprint(1)\n```\n', fences.LANGUAGES))
    named_before = fences.named([before], "a.md")[0].options
    named_after = fences.named([after], "a.md")[0].options
    assert named_before[fences.BLOCK_NAME] != named_after[fences.BLOCK_NAME]
    assert fences.own_digest(named_before) == fences.own_digest(named_after)


@pytest.fixture(scope="module")
def named_site(tmp_path_factory) -> tuple[Path, str]:
    site = _site(tmp_path_factory.mktemp("names"), NAMED)
    code, log = _build(site, fresh=False)
    assert code == 0, log
    return site, log


def test_the_build_log_and_the_record_name_every_block_once(named_site):
    site, log = named_site
    executed = re.findall(r"Executed index\.md (.+?): ran", log)
    expected = ["index.md:3", "Twice (index.md:7)", "Twice (index.md:11)", "own-id", "index.md:19"]
    assert executed == expected, log
    record = json.loads((site / "site" / "execution-record.json").read_text())
    names = [output["block_id"] for output in record["outputs"]]
    assert sorted(names) == sorted(expected)


def test_the_readers_expected_outputs_never_share_a_name(named_site):
    site, _ = named_site
    record = json.loads((site / "site" / "execution-record.json").read_text())
    outputs = [Output(**output) for output in record["outputs"]]
    shown = expected_outputs(outputs, "v", lambda: None)  # what the wheel carries
    names = [(block["page"], block["block_id"]) for block in shown["blocks"]]
    assert len(names) == len(set(names)) == 3, names


def test_a_moved_block_is_reused_under_its_new_name(named_site):
    site, _ = named_site
    (site / "docs" / "index.md").write_text("Prose above.\n\n" + NAMED)
    code, log = _build(site, fresh=False)
    assert code == 0, log
    assert "Executed index.md index.md:5: reused" in log, log
    assert ": ran" not in log, log


def test_one_build_reports_every_failing_block_then_fails(tmp_path):
    """Named by their lines in the page's file, front matter included."""
    site = _site(
        tmp_path,
        "---\ntitle: Broken\n---\n# Broken\n\n"
        '```python exec="on"\nraise ValueError("one")\n```\n\n'
        '```python exec="on" title="Second"\n1 / 0\n```\n\n'
        '```python exec="on" id="fine"\nprint("fine")\n```\n\n'
        '```python exec="on" id="third"\nimport sys; sys.exit(3)\n```\n',
    )
    code, log = _build(site)
    assert code != 0
    tail = log[log.index("3 blocks failed") :]
    for said in (
        "page index.md, block 'index.md:6' failed: ValueError: one",
        "page index.md, block 'Second' failed: ZeroDivisionError",
        "page index.md, block 'third' failed: SystemExit",
    ):
        assert said in tail, log
    assert "'fine' failed" not in log
    assert not (site / "site" / "index.html").exists()  # nothing written: the build failed


def test_a_session_blocks_failure_points_at_the_line_that_raised(tmp_path):
    site = _site(
        tmp_path,
        "# Session\n\n"
        '```python exec="on" session="s"\n'
        'count = 0\ndef bump():\n    raise ValueError("no")\n```\n\n'
        '```python exec="on" session="s"\ncount += 1\nbump()\n```\n',
    )
    code, log = _build(site)
    assert code != 0
    assert "page index.md, block 'index.md:9' failed: ValueError: no" in log, log
    assert 'at line 3 of block index.md:3: raise ValueError("no")' in log, log
    assert "line 2 of the block: bump()" in log, log


REASONS = """\
# Reasons

```python exec="on" id="alone"
print(1)
```

```python exec="on" id="first" session="s"
x = 1
```

```python exec="on" id="second" session="s"
print(x)
```

```python exec="on" id="heads"
print("## A printed heading")
```
"""


def test_the_reason_a_block_ran_is_true_for_each_kind_of_change(tmp_path):
    site = _site(tmp_path, REASONS)
    steps = [
        (
            {},
            {
                "alone": "ran (no cache entry)",
                "first": "ran (no cache entry)",
                "heads": "ran (no cache entry)",
            },
        ),
        ({"print(1)": "print(2)"}, {"alone": "ran (its source changed)"}),
        ({'id="alone"': 'id="alone" result="text"'}, {"alone": "ran (its options changed)"}),
        (
            {"x = 1": "x = 2"},
            {
                "first": "ran (a block of its session changed)",
                "second": "ran (a block of its session changed)",
            },
        ),
        ({"# Reasons": "# Reasons\n\nProse above every block."}, {}),
    ]
    page = REASONS
    for edits, ran in steps:
        for before, after in edits.items():
            page = page.replace(before, after)
        (site / "docs" / "index.md").write_text(page)
        code, log = _build(site, fresh=False)
        assert code == 0, log
        said = dict(re.findall(r"Executed index\.md (\S+): (ran(?: \([^)]*\))?|reused)", log))
        expected = {"alone": "reused", "first": "reused", "second": "reused", "heads": "reused"}
        expected |= ran
        if "first" in ran and "second" not in ran:
            expected["second"] = ran["first"]  # a session's blocks run together
        assert said == expected, (edits, log)


def test_a_printed_heading_is_reused_with_its_toc_entry_and_a_fresh_builds_id(tmp_path):
    """markdown-exec numbers each conversion of the build into the ids of a block without
    ``id`` (``exec-2--``), and puts the headings a block prints in the table of contents: a
    reused block takes its numbers and files its headings as its run did, so a cached build is a
    fresh one (``sessions.renumbered``, ``headings.py``). A heading holding raw HTML refers to
    its page's stash: its block runs every build, saying so."""
    site = _site(
        tmp_path,
        '# Ids\n\n```python exec="on"\nprint("plain")\n```\n\n'
        '```python exec="on"\nprint("## Printed `code`")\n```\n\n'
        '```python exec="on" id="raw"\nprint("## With <span>raw</span> HTML")\n```\n',
    )
    shown, logs = [], []
    for fresh in (False, False, True):
        code, log = _build(site, fresh=fresh)
        assert code == 0, log
        soup = BeautifulSoup((site / "site" / "index.html").read_text(), "html.parser")
        ids = [h2["id"] for h2 in soup.select("article h2")]
        toc = [
            (a["href"], a.get_text(" ", strip=True))
            for a in soup.select_one("nav.md-nav--secondary").select("a")
        ]
        shown.append((ids, toc))
        logs.append(log)
    assert "Executed index.md index.md:7: reused" in logs[1], logs[1]
    assert "Executed index.md raw: ran (its session prints a heading holding raw HTML" in logs[1]
    assert shown[0] == shown[1] == shown[2], shown
    ids, toc = shown[0]
    assert ids == ["exec-2--printed-code", "raw-with-raw-html"], ids
    assert toc == [
        ("#exec-2--printed-code", "Printed code"),
        ("#raw-with-raw-html", "With raw HTML"),
    ]


def test_a_varying_block_is_never_a_fixed_text_for_verify(tmp_path):
    """``varying="yes"`` (its output differs between fresh runs): the wheel's expected outputs
    list it as a timing is listed, never as a text ``verify`` compares."""
    site = _site(
        tmp_path,
        '# V\n\n```python exec="on" id="random" varying="yes" source="above" result="text"\n'
        "import os\nprint(os.urandom(4).hex())\n```\n\n"
        '```python exec="on" id="steady" source="above" result="text"\nprint(42)\n```\n',
    )
    code, log = _build(site)
    assert code == 0, log
    record = json.loads((site / "site" / "execution-record.json").read_text())
    shown = expected_outputs([Output(**o) for o in record["outputs"]], "v", lambda: None)
    by_name = {block["block_id"]: block for block in shown["blocks"]}
    assert by_name["random"] == {"page": "index.md", "block_id": "random", "timed": True}
    assert by_name["steady"]["output"].strip() == "42"
