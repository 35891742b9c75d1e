"""Every function ``examples`` exports checks its arguments and says what was wrong in its own
words: a wrong argument raises TypeError or ValueError from ``examples/`` itself, never an
error from inside jax, numpy or matplotlib (the innermost frame of the traceback is read).
A chart without matplotlib names the ``charts`` extra to install."""

from __future__ import annotations

import inspect
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

import examples
from examples import BATCH, WEIGHTS, row_mesh
from examples.sweep import LayoutCheck, SettingsSweep
from examples.turnaround import Turnaround

PACKAGE = Path(examples.__file__).parent

NO_SWEEP = SettingsSweep(
    rows=(),
    layout=LayoutCheck(4, 1, 1e-3, 1e-3, 1e-3),
    program=(),
    settings_first_program=(),
    label="",
    cost_s=0.0,
)

# For each exported function: calls with a wrong argument, as a learner might make them.
BAD_CALLS: dict[str, list[tuple[tuple, dict]]] = {
    "compare_with_recorded": [(("table", "recording"), {})],
    "gather_scores": [(("scores",), {}), ((np.ones(3),), {})],
    "latest_recorded": [((42,), {}), ((PACKAGE, 7), {})],
    "latest_recorded_sweep": [((42,), {})],
    "layout_lines": [((np.ones((4, 3)),), {}), (("rows",), {})],
    "line_scores_chart": [(("batch", WEIGHTS), {}), ((BATCH, [1.0, 2.0]), {})],
    "load_recorded": [((42,), {}), ((PACKAGE / "__init__.py",), {})],
    "measure_settings_sweep": [
        ((), {"settings": ()}),
        ((), {"settings": (0,)}),
        ((), {"rows": ()}),
        ((), {"rows": "big"}),
        ((), {"rows": (4,), "settings": (1,), "features": 0}),
        ((), {"rows": (4,), "settings": (1,), "seed": "zero"}),
    ],
    "measure_turnaround": [
        (("big",), {}),
        (({},), {}),
        (({3: ()},), {}),
        (({0: (4,)},), {}),
        (({3: (0,)},), {}),
        (({3: (4,)},), {"loop_budget_s": -1.0}),
        (({3: (4,)},), {"loop_budget_s": "long"}),
    ],
    "multiply_count_chart": [(("sizes",), {}), (((4,), (-3,)), {})],
    "rounded": [((np.ones((2, 2)),), {}), (("0.35",), {}), ((0.35,), {})],
    "row_mesh": [(("cpu",), {}), (([],), {}), (([1, 2],), {})],
    "scalar_multiply_count": [(("3", 4), {}), ((-1, 3), {})],
    "scaling_table": [(("ab", [3]), {}), ((5, [3]), {})],
    "score_batch": [(([[1, 2]], [1.0]), {})],
    "score_one_by_one": [(([[1, 2]], [1.0]), {})],
    "score_settings": [(([[1, 2]], [1.0, 2.0]), {})],
    "score_sharded": [(([[True, False]], [1.0, 2.0]), {})],
    "sequential_vs_parallel_flowchart": [(("batch",), {}), ((np.ones(3),), {})],
    "settings_sweep_chart": [(("sweep",), {}), ((NO_SWEEP,), {})],
    "shard_rows": [((np.ones(3), None), {}), (([[1, 2, 3]], "mesh"), {})],
    "sweep_findings": [(("sweep",), {}), ((NO_SWEEP,), {})],
    "sweep_markdown": [(("sweep",), {})],
    "turnaround_chart": [(("table",), {}), ((Turnaround((), "", 0.0),), {})],
    "turnaround_findings": [(("table",), {}), ((Turnaround((), "", 0.0),), {})],
    "turnaround_markdown": [(("table",), {})],
}


def exported_functions() -> list[str]:
    return [
        name
        for name in examples.__all__
        if inspect.isfunction(getattr(examples, name))
        and inspect.signature(getattr(examples, name)).parameters
    ]


def test_every_exported_function_with_arguments_has_bad_calls_here():
    assert sorted(exported_functions()) == sorted(BAD_CALLS)


def cases():
    for name, calls in BAD_CALLS.items():
        for number, (args, kwargs) in enumerate(calls):
            yield pytest.param(name, args, kwargs, id=f"{name}-{number}")


@pytest.mark.parametrize(("name", "args", "kwargs"), list(cases()))
def test_a_wrong_argument_is_refused_in_the_courses_own_words(name, args, kwargs):
    if name == "shard_rows" and args[1] is None:
        args = (args[0], row_mesh())
    with pytest.raises((TypeError, ValueError)) as refused:
        getattr(examples, name)(*args, **kwargs)
    innermost = traceback.extract_tb(refused.tb)[-1]
    assert Path(innermost.filename).is_relative_to(PACKAGE), (
        f"{name} let {refused.type.__name__} out of {innermost.filename}:{innermost.lineno}: "
        f"{refused.value}"
    )
    # in its own words: the message names the argument that was wrong
    parameters = inspect.signature(getattr(examples, name)).parameters
    named = [p for p in parameters if p in str(refused.value)]
    assert named, f"{name}: {refused.value} names none of {list(parameters)}"


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "message"),
    [  # the refusals issue 33 found answered with internals
        ("measure_settings_sweep", (), {"settings": ()}, "settings must hold at least one size"),
        (
            "measure_settings_sweep",
            (),
            {"settings": (0,)},
            r"settings\[0\] must be an integer >= 1",
        ),
        ("measure_turnaround", ("big",), {}, "sizes must be a non-empty dict"),
        ("rounded", (np.ones((2, 2)),), {}, r"scores must be 1-D \(one score per row\), got 2-D"),
        ("layout_lines", (np.ones((4, 3)),), {}, "layout_lines needs a jax array"),
    ],
)
def test_the_refusals_issue_33_found(name, args, kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        getattr(examples, name)(*args, **kwargs)


CHARTS = [
    ("line_scores_chart", (BATCH, WEIGHTS)),
    ("multiply_count_chart", ()),
    ("turnaround_chart", (Turnaround((), "", 0.0),)),
    ("settings_sweep_chart", (NO_SWEEP,)),
]


@pytest.mark.parametrize(("name", "args"), CHARTS, ids=[name for name, _ in CHARTS])
def test_a_chart_without_matplotlib_names_the_charts_extra(name, args, monkeypatch):
    for module in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    with pytest.raises(ImportError, match=r"pip install \"dl-course-p5-9-1\[charts\]"):
        getattr(examples, name)(*args)


def test_shard_rows_takes_nested_lists_and_integers_as_floats():
    # it raised "'list' object has no attribute 'shape'", and would have wrapped 3e9 to int32
    sharded = examples.shard_rows([[1, 2, 3], [3_000_000_000, 0, 0]], row_mesh())
    assert sharded.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(sharded)[:2, 0], [1.0, 3e9])
