"""Mermaid sources derived from the data, never typed by hand into a page."""

from __future__ import annotations

import itertools
from typing import Any

from .validation import as_array

MAX_GROUPED_SAMPLES = 8
"""Beyond this many rows the parallel path draws the first samples and one node for the rest."""


def _sequential_steps(rows: int) -> list[tuple[str, str]]:
    # The CPU-like path: sample, compute, next sample, compute again, ... one after another.
    steps = [("A1", "Sample 1"), ("B1", "Compute")]
    if rows >= 2:
        steps += [("C1", "Sample 2"), ("D1", "Compute again")]
    if rows >= 3:
        steps.append(("E1", "Sample 3 next"))
    return steps


def _sequential_path(rows: int) -> list[str]:
    steps = _sequential_steps(rows)
    lines = [f'    {steps[0][0]}["{steps[0][1]}"] --> {steps[1][0]}["{steps[1][1]}"]']
    for (previous, _), (node, label) in itertools.pairwise(steps[1:]):
        lines.append(f'    {previous} --> {node}["{label}"]')
    return lines


def _sample_labels(rows: int) -> list[str]:
    if rows <= MAX_GROUPED_SAMPLES:
        return [f"Sample {i}" for i in range(1, rows + 1)]
    shown = MAX_GROUPED_SAMPLES - 1
    return [f"Sample {i}" for i in range(1, shown + 1)] + [f"Samples {shown + 1} to {rows}"]


def _parallel_path(rows: int) -> list[str]:
    # The GPU-like path: every sample enters one matrix operation together.
    nodes = [(f"A{i}", label) for i, label in enumerate(_sample_labels(rows), start=2)]
    grouped = []
    for pair_start in range(0, len(nodes), 2):
        pair = nodes[pair_start : pair_start + 2]
        grouped.append(" --> ".join(f'{node}["{label}"]' for node, label in pair))
    lines = [
        '    subgraph INPUTS["Samples grouped at once"]',
        "      direction LR",
        *(f"      {line}" for line in grouped),
        "    end",
    ]
    lines += [
        f'    {node} --> P["Same matrix operation"]' if i == 0 else f"    {node} --> P"
        for i, (node, _) in enumerate(nodes)
    ]
    lines.append('    P --> O["Outputs together"]')
    return lines


def _listed(labels: list[str]) -> str:
    return ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else labels[0]


def _accessibility_lines(rows: int) -> list[str]:
    # What a screen reader announces for the drawn diagram (mermaid turns these into the SVG's
    # <title> and <desc>). Written from the same labels as the nodes, so it cannot drift.
    sequential = [label for _, label in _sequential_steps(rows)]
    samples = _sample_labels(rows)
    description = (
        f"Two paths for the same work. CPU-like sequential path, one step after another: "
        f"{', '.join(sequential)}. GPU-like parallel path: {_listed(samples)} are grouped at "
        f"once, all enter the same matrix operation, and the outputs come out together."
        if rows > 1
        else f"Two paths for the same work. CPU-like sequential path, one step after another: "
        f"{', '.join(sequential)}. GPU-like parallel path: {samples[0]} enters the same "
        f"matrix operation, and the output comes out."
    )
    return [
        "  accTitle: Sequential processing against parallel processing",
        f"  accDescr: {description}",
    ]


def sequential_vs_parallel_flowchart(batch: Any) -> str:
    """The section's flowchart: a CPU-like sequential path against a GPU-like parallel path.

    The number of samples follows the batch's rows; for the manuscript's 4-line batch it is the
    manuscript's diagram, node for node, plus an accessible title and description (the
    ``accTitle`` and ``accDescr`` lines after the first).
    """
    array = as_array("batch", batch)
    if array.ndim != 2 or array.shape[0] == 0:
        raise ValueError(
            f"batch must be 2-D (rows x features) with at least one row, "
            f"got shape {tuple(array.shape)}"
        )
    rows = int(array.shape[0])
    lines = [
        "flowchart TD",
        *_accessibility_lines(rows),
        '  subgraph CPU["CPU-like sequential path"]',
        "    direction TB",
        *_sequential_path(rows),
        "  end",
        "",
        '  GAP["Comparison focus: how the same work is arranged"]',
        "",
        '  subgraph GPU["GPU-like parallel path"]',
        "    direction TB",
        *_parallel_path(rows),
        "  end",
        "",
        "  CPU --> GAP --> GPU",
    ]
    return "\n".join(lines)
