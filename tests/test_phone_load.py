"""What keeps the section page light to load on a phone (issue 22; benchmarks/main_thread.py
and benchmarks/lighthouse.py measure it): the page starts with what Material's bundle would
change on ``<html>`` (the change restyled the whole page), and its charts carry no group that
only costs."""

from __future__ import annotations

from testkit.project import SECTION_PAGE
from testkit.serving import serve
from testkit.site import page

# What the bundle does to <html> when it runs (hooks/theme_fixes.py sets it first).
BUNDLE_CHANGES = (
    'document.documentElement.classList.add("js")',
    'document.documentElement.classList.add("js-focus-visible")',
    'document.documentElement.setAttribute("data-js-focus-visible","")',
)


def test_the_page_starts_as_the_bundle_would_leave_html(built_site):
    bundle = next((built_site / "assets" / "javascripts").glob("bundle.*.min.js")).read_text()
    for change in BUNDLE_CHANGES:  # Material still does this: else theme_fixes has no object
        assert change in bundle, change
    section = page(built_site, SECTION_PAGE)
    first_script = section.head.find("script").get_text()
    assert "className = 'js js-focus-visible'" in first_script
    assert "setAttribute('data-js-focus-visible', '')" in first_script


def test_loading_the_page_changes_no_attribute_of_html(browser, built_site):
    """Each attribute of <html> the bundle changed restyled every element of the page; the
    head sets them before the body is parsed."""
    record = """
      window.__htmlChanges = [];
      new MutationObserver(records => {
        for (const r of records) {
          // only once the body is there: what the head sets costs nothing, nothing is styled yet
          if (r.target !== document.documentElement || !document.body) continue;
          const now = r.target.getAttribute(r.attributeName);
          if (r.oldValue !== now) window.__htmlChanges.push([r.attributeName, r.oldValue, now]);
        }
      }).observe(document, { attributes: true, subtree: true, attributeOldValue: true });
    """
    with serve(built_site) as origin:
        context = browser.new_context()
        context.add_init_script(record)
        tab = context.new_page()
        tab.goto(f"{origin}{SECTION_PAGE}/", wait_until="load")
        tab.wait_for_timeout(1000)
        changes = tab.evaluate("window.__htmlChanges")
        is_js = tab.evaluate("document.documentElement.className")
        copy_buttons = tab.locator("article .md-code__nav button").count()
        context.close()
    assert changes == [], changes
    assert "js" in is_js.split() and "js-focus-visible" in is_js.split()
    assert copy_buttons > 0  # the bundle ran and enhanced the page


def test_charts_carry_no_group_without_attributes(built_site):
    charts = page(built_site, SECTION_PAGE).select("svg.course-chart")
    assert len(charts) >= 4
    for chart in charts:
        groups = chart.find_all("g")
        assert all(group.attrs for group in groups), "an attribute-less <g> in a chart"
