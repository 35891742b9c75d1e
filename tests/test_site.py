"""The strict build: the page carries the live output and diagram; a broken block fails it."""

from __future__ import annotations

import textwrap

from examples import BATCH, backend_report, sequential_vs_parallel_flowchart

from .helpers import ROOT, SECTION_PAGE, mkdocs_build, page


def test_page_holds_the_practice_output_verbatim(built_site, expected_practice_output):
    outputs = [block.get_text() for block in page(built_site).select("div.highlight code")]
    assert expected_practice_output in outputs


def test_page_holds_the_generated_flowchart(built_site):
    diagrams = [pre.get_text() for pre in page(built_site).select("pre.mermaid")]
    assert diagrams == [sequential_vs_parallel_flowchart(BATCH)]


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
