"""Glossary, tooltips, course map and the version: what the reader uses to find their way."""

from __future__ import annotations

import json
import re

import pytest
from mkdocs.exceptions import PluginError

from build_support import section
from testkit.author import section_version
from testkit.hooks import load_hook
from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page, site_prefix

first_marks = load_hook("glossary_marks").first_marks
course_map_hook = load_hook("course_map")

ABBREVIATIONS = ROOT / "docs" / "includes" / "abbreviations.md"
_ABBREVIATION = re.compile(r"^\*\[(?P<term>[^\]]+)\]: (?P<text>.+)$", re.MULTILINE)


def tooltips() -> dict[str, str]:
    return {m["term"]: m["text"] for m in _ABBREVIATION.finditer(ABBREVIATIONS.read_text())}


def test_glossary_has_an_entry_for_every_tooltip_and_the_terms_the_section_needs(built_site):
    entries = {h2["id"]: h2.get_text().rstrip("¶") for h2 in page(built_site, "glossary")("h2")}
    needed = {"GPU", "parallel processing", "CPU", "batch", "matrix multiplication", "AlexNet"}
    assert needed <= set(tooltips())
    for term in tooltips():
        slug = term.lower().replace(" ", "-")
        assert entries.get(slug, "").lower() == term.lower(), f"no glossary entry for {term}"


def test_section_terms_carry_their_tooltip(built_site):
    article = page(built_site, SECTION_PAGE).select_one("article")
    abbrs = {abbr.get_text(): abbr["title"] for abbr in article("abbr")}
    for term in ("GPU", "parallel processing", "CPU", "AlexNet"):
        assert abbrs[term] == tooltips()[term]


def test_reread_sentence_links_both_glossary_entries(built_site):
    sentence = next(
        p
        for p in page(built_site, SECTION_PAGE).select("article p")
        if p.get_text().startswith("When the story of computational resources")
    )
    assert [a["href"] for a in sentence("a")] == [
        "../glossary/#gpu",
        "../glossary/#parallel-processing",
    ]


def test_abbreviations_file_is_not_a_page(built_site):
    assert not (built_site / "includes").exists()


def test_course_map_says_published_exactly_for_the_sections_that_have_a_page(built_site):
    """The states are read from the course model (hooks/course_map.py), never written by hand."""
    course_map = page(built_site, "course-map")
    listed = course_map_hook._STATUS.findall((ROOT / "docs" / "course-map.md").read_text())
    sections = {one.id: one for one in section.sections()}
    assert set(sections) <= set(listed)
    assert set(listed) - set(sections), "no coming section listed to check"
    for section_id in listed:
        said = course_map.find(id=section.slug(section_id)).find_next("p")
        if section_id in sections:
            assert said.get_text().startswith(f"Published: read {section_id}."), section_id
            assert said.a["href"] == f"../{sections[section_id].name}/"
        else:
            assert said.get_text().startswith("Not yet published."), section_id
    part = course_map.find(id="part-2").find_next("p")  # a part, not a section: as written
    assert part.get_text().startswith("Not yet published.")


def test_a_section_the_course_map_leaves_out_fails_the_build_saying_what_to_add():
    new = section.Section("P5-9.2", "v1", "P5-9.2 Batches", "p5-9-2-batches.md")
    text = "#### P5-9.2 { #p5-9-2 }\n\n{{ course.status P5-9.2 }} Next.\n"
    assert course_map_hook.with_states(text, [new], "course-map.md") == (
        "#### P5-9.2 { #p5-9-2 }\n\n**Published:** [read P5-9.2](p5-9-2-batches.md). Next.\n"
    )
    assert "**Not yet published.** Next." in course_map_hook.with_states(text, [], "x.md")
    other = section.Section("P5-9.3", "v1", "P5-9.3 More", "p5-9-3-more.md")
    with pytest.raises(PluginError, match=r"no entry for section P5-9.3: add .* docs/course-map"):
        course_map_hook.with_states(text, [new, other], "course-map.md")


def test_nav_holds_glossary_and_course_map(built_site):
    nav = [a.get_text(strip=True) for a in page(built_site, SECTION_PAGE).select(".md-nav a")]
    assert "Glossary" in nav and "Course map" in nav


def test_version_is_read_from_the_page_metadata_everywhere(built_site, published_site):
    version = section_version()  # the release `make publish` deploys ([tool.course] release)
    for one in section.sections():  # each header: its own front matter's version
        meta = page(built_site, one.name).select_one("p.section-meta").get_text()
        assert meta == f"Section ID: {one.id} Version: {one.version}"
    versions = json.loads((published_site / site_prefix() / "versions.json").read_text())
    assert versions == [{"version": version, "title": version, "aliases": ["latest"]}]


def test_glossary_lists_its_sources_like_the_section_does(built_site):
    """Each source: who, the title, where, the date it was checked, and its address."""
    glossary = page(built_site, "glossary")
    heading = glossary.find("h2", id="sources-and-references")
    assert heading is not None, "the glossary has no Sources And References"
    sources = heading.find_next_sibling("ul")("li")
    assert len(sources) >= 5
    for source in sources:
        text = " ".join(source.get_text(" ").split())
        assert re.search(r"checked on \d{4}-\d{2}-\d{2}", text), text
        assert source.find("em"), text  # the title (a living document's date is "checked on")
        assert source.find("a", href=re.compile(r"^https://")), text


MARK = "\x00"  # stands in front of each marked term, so its place in the text is known


def test_each_term_used_on_the_page_is_marked_once_at_its_first_use(built_site):
    """One tooltip per term on the page (Material mounts a component for each), on its first
    use in the running text, and no term the text uses is left without one."""
    article = page(built_site, SECTION_PAGE).select_one("article")
    for unmarked in article.select("h1, h2, h3, h4, pre, code, script"):
        unmarked.decompose()  # headings keep their marks; code has none
    marks = [abbr.get_text() for abbr in article("abbr")]
    assert len(marks) == len(set(marks)), f"a term marked twice: {sorted(marks)}"
    for abbr in article("abbr"):
        abbr.replace_with(MARK + abbr.get_text())
    text = article.get_text(" ")
    used = [term for term in tooltips() if re.search(rf"\b{re.escape(term)}\b", text)]
    assert sorted(marks) == sorted(used)
    assert len(used) >= 8  # the section uses most of the glossary's terms
    for term in used:
        first_use = re.search(rf"\b{re.escape(term)}\b", text).start()
        assert text[first_use - 1] == MARK, f"{term}: its first use is not the marked one"


def test_only_the_first_use_on_the_page_keeps_the_mark():
    batch = '<abbr title="A group of samples.">batch</abbr>'
    html = (
        f"<p>A {batch} and a {batch}.</p><h2 id='a'>Two {batch}es</h2>"
        f"<h2 id='b'>On {batch}</h2><p>The {batch.replace('batch', 'Batch')} and the {batch}.</p>"
    )
    assert first_marks(html) == (
        f"<p>A {batch} and a batch.</p><h2 id='a'>Two {batch}es</h2>"
        f"<h2 id='b'>On {batch}</h2><p>The Batch and the batch.</p>"
    )


def test_permalinks_are_named_without_a_tooltip(built_site):
    links = page(built_site, SECTION_PAGE).select("article a.headerlink")
    assert links
    assert all(link.get("aria-label") == "Permanent link" for link in links)
    assert not any(link.has_attr("title") for link in links)
