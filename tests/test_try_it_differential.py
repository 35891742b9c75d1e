"""The Try it panel's module, proven against the `examples` package it mirrors.

The very ``try-it/practice.js`` the built site serves (with the jax-js copy it serves) runs in
Node on Wasm and in headless Chromium on every backend jax-js offers there (cpu, wasm, webgl, and
webgpu through SwiftShader), through ``tests/try_it_harness.mjs``. Its answers must equal
Python's: the practice's nine lines equal the golden output; its scores equal ``score_batch`` and
``score_settings`` within float32 rounding on batches hypothesis draws here (shapes,
magnitudes, NaN) and hands to it; multiply counts are exact; times, verdicts and rounded floats
print as ``examples.timing`` and Python print them.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from examples import data, score_batch, score_settings
from examples.timing import faster_or_slower, format_seconds, shown_ratio
from testkit.project import ROOT

HARNESS = ROOT / "tests" / "try_it_harness.mjs"
NODE_SCRIPT = ROOT / "tests" / "try_it_node.mjs"
BACKENDS = ("cpu", "wasm", "webgl", "webgpu")
BOOK = {
    "batch": [list(row) for row in data.BATCH],
    "weights": list(data.WEIGHTS),
    "probe_batch_sizes": list(data.PROBE_BATCH_SIZES),
    "probe_feature_sizes": list(data.PROBE_FEATURE_SIZES),
}

# float32 values, no subnormals (a GPU may flush them), magnitudes from tiny to 2**50 (scores
# stay within float32's range, which score_batch enforces), and NaN.
VALUES = st.one_of(
    st.floats(width=32, min_value=-(2.0**50), max_value=2.0**50, allow_subnormal=False),
    st.just(math.nan),
)


def as_text(value: float) -> str:
    """A float as the harness reads it (JSON has no NaN): Number("NaN") is NaN in JS."""
    return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(repr(value), repr(value))


@st.composite
def cases(draw):
    rows, features, count = (
        draw(st.integers(1, 24)),
        draw(st.integers(1, 12)),
        draw(st.integers(1, 4)),
    )
    batch = draw(st.lists(VALUES, min_size=rows * features, max_size=rows * features))
    weights = draw(st.lists(VALUES, min_size=count * features, max_size=count * features))
    return {"rows": rows, "features": features, "count": count, "batch": batch, "settings": weights}


@st.composite
def requests(draw):
    times = st.floats(min_value=1e-10, max_value=5e3, allow_nan=False)
    return {
        "book": BOOK,
        "cases": draw(st.lists(cases(), min_size=1, max_size=4)),
        "counts": draw(
            st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**30)), max_size=5)
        ),
        # and exact ties (1.125 s to three digits, 1.25x to two), which Python rounds to even
        "seconds": [*draw(st.lists(times, max_size=8)), 1.125, 1.375, 0.5],
        "pairs": [
            *draw(st.lists(st.tuples(times, times), max_size=8)),
            *((2.5, 2.0), (2.0, 2.5), (250e-6, 200e-6), (1.75, 1.0), (1.0, 1.75)),
        ],
        # and exact ties, which Python rounds to even
        "floats": [
            *draw(st.lists(st.floats(width=32, allow_nan=False), max_size=8)),
            *(0.0625, 0.1875, -0.0625, 1234.5, 1e20, 1e-5),
        ],
    }


def for_harness(request: dict) -> dict:
    def texts(values):
        return [as_text(float(v)) for v in values]

    return {
        **request,
        "cases": [
            {**c, "batch": texts(c["batch"]), "settings": texts(c["settings"])}
            for c in request["cases"]
        ],
        "seconds": texts(request["seconds"]),
        "pairs": [texts(pair) for pair in request["pairs"]],
        "floats": texts(request["floats"]),
    }


def assert_close(got: list[str], expected: np.ndarray, batch, weights, features: int, what: str):
    """Equal within float32 rounding: |a - b| <= F 2^-23 sum|x w| + F 2^-126, or both NaN."""
    got_values = np.array([float(v) for v in got])
    products = np.abs(np.asarray(batch, dtype=np.float64) * np.asarray(weights, dtype=np.float64))
    bound = features * 2.0**-23 * np.nansum(products, axis=-1) + features * 2.0**-126
    expected = np.asarray(expected, dtype=np.float64)
    nan = np.isnan(expected)
    assert (np.isnan(got_values) == nan).all(), f"{what}: NaN at {got_values} against {expected}"
    difference = np.abs(got_values[~nan] - expected[~nan])
    assert (difference <= bound[~nan]).all(), f"{what}: {got_values} against {expected}"


def check(answer: dict, request: dict, golden: str) -> None:
    assert "absent" not in answer, answer
    assert "\n".join(answer["lines"]) + "\n" == golden
    for c, got in zip(request["cases"], answer["cases"], strict=True):
        rows, features, count = c["rows"], c["features"], c["count"]
        batch = np.array(c["batch"], dtype=np.float32).reshape(rows, features)
        weight_sets = np.array(c["settings"], dtype=np.float32).reshape(count, features)
        shape = f"{rows} x {features}, {count} settings"
        assert_close(
            got["batch"],
            score_batch(batch, weight_sets[0]),
            batch,
            weight_sets[0],
            features,
            f"score_batch {shape}",
        )
        expected = np.asarray(score_settings(batch, weight_sets))  # rows x settings
        table = np.array(got["settings"], dtype=object).reshape(rows, count)
        for k in range(count):
            assert_close(
                list(table[:, k]),
                expected[:, k],
                batch,
                weight_sets[k],
                features,
                f"setting {k} {shape}",
            )
        assert got["multiplies"] == str(rows * features * count)
    assert answer["multiplies"] == [str(r * f) for r, f in request["counts"]]
    assert answer["seconds"] == [format_seconds(s) for s in request["seconds"]]
    assert answer["verdicts"] == [faster_or_slower(shown_ratio(a, b)) for a, b in request["pairs"]]
    assert answer["rounded"] == [repr(round(float(x), 3)) for x in request["floats"]]


QUICK = settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="session")
def node() -> list[str]:
    found = shutil.which("node")
    assert found, "node is needed (it installs node_modules)"
    major = int(
        subprocess.run([found, "--version"], capture_output=True, text=True)
        .stdout[1:]
        .split(".")[0]
    )
    # The site's modules are ES modules in .js files with no package.json: Node 22.7+ sees it.
    return [found, *(["--experimental-detect-module"] if major < 22 else [])]


@QUICK
@given(request=requests())
def test_node_on_wasm_prints_the_book_and_scores_as_examples(
    request, built_site, node, expected_practice_output
):
    result = subprocess.run(
        [*node, str(NODE_SCRIPT), str(built_site)],
        input=json.dumps(for_harness(request)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    check(json.loads(result.stdout), request, expected_practice_output)


# A clock that moves in 0.1 ms steps, as a browser's, and a path whose first timed group is slow
# (a JavaScript loop's compile) and whose calls then take 5 µs: under one step of the clock.
COARSE_CLOCK_TIMING = """
import { medianSeconds } from "%s";
let virtual = 0;
const now = () => Math.floor(virtual / 0.1) * 0.1;
let calls = 0;
const once = () => { virtual += ++calls <= 2 ? 6 : 0.005; };
console.log(JSON.stringify(await medianSeconds(once, { minSampleMs: 5, now })));
"""


def test_a_path_quicker_once_compiled_is_still_timed_above_the_clock_s_step(node, tmp_path):
    """The panel's timing (try-it/timing.js) checks its group size on the timed samples: a
    warm-up slowed by a compile does not leave one call per sample, read as 0 s by the clock."""
    timing_js = ROOT / "docs" / "assets" / "javascripts" / "try-it" / "timing.js"
    script = tmp_path / "coarse_clock.mjs"
    script.write_text(COARSE_CLOCK_TIMING % timing_js.as_uri(), encoding="utf-8")
    result = subprocess.run(
        [*node, str(script)], capture_output=True, text=True, timeout=60, encoding="utf-8"
    )
    assert result.returncode == 0, result.stderr
    timed = json.loads(result.stdout)
    assert timed["calls"] * 0.005 >= 2.5  # each sample at least half the 5 ms asked
    assert timed["seconds"] == pytest.approx(0.005e-3, rel=0.05)


@pytest.fixture(scope="session")
def webgpu_browser(browser):
    """A second Chromium from the same playwright, with WebGPU through SwiftShader."""
    from build_support.browser import LAUNCH_ARGS, WEBGPU_ARGS, find

    second = browser.browser_type.launch(
        executable_path=str(find().path), args=[*LAUNCH_ARGS, *WEBGPU_ARGS]
    )
    yield second
    second.close()


def ask_page(chosen, served_site: str, request: dict, device: str) -> dict:
    page = chosen.new_page()
    try:
        harness = f"{served_site}try-it-harness.mjs"  # the same host as the site: no other
        page.route(
            harness, lambda route: route.fulfill(path=HARNESS, content_type="text/javascript")
        )
        page.goto(served_site, wait_until="domcontentloaded")
        return page.evaluate(
            """async ([practiceUrl, harnessUrl, request, device]) => {
                const practice = await import(practiceUrl);
                const { answer } = await import(harnessUrl);
                return answer(practice, request, device);
            }""",
            [f"{served_site}assets/javascripts/try-it/practice.js", harness, request, device],
        )
    finally:
        page.close()


@pytest.mark.parametrize("device", BACKENDS)
def test_chromium_prints_the_book_and_scores_as_examples_on(
    device, browser, served_site, expected_practice_output, request
):
    chosen = request.getfixturevalue("webgpu_browser") if device == "webgpu" else browser
    probe = ask_page(
        chosen,
        served_site,
        for_harness(
            {"book": BOOK, "cases": [], "counts": [], "seconds": [], "pairs": [], "floats": []}
        ),
        device,
    )
    if "absent" in probe:
        pytest.skip(probe["absent"])
    print(f"{device}: {probe['adapter'] or 'no adapter name'}")

    @QUICK
    @given(drawn=requests())
    def differential(drawn):
        check(
            ask_page(chosen, served_site, for_harness(drawn), device),
            drawn,
            expected_practice_output,
        )

    differential()
