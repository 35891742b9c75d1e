"""What one build executed: a ``Run`` per output (block or notebook), as the Build report
shows it, and the same runs as the drift record stores them (``outputs``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .record import Output


@dataclass
class Run:
    """One executed output of this build, as the Build report shows it."""

    page: str
    block_id: str
    ran: bool
    reasons: list[str]
    seconds: float
    ran_on: str
    kind: str  # "block" or "notebook"
    output_digest: str = ""
    expected_to_change: bool = False
    source: str = ""  # the three below: a block shown with its source and a text output only
    shown: str | None = None
    environment: dict[str, str] | None = None


def outputs(runs: Iterable[Run]) -> list[Output]:
    """The runs as ``execution-record.json`` records them (``record.py``)."""
    return [
        Output(
            run.page,
            run.block_id,
            run.output_digest,
            run.expected_to_change,
            run.source,
            run.shown,
            run.environment,
        )
        for run in runs
    ]
