"""The section's two charts: drawn from live results, labelled, theme-aware, on the page."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from examples import (
    BATCH,
    CHART_BATCH_SIZES,
    PROBE_BATCH_SIZES,
    PROBE_FEATURE_SIZES,
    WEIGHTS,
    line_scores_chart,
    multiply_count_chart,
    rounded,
    scaling_table,
    score_one_by_one,
)
from testkit.site import page


def svg_texts(svg: str) -> list[str]:
    return [text.get_text() for text in BeautifulSoup(svg, "html.parser").find_all("text")]


@pytest.fixture(scope="module")
def scores_svg() -> str:
    return line_scores_chart(BATCH, WEIGHTS)


@pytest.fixture(scope="module")
def counts_svg() -> str:
    return multiply_count_chart()


def test_scores_chart_labels_both_series_and_every_line(scores_svg):
    texts = svg_texts(scores_svg)
    assert "one by one (Python loop)" in texts
    assert "as a batch (jax jit + vmap)" in texts
    assert [f"line {n}" for n in range(1, len(BATCH) + 1)] == [t for t in texts if "line " in t]
    assert "risk score" in texts


def test_scores_chart_bars_carry_the_computed_scores_for_both_paths(scores_svg):
    labels = [f"{score:g}" for score in rounded(score_one_by_one(BATCH, WEIGHTS))]
    texts = svg_texts(scores_svg)
    # matplotlib writes the bar labels after the axis labels and before the legend
    bar_labels = texts[texts.index("risk score") + 1 : texts.index("one by one (Python loop)")]
    assert bar_labels == labels + labels


def test_scores_chart_follows_the_batch():
    batch = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [2.0, -20.0]]
    texts = svg_texts(line_scores_chart(batch, [0.5, 0.25]))
    assert "line 5" in texts
    assert "-4" in texts  # 2 * 0.5 - 20 * 0.25: a negative bar keeps its label


def test_counts_chart_has_one_labelled_line_per_feature_count(counts_svg):
    texts = svg_texts(counts_svg)
    for features in PROBE_FEATURE_SIZES:
        assert f"{features} features" in texts
    assert "the practice's probe sizes" in texts
    assert "batch size (lines)" in texts
    assert "scalar multiplications" in texts


def test_counts_chart_goes_beyond_the_probe_sizes_with_exact_counts(counts_svg):
    assert CHART_BATCH_SIZES[: len(PROBE_BATCH_SIZES)] == PROBE_BATCH_SIZES
    assert max(CHART_BATCH_SIZES) > max(PROBE_BATCH_SIZES)
    label = BeautifulSoup(counts_svg, "html.parser").svg["aria-label"]
    for features, counts in scaling_table(CHART_BATCH_SIZES, PROBE_FEATURE_SIZES).items():
        expected = ", ".join(
            f"{size} lines {count}" for size, count in zip(CHART_BATCH_SIZES, counts, strict=True)
        )
        assert f"{features} features: {expected}" in label
        assert f"{counts[-1]:,}" in svg_texts(counts_svg)


@pytest.mark.parametrize("chart", ["scores_svg", "counts_svg"])
def test_charts_take_the_page_ink_and_need_no_other_host(chart, request):
    svg = request.getfixturevalue(chart)
    root = BeautifulSoup(svg, "html.parser").svg
    assert root["role"] == "img" and root["aria-label"]
    assert "currentColor" in svg
    assert "#010203" not in svg  # the ink placeholder is always replaced
    assert "<image" not in svg and "@import" not in svg and "url(http" not in svg


def test_section_page_places_each_chart_before_its_paragraph(built_site):
    article = page(built_site).select_one("article")
    charts = article.select('div.exec-block[data-exec-id^="p5-9-1-artifact-"] svg.course-chart')
    assert len(charts) == 2
    for chart, opening in zip(charts, ["The first artifact", "The second artifact"], strict=True):
        following = chart.find_next("p")
        assert following.get_text().startswith(opening)
