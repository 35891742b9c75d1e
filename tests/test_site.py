"""The strict build: the page carries the live output and diagram; a broken block fails it."""

from __future__ import annotations

import re
import textwrap

from examples import BATCH, backend_report, sequential_vs_parallel_flowchart
from testkit.build import mkdocs_build
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page


def test_page_holds_the_practice_output_verbatim(built_site, expected_practice_output):
    outputs = [block.get_text() for block in page(built_site).select("div.highlight code")]
    assert expected_practice_output in outputs


def test_page_holds_the_generated_flowchart_drawn_at_build_time(built_site):
    # Drawn by mermaid when the site is built (hooks/mermaid_svg.py): an inline SVG, no source
    # left for the browser to draw, and every node and the accessible name from the live code.
    soup = page(built_site)
    assert soup.select("pre.mermaid") == []
    (svg,) = soup.select("div.course-diagram > svg")
    source = sequential_vs_parallel_flowchart(BATCH)
    nodes = re.findall(r'\b(?!CPU|GPU|INPUTS)\w+\["([^"]+)"\]', source)
    assert sorted(label.get_text() for label in svg.select("g.node .nodeLabel")) == sorted(nodes)
    clusters = re.findall(r'subgraph \w+\["([^"]+)"\]', source)
    assert sorted(label.get_text() for label in svg.select("g.cluster-label")) == sorted(clusters)
    accessible = dict(re.findall(r"^  (accTitle|accDescr): (.+)$", source, re.MULTILINE))
    assert svg.select_one(f"#{svg['aria-labelledby']}").get_text() == accessible["accTitle"]
    assert svg.select_one(f"#{svg['aria-describedby']}").get_text() == accessible["accDescr"]


def test_diagram_ids_are_its_own(built_site):
    # Every id inside the drawing holds the SVG's own id: nothing else on the page clashes.
    soup = page(built_site)
    svg = soup.select_one("div.course-diagram > svg")
    inside = [element["id"] for element in svg.select("[id]")]
    assert inside and all(svg["id"] in name for name in inside)
    elsewhere = [e["id"] for e in soup.select("[id]") if e is not svg and e not in svg.descendants]
    assert not {*inside, svg["id"]} & set(elsewhere)


def test_page_labels_the_jax_output_with_its_backend(built_site):
    text = page(built_site).get_text()
    assert backend_report().label() in text


def test_page_shows_section_id_and_version_from_its_metadata(built_site):
    meta = page(built_site).select_one("p.section-meta")
    assert meta is not None
    assert meta.get_text() == "Section ID: P5-9.1 Version: v2026.07.20"


def test_page_reproduces_every_manuscript_heading(built_site):
    headings = [h.get_text().rstrip("¶") for h in page(built_site).select("h1, h2, h3")]
    for heading in [
        "P5-9.1 GPUs And Parallel Processing",
        "The Question That Connects GPUs To Parallel Processing",
        "Standards For Repeated Operations And Compute Resources",
        "Why Does Deep Learning Require So Much Computation",
        "How Should We Distinguish CPUs And GPUs At The Introductory Level",
        "What Is Parallel Processing",
        "Why Do Deep Learning And Parallel Processing Fit Well Together",
        "Why Does The GPU Look Like A Turning Point In History",
        "Why Is AlexNet Mentioned So Often",
        "Cases And Examples",
        "Case. Calculating The Same Risk Score One By One Versus Grouping It As A Batch",
        "Practice And Example",
        "Checklist",
        "Sources And References",
    ]:
        assert heading in headings


def test_listing_has_real_line_numbers(built_site):
    listing = page(built_site).select_one("table.highlighttable")
    assert listing is not None, "the practice listing is shown without line numbers"
    numbers = listing.select_one("td.linenos").get_text().split()
    code = listing.select_one("td.code").get_text()
    assert numbers == [str(n) for n in range(1, len(code.rstrip("\n").splitlines()) + 1)]


def test_no_traceback_or_build_path_is_published(built_site):
    for html in built_site.rglob("*.html"):
        text = html.read_text()
        assert "Traceback (most recent call last)" not in text, html
        assert str(ROOT) not in text, html


FAILING_PAGE = """\
# Broken

```python exec="on" id="deliberately-broken-block"
raise RuntimeError("this example is broken")
```
"""


def test_raising_block_fails_the_strict_build_and_names_the_block(docs_copy):
    section = docs_copy / "docs" / f"{SECTION_PAGE}.md"
    section.write_text(section.read_text() + "\n" + FAILING_PAGE.replace("# Broken", "## Broken"))
    result = mkdocs_build(docs_copy / "mkdocs.yml", docs_copy / "site")
    assert result.returncode != 0
    assert "'deliberately-broken-block'" in result.stderr
    assert "this example is broken" in result.stderr


def test_missing_snippet_file_fails_the_strict_build(docs_copy):
    missing = textwrap.dedent("""
        ```python exec="on" source="above" id="missing-snippet"
        --8<-- "docs/snippets/no-such-file.py"
        ```
    """)
    section = docs_copy / "docs" / f"{SECTION_PAGE}.md"
    section.write_text(section.read_text() + missing)
    result = mkdocs_build(docs_copy / "mkdocs.yml", docs_copy / "site")
    assert result.returncode != 0
    assert "no-such-file.py" in result.stderr
