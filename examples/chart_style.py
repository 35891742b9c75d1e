"""How every chart looks and reaches the page: matplotlib's settings, shared log-log axes, and
the figure turned into inline SVG (the charts themselves are ``charts.py``).

Inline SVG needs no script and no other host, and it follows the page's light or dark
palette: every "ink" colour (text, axes, ticks) is drawn as a placeholder colour and then
replaced by ``currentColor``, so the chart takes the colour of the text around it.
Series colours are mid-tone and read on both backgrounds.
"""

from __future__ import annotations

import hashlib
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


def log_log_axes(ax, x_ticks, x_label, y_base: int) -> None:
    """Both axes logarithmic, with plain-text ticks: ``x_ticks`` labelled by ``x_label``, and
    a tick every ``y_base``-fold in time, labelled in seconds (log axes' default math-text
    labels cost most of a chart's drawing time)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    from .timing import format_seconds

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(x_ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: x_label(round(x))))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_locator(LogLocator(base=y_base))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: format_seconds(y)))
    ax.yaxis.set_minor_locator(NullLocator())


def pyplot():
    """``matplotlib.pyplot``, or an ImportError that says which extra installs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        from .about import install_line

        raise ImportError(
            "the charts draw with matplotlib, which is not installed here: it comes with this "
            f"package's charts extra: {install_line('charts')}"
        ) from error
    return plt


@contextmanager
def chart_style():
    """Matplotlib settings for every chart on the site."""
    pyplot()  # matplotlib, or an error that names the extra
    import matplotlib

    matplotlib.use("Agg")
    from cycler import cycler

    style = {**_STYLE, "axes.prop_cycle": cycler(color=SERIES_COLOURS)}
    with matplotlib.rc_context(style):
        yield


# matplotlib's default RDF <metadata> (Dublin Core, Creative Commons) is not allowed in HTML.
_NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}
_ID = re.compile(r' id="([^"]+)"')
_REFERENCE = re.compile(r'(?:url\(#|href="#)([^)"]+)')


def _ids_unique_to(svg: str, prefix: str) -> str:
    """``svg`` with matplotlib's ids made unique on a page that holds several charts.

    matplotlib numbers ids per figure (``xtick_7``, ``patch_6``, clip paths, glyphs), so two
    inline figures repeat them. Ids nothing refers to are dropped; the rest get ``prefix``.
    """
    referenced = set(_REFERENCE.findall(svg))

    def rename(match: re.Match[str]) -> str:
        return f' id="{prefix}-{match[1]}"' if match[1] in referenced else ""

    svg = _ID.sub(rename, svg)
    return _REFERENCE.sub(lambda m: m[0].replace(f"#{m[1]}", f"#{prefix}-{m[1]}"), svg)


_GROUP_TAG = re.compile(r"<g(?:\s[^>]*)?>|</g>")


def _without_bare_groups(svg: str) -> str:
    """``svg`` without the ``<g>`` wrappers that carry no attribute (once their ids are gone).

    matplotlib wraps every artist in a group named by its id: about 100 groups a chart, two
    thirds of its elements, which a phone styles again at every whole-page style recalculation.
    A group with no attribute changes nothing about what it holds, so it goes; groups with a
    transform, clip path or style stay.
    """
    kept: list[bool] = []  # per open group: whether its tags stay

    def tag(match: re.Match[str]) -> str:
        if match[0] == "</g>":
            return match[0] if kept.pop() else ""
        kept.append(match[0] != "<g>")
        return match[0] if kept[-1] else ""

    svg = _GROUP_TAG.sub(tag, svg)
    return re.sub(r"\n\s*\n", "\n", svg)


# matplotlib writes its stroke defaults as a stylesheet: <defs><style>*{...}</style></defs>.
_DEFAULTS_SHEET = re.compile(
    r'\s*<defs>\s*<style type="text/css">\*\{(?P<declarations>[^}]*)\}</style>\s*</defs>'
)


def _defaults_on_root(svg: str) -> str:
    """``svg`` with matplotlib's ``*{...}`` stylesheet turned into attributes of its root.

    Inline in a page, that ``<style>`` is a stylesheet for the whole page: every element of the
    page matches ``*``, and each chart the parser meets restyles the whole document again
    (benchmarks/main_thread.py: "elements restyled"). On the root, the same strokes are
    inherited by all the chart holds; matplotlib sets its own strokes only on the shapes.
    """
    match = _DEFAULTS_SHEET.search(svg)
    if match is None:
        return svg
    attributes = "".join(
        f' {name.strip()}="{value.strip()}"'
        for name, value in (
            declaration.split(":", 1)
            for declaration in match["declarations"].split(";")
            if declaration.strip()
        )
    )
    svg = svg[: match.start()] + svg[match.end() :]
    return svg.replace("<svg", f"<svg{attributes}", 1)


def inline_svg(figure: Figure, title: str) -> str:
    """Return ``figure`` as an SVG element to print into a page, with an accessible title."""
    plt = pyplot()

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata=_NO_METADATA)
    plt.close(figure)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype
    # The same chart always gets the same ids; two different charts, different ones.
    digest = hashlib.sha1(f"{title}\n{svg}".encode(), usedforsecurity=False).hexdigest()
    svg = _without_bare_groups(_ids_unique_to(svg, f"chart-{digest[:8]}"))
    svg = _defaults_on_root(svg)
    svg = svg.replace(_INK, "currentColor")
    # Scale with the column; keep the aspect ratio from the viewBox.
    svg = re.sub(r'<svg([^>]*?) width="[^"]+" height="[^"]+"', r"<svg\1", svg, count=1)
    svg = svg.replace("<svg", f'<svg role="img" aria-label="{title}" class="course-chart"', 1)
    return svg
