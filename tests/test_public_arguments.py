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


# A wrong value for a parameter, by its annotation: what an export with plain annotations is
# called with when BAD_CALLS lists nothing for it (a new section's first functions).
WRONG_FOR = {"int": "three", "float": "three", "str": 3, "bool": "yes"}


def derived_bad_call(name: str) -> tuple[tuple, dict] | None:
    """A call of export ``name`` with a wrong value for each required parameter, from their
    annotations (``int``: a word), or None where one has no annotation ``WRONG_FOR`` knows."""
    required = [
        parameter
        for parameter in inspect.signature(getattr(examples, name)).parameters.values()
        if parameter.default is parameter.empty
        and parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ]
    named = [getattr(p.annotation, "__name__", p.annotation) for p in required]  # int or "int"
    wrong = [WRONG_FOR.get(name) if isinstance(name, str) else None for name in named]
    if not required or None in wrong:
        return None
    return tuple(wrong), {}


def bad_calls() -> dict[str, list[tuple[tuple, dict]]]:
    """Every exported function with arguments (the walk over ``examples.__all__``), with its
    wrong calls: BAD_CALLS's, else the one its annotations give."""
    found = {}
    for name in exported_functions():
        derived = derived_bad_call(name)
        found[name] = BAD_CALLS.get(name) or ([derived] if derived else [])
    return found


def test_every_exported_function_with_arguments_has_wrong_calls():
    unchecked = [name for name, calls in bad_calls().items() if not calls]
    assert unchecked == [], (
        f"examples exports {', '.join(unchecked)} with no wrong call to try: annotate each "
        "required parameter int, float, str or bool, or add a line like "
        f"'\"{unchecked[0] if unchecked else ''}\": [((<wrong arguments>,), {{}})],' to "
        "BAD_CALLS in tests/test_public_arguments.py"
    )
    assert set(BAD_CALLS) <= set(exported_functions()), "BAD_CALLS names a name not exported"


def cases():
    for name, calls in bad_calls().items():
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
    with pytest.raises(ImportError, match=r"pip install \"dl-course\[charts\]"):
        getattr(examples, name)(*args)


def test_shard_rows_takes_nested_lists_and_integers_as_floats():
    # it raised "'list' object has no attribute 'shape'", and would have wrapped 3e9 to int32
    sharded = examples.shard_rows([[1, 2, 3], [3_000_000_000, 0, 0]], row_mesh())
    assert sharded.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(sharded)[:2, 0], [1.0, 3e9])
