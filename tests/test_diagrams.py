"""The flowchart is derived from the batch: the manuscript's diagram for its 4-line batch."""

from __future__ import annotations

import re

import numpy as np
import pytest

from examples import BATCH, sequential_vs_parallel_flowchart
from examples.diagrams import MAX_GROUPED_SAMPLES
from testkit.project import GOLDEN

ACCESSIBILITY = re.compile(r"^  acc(Title|Descr): ")


def test_manuscript_batch_gives_manuscript_diagram_plus_its_accessible_name():
    # The manuscript's lines, unchanged and in order; the site adds only the accessible title
    # and description (for screen readers), right after the first line.
    lines = sequential_vs_parallel_flowchart(BATCH).splitlines()
    manuscript = (GOLDEN / "flowchart.mmd").read_text().rstrip("\n").splitlines()
    assert [line for line in lines if not ACCESSIBILITY.match(line)] == manuscript
    assert [line.split(":")[0].strip() for line in lines[1:3]] == ["accTitle", "accDescr"]


def test_accessible_description_names_every_node_of_both_paths():
    lines = sequential_vs_parallel_flowchart(BATCH).splitlines()
    assert lines[1] == "  accTitle: Sequential processing against parallel processing"
    assert lines[2] == (
        "  accDescr: Two paths for the same work. CPU-like sequential path, one step after "
        "another: Sample 1, Compute, Sample 2, Compute again, Sample 3 next. GPU-like parallel "
        "path: Sample 1, Sample 2, Sample 3 and Sample 4 are grouped at once, all enter the "
        "same matrix operation, and the outputs come out together."
    )


@pytest.mark.parametrize("rows", [1, 2, 5, 4000])
def test_accessible_description_follows_the_batch(rows):
    source = sequential_vs_parallel_flowchart(np.ones((rows, 3)))
    description = next(line for line in source.splitlines() if "accDescr:" in line)
    for label in sample_nodes(source):
        assert label in description
    assert ("Sample 2" in description) == (rows >= 2)


def sample_nodes(source: str) -> list[str]:
    inputs = source.split('subgraph INPUTS["Samples grouped at once"]')[1].split("    end")[0]
    return re.findall(r'A\d+\["([^"]+)"\]', inputs)


@pytest.mark.parametrize("rows", [1, 2, 3, 5, 8])
def test_parallel_path_has_one_node_per_sample(rows):
    source = sequential_vs_parallel_flowchart(np.ones((rows, 3)))
    assert sample_nodes(source) == [f"Sample {i}" for i in range(1, rows + 1)]
    assert source.count("--> P") == rows


def test_large_batch_groups_the_tail():
    source = sequential_vs_parallel_flowchart(np.ones((4000, 3)))
    labels = sample_nodes(source)
    assert len(labels) == MAX_GROUPED_SAMPLES
    assert labels[-1] == f"Samples {MAX_GROUPED_SAMPLES} to 4000"


def test_single_row_has_no_second_sample_on_the_sequential_path():
    source = sequential_vs_parallel_flowchart([[1.0, 2.0]])
    assert "Sample 2" not in source
    assert 'A1["Sample 1"] --> B1["Compute"]' in source


def test_flowchart_refuses_a_flat_batch():
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        sequential_vs_parallel_flowchart([1.0, 2.0, 3.0])
