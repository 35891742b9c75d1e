"""Live code for the course's sections (``python -m examples --version`` names each, with its
version); first, P5-9.1 "GPUs And Parallel Processing".

The same risk score, computed line by line in plain Python and for the whole batch at once
with ``jax.jit(jax.vmap(...))`` on whatever backend JAX finds; many weight settings in one call;
the batch split across devices; and the counts, timings, charts and diagram the pages print.
The names the pages, the notebook and readers use are re-exported here; ``python -m examples``
is the readers' command line (``__main__.py``).
"""

from .about import DISTRIBUTION, about
from .backend import BackendReport, backend_report, machine_label
from .charts import (
    CHART_BATCH_SIZES,
    line_scores_chart,
    multiply_count_chart,
    settings_sweep_chart,
    turnaround_chart,
)
from .counting import scalar_multiply_count, scaling_table
from .data import BATCH, PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES, WEIGHTS
from .diagrams import sequential_vs_parallel_flowchart
from .findings import sweep_findings, turnaround_findings
from .practice import practice_lines, prose_numbers, rounded
from .recorded import (
    RecordedSweep,
    RecordedTurnaround,
    compare_with_recorded,
    latest_recorded,
    latest_recorded_sweep,
    load_recorded,
)
from .scoring import score_batch, score_one_by_one
from .settings import score_settings
from .sharding import gather_scores, layout_lines, row_mesh, score_sharded, shard_rows
from .sweep import SettingsSweep, measure_settings_sweep, sweep_markdown
from .turnaround import Turnaround, measure_turnaround, turnaround_markdown

__all__ = [
    "BATCH",
    "CHART_BATCH_SIZES",
    "DISTRIBUTION",
    "PROBE_BATCH_SIZES",
    "PROBE_FEATURE_SIZES",
    "WEIGHTS",
    "BackendReport",
    "RecordedSweep",
    "RecordedTurnaround",
    "SettingsSweep",
    "Turnaround",
    "about",
    "backend_report",
    "compare_with_recorded",
    "gather_scores",
    "latest_recorded",
    "latest_recorded_sweep",
    "layout_lines",
    "line_scores_chart",
    "load_recorded",
    "machine_label",
    "measure_settings_sweep",
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
    "score_settings",
    "score_sharded",
    "sequential_vs_parallel_flowchart",
    "settings_sweep_chart",
    "shard_rows",
    "sweep_findings",
    "sweep_markdown",
    "turnaround_chart",
    "turnaround_findings",
    "turnaround_markdown",
]
