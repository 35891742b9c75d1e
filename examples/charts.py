"""Charts drawn with matplotlib and embedded in pages as inline SVG.

Inline SVG needs no script and no other host, and it follows the page's light or dark
palette: every "ink" colour (text, axes, ticks) is drawn as a placeholder colour and then
replaced by ``currentColor``, so the chart takes the colour of the text around it.
Series colours are mid-tone and read on both backgrounds.
"""

from __future__ import annotations

import io
import re
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_INK = "#010203"  # placeholder, swapped for currentColor in the SVG
SERIES_COLOURS = ("#1f77b4", "#e4572e", "#2a9d8f", "#9c6ade")

_STYLE = {
    "svg.fonttype": "none",  # keep text as text: it uses the page's font and stays searchable
    "svg.hashsalt": "course-site",  # stable ids, so two builds write the same SVG
    "font.family": "sans-serif",
    "font.size": 11,
    "text.color": _INK,
    "axes.edgecolor": _INK,
    "axes.labelcolor": _INK,
    "xtick.color": _INK,
    "ytick.color": _INK,
    "axes.facecolor": "none",
    "figure.facecolor": "none",
    "savefig.facecolor": "none",
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


@contextmanager
def chart_style():
    """Matplotlib settings for every chart on the site."""
    import matplotlib

    matplotlib.use("Agg")
    from cycler import cycler

    style = {**_STYLE, "axes.prop_cycle": cycler(color=SERIES_COLOURS)}
    with matplotlib.rc_context(style):
        yield


def inline_svg(figure: Figure, title: str) -> str:
    """Return ``figure`` as an SVG element to print into a page, with an accessible title."""
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype
    svg = svg.replace(_INK, "currentColor")
    # Scale with the column; keep the aspect ratio from the viewBox.
    svg = re.sub(r'<svg([^>]*?) width="[^"]+" height="[^"]+"', r"<svg\1", svg, count=1)
    svg = svg.replace("<svg", f'<svg role="img" aria-label="{title}" class="course-chart"', 1)
    return svg
