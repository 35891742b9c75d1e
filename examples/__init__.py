"""Live code for course section P5-9.1 "GPUs And Parallel Processing".

The same risk score, computed line by line in plain Python and for the whole batch at once
with ``jax.jit(jax.vmap(...))`` on whatever backend JAX finds.
"""

from .artifacts import CHART_BATCH_SIZES, line_scores_chart, multiply_count_chart
from .counting import scalar_multiply_count, scaling_table
from .data import BATCH, PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES, WEIGHTS
from .diagrams import sequential_vs_parallel_flowchart
from .practice import practice_lines, prose_numbers, rounded
from .report import BackendReport, backend_report
from .scoring import score_batch, score_one_by_one

__all__ = [
    "BATCH",
    "CHART_BATCH_SIZES",
    "PROBE_BATCH_SIZES",
    "PROBE_FEATURE_SIZES",
    "WEIGHTS",
    "BackendReport",
    "backend_report",
    "line_scores_chart",
    "multiply_count_chart",
    "practice_lines",
    "prose_numbers",
    "rounded",
    "scalar_multiply_count",
    "scaling_table",
    "score_batch",
    "score_one_by_one",
    "sequential_vs_parallel_flowchart",
]
