"""The Build report page: each executed output, ran or reused and why; the drift since the
previous published version."""

from __future__ import annotations

import html
from collections.abc import Sequence

from ..caching.environment import Environment
from .record import Drift
from .runs import Run

REPORT_PAGE = "build-report.md"
TABLE_SLOT = '<div class="build-report-slot"></div>'
REPORT_MARKDOWN = f"""\
---
search:
  exclude: true
---

# Build report

What the last build executed: every `python exec` block and every notebook, with its page and
its `id`, whether this build ran it or reused the output stored in the execution cache, why it
ran, the seconds it took and where it ran. An output is reused only when nothing it depends on
has changed: every ingredient of its key is listed below the table
(`build_support/caching/environment.py`); `make check-cache` builds with the cache and fresh and
compares the two.
Notebooks run in the
background, beside the pages' blocks: their seconds overlap the blocks' seconds, so the total
below is the work done, not how long the build took. Written by `hooks/execution.py` after every
other page.

{TABLE_SLOT}
"""


def totals(runs: Sequence[Run]) -> str:
    blocks = sum(run.kind == "block" for run in runs)
    notebooks = sum(run.kind == "notebook" for run in runs)
    ran = sum(run.ran for run in runs)
    seconds = sum(run.seconds for run in runs)
    notebooks_word = "notebook" if notebooks == 1 else "notebooks"
    return (
        f"{blocks} blocks and {notebooks} {notebooks_word}: {ran} ran, "
        f"{len(runs) - ran} reused; executed in {seconds:.2f} s"
    )


def _why(run: Run) -> str:
    return "; ".join(run.reasons) if run.ran else ""


def _inline_code(text: str) -> str:
    """Backquoted names in a reason become code spans."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def table(runs: Sequence[Run], drift: Drift | None) -> str:
    rows = "\n".join(
        f"<tr><td>{html.escape(run.page)}</td><td><code>{html.escape(run.block_id)}</code></td>"
        f"<td>{'ran' if run.ran else 'reused'}</td><td>{_inline_code(_why(run))}</td>"
        f'<td class="seconds">{run.seconds:.2f}</td><td>{html.escape(run.ran_on)}</td></tr>'
        for run in runs
    )
    parts = [
        f'<p class="build-report-totals">{totals(runs)}.</p>',
        '<table class="build-report">',
        "<thead><tr><th>Page</th><th>Block id</th><th>Outcome</th><th>Why it ran</th>"
        "<th>Seconds</th><th>Ran on</th></tr></thead>",
        f"<tbody>\n{rows}\n</tbody>\n</table>",
    ]
    if drift is not None:
        parts.append(_drift_html(drift))
    return "\n".join(parts)


def _drift_html(drift: Drift) -> str:
    if drift.compared_with is None:
        return '<p class="build-report-drift">No previous version on gh-pages to compare with.</p>'

    def items(outputs) -> str:
        if not outputs:
            return "<p>None.</p>"
        lines = "".join(
            f"<li>{html.escape(o.page)} <code>{html.escape(o.block_id)}</code></li>"
            for o in outputs
        )
        return f"<ul>{lines}</ul>"

    version = html.escape(drift.compared_with)
    return (
        f'<div class="build-report-drift">\n'
        f'<h2 id="changed-since">Outputs changed since {version}</h2>\n'
        f'<div class="drift-changed">{items(drift.changed)}</div>\n'
        f'<h3 id="expected-to-change">Expected to change (timings)</h3>\n'
        f'<div class="drift-expected">{items(drift.expected)}</div>\n'
        f'<h3 id="new-or-gone">New or gone since {version}</h3>\n'
        f'<div class="drift-added-removed">{items(drift.added + drift.removed)}</div>\n'
        "</div>"
    )


def key_html(environment: Environment, config=None) -> str:
    rows = "\n".join(
        f"<tr><td>{html.escape(name)}</td><td>{html.escape(value)}</td></tr>"
        for name, value in environment.described(config)
    )
    return (
        '<h2 id="the-key">What the cache\'s key holds</h2>\n'
        '<table class="build-report-key"><thead><tr><th>Ingredient</th><th>In this build</th>'
        f"</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>"
    )
