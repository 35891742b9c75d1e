"""Live code for course section P5-9.1 "GPUs And Parallel Processing".

The same risk score, computed line by line in plain Python and for the whole batch at once
with ``jax.jit(jax.vmap(...))`` on whatever backend JAX finds.
"""

from .about import DISTRIBUTION, about
from .artifacts import CHART_BATCH_SIZES, line_scores_chart, multiply_count_chart
from .counting import scalar_multiply_count, scaling_table
from .data import BATCH, PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES, WEIGHTS
from .diagrams import sequential_vs_parallel_flowchart
from .practice import practice_lines, prose_numbers, rounded
from .recorded import RecordedTurnaround, compare_with_recorded, latest_recorded, load_recorded
from .report import BackendReport, backend_report
from .scoring import score_batch, score_one_by_one
from .sharding import gather_scores, layout_lines, row_mesh, score_sharded, shard_rows
from .turnaround import (
    Turnaround,
    machine_label,
    measure_turnaround,
    turnaround_chart,
    turnaround_findings,
    turnaround_markdown,
)

__all__ = [
    "BATCH",
    "CHART_BATCH_SIZES",
    "DISTRIBUTION",
    "PROBE_BATCH_SIZES",
    "PROBE_FEATURE_SIZES",
    "WEIGHTS",
    "BackendReport",
    "RecordedTurnaround",
    "Turnaround",
    "about",
    "backend_report",
    "compare_with_recorded",
    "gather_scores",
    "latest_recorded",
    "layout_lines",
    "line_scores_chart",
    "load_recorded",
    "machine_label",
    "measure_turnaround",
    "multiply_count_chart",
    "practice_lines",
    "prose_numbers",
    "rounded",
    "row_mesh",
    "scalar_multiply_count",
    "scaling_table",
    "score_batch",
    "score_one_by_one",
    "score_sharded",
    "sequential_vs_parallel_flowchart",
    "shard_rows",
    "turnaround_chart",
    "turnaround_findings",
    "turnaround_markdown",
]
