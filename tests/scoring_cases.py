"""Cases shared by the tests of every scoring path (one device and 8 forced devices)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from examples import BATCH, WEIGHTS
from testkit.project import ROOT


def float32_tolerance(batch: np.ndarray, weights: np.ndarray) -> np.ndarray:
    # Summing F float32 products can lose about F * eps of the magnitude of the terms.
    magnitude = np.abs(batch) @ np.abs(weights)
    return 4 * batch.shape[1] * np.finfo(np.float32).eps * magnitude + 1e-6


# (batch, weights, error, message): each kind of malformed input and what it must say.
MALFORMED = [
    (
        [1.0, 2.0, 3.0],
        WEIGHTS,
        ValueError,
        r"batch must be 2-D \(rows x features\), got 1-D with shape \(3,\)",
    ),
    (np.ones((2, 3, 3)), WEIGHTS, ValueError, r"got 3-D with shape \(2, 3, 3\)"),
    ([[1.0, 2.0], [3.0]], [1.0, 2.0], ValueError, r"batch must be rectangular"),
    (np.ones((0, 3)), WEIGHTS, ValueError, r"at least one row and one feature, got shape \(0, 3\)"),
    (
        BATCH,
        [0.4, 0.8],
        ValueError,
        r"batch has shape \(4, 3\), so 3 weights were expected, got shape \(2,\)",
    ),
    (BATCH, [[0.4, 0.8, -0.3]], ValueError, r"weights must be 1-D .* got 2-D with shape \(1, 3\)"),
    (BATCH, 0.5, ValueError, r"weights must be 1-D .* got 0-D with shape \(\)"),
    (np.ones((4, 1)), WEIGHTS, ValueError, r"batch has shape \(4, 1\), so 1 weights were expected"),
    ([["a", "b", "c"]], WEIGHTS, TypeError, r"batch must hold real numbers .* dtype <U1"),
    ([[True, False, True]], WEIGHTS, TypeError, r"batch must hold real numbers .* dtype bool"),
    ([[1 + 2j, 0, 0]], WEIGHTS, TypeError, r"batch must hold real numbers .* dtype complex128"),
    ([[1.0, None, 2.0]], WEIGHTS, TypeError, r"batch must be rectangular and hold only numbers"),
    ("abc", WEIGHTS, TypeError, r"batch must be an array or nested list of numbers, got str"),
    (BATCH, ["a", "b", "c"], TypeError, r"weights must hold real numbers"),
]


def passes_in_a_process_with(environment: dict[str, str], *pytest_args: str) -> None:
    """Run pytest on ``pytest_args`` in a new process with ``environment`` added (JAX reads its
    settings when it is imported: device count, x64); every test selected must pass."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
        cwd=ROOT,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "skipped" not in result.stdout, result.stdout
