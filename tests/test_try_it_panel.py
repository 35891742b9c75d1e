"""The Try it panel driven as a reader drives it: by its labels and roles, with the keyboard.

On the section page of the session's build (served from 127.0.0.1, every other host blocked
and recorded, ``testkit.browser_pages.open_page``): nothing of the panel or jax-js loads before
the reader opens it; the default run prints the practice's lines; a changed size prints its
exact multiply count, the same-result check and times, and says "faster" only as its printed
times say (``examples.timing``'s rule); bad sizes get words and run nothing; Stop ends a run;
the page answers during a run (no long task over 200 ms on the main thread); it fits 360 px.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from examples.timing import faster_or_slower, shown_ratio
from testkit.browser_pages import open_page
from testkit.project import AXE, SECTION_PAGE

LONG_TASKS = """
window.__longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.__longTasks.push([entry.startTime, entry.duration]);
}).observe({ type: "longtask", buffered: true });
"""
PANEL_FILES = re.compile(r"/(try-it|vendor/jax-js)/")
UNITS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


@pytest.fixture
def reader(browser, served_site):
    """The section page at phone width (360 px), and what the page requested."""
    page = open_page(browser, "light", viewport={"width": 360, "height": 780})
    page.add_init_script(LONG_TASKS)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    yield page, requested
    page.context.close()


def open_panel(page):
    summary = page.locator("summary", has_text="Try it here")
    summary.focus()
    page.keyboard.press("Enter")  # keyboard only
    expect(page.get_by_label("Batch size (rows)")).to_have_value(re.compile(r"\d"))


def run(page, rows: str, features: str, settings: str):
    for label, value in (
        ("Batch size (rows)", rows),
        ("Feature count", features),
        ("Weight settings (K)", settings),
    ):
        page.get_by_label(label).fill(value)
    page.get_by_role("button", name="Run").press("Enter")


def seconds(text: str) -> float:
    number, unit = text.split()
    return float(number.replace(",", "")) * UNITS[unit]


def check_verdicts(output: str) -> int:
    """Each "... was V one by one" says what examples.timing says of the times printed above it."""
    times = dict(
        re.findall(
            r"^(one by one|batched|\d+ settings one by one|\d+ settings at once)"
            r"[^:]*: ([\d.,]+ \S+) \(median",
            output,
            re.M,
        )
    )
    said = re.findall(r"^(batched|at once) was (.+) one by one$", output, re.M)
    for path, verdict in said:
        fast, slow = (
            ("batched", "one by one")
            if path == "batched"
            else (
                next(k for k in times if k.endswith("at once")),
                next(k for k in times if k.endswith("settings one by one")),
            )
        )
        assert verdict == faster_or_slower(
            shown_ratio(seconds(times[fast]), seconds(times[slow]))
        ), output
    return len(said)


def test_nothing_of_the_panel_loads_until_the_reader_opens_it(reader):
    page, requested = reader
    assert [url for url in requested if PANEL_FILES.search(url)] == []
    open_panel(page)
    page.wait_for_load_state("networkidle")
    assert any(url.endswith("/try-it/panel.js") for url in requested)
    assert not any("vendor/jax-js" in url for url in requested)  # jax-js: only when run


def test_default_run_prints_the_practice_lines(reader, expected_practice_output):
    page, requested = reader
    open_panel(page)
    page.get_by_role("button", name="Run").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Done on", timeout=60_000)
    output = page.locator(".try-it__output").inner_text()
    assert expected_practice_output in output
    assert re.search(r"^backend = (WebGPU|WebGL|Wasm|JS)", output, re.M), output
    assert check_verdicts(output) == 1  # at 4 rows the loop usually wins: it must say so
    assert all(host.startswith("http://127.0.0.1") for host in requested), requested


def test_a_changed_size_says_faster_only_as_its_times_say(reader):
    page, _ = reader
    open_panel(page)
    run(page, "3000", "16", "3")
    expect(page.get_by_role("status")).to_contain_text("Done on", timeout=60_000)
    output = page.locator(".try-it__output").inner_text()
    assert "scalar multiply count = 48,000\n" in output
    assert "3 weight settings: scalar multiply count = 144,000" in output
    assert output.count("same result = True") == 2, output
    assert check_verdicts(output) == 2


@pytest.mark.parametrize(
    ("rows", "features", "settings", "words"),
    [
        ("0", "3", "1", "too small"),
        ("-5", "3", "1", "too small"),
        ("2.5", "3", "1", "not a whole number"),
        ("four", "3", "1", "is not a number"),
        ("", "3", "1", "enter a whole number"),
        ("4", "3", "100000", "larger than this panel's bound of 1,024"),
        (
            "4000000",
            "4096",
            "1",
            "batch size \N{MULTIPLICATION SIGN} feature count is 16,384,000,000",
        ),
    ],
)
def test_bad_sizes_get_words_and_run_nothing(reader, rows, features, settings, words):
    page, requested = reader
    open_panel(page)
    run(page, rows, features, settings)
    expect(page.get_by_role("alert")).to_contain_text("Nothing was run.")
    expect(page.get_by_role("alert")).to_contain_text(words)
    assert page.locator(".try-it__output").inner_text() == ""
    assert not any("worker.js" in url for url in requested)


def test_stop_ends_a_run_and_the_page_answers_during_it(reader):
    page, _ = reader
    open_panel(page)
    run(page, "4", "3", "1")  # the worker and jax-js started, so that the next run is all computing
    expect(page.get_by_role("status")).to_contain_text("Done on", timeout=60_000)
    started = page.evaluate("performance.now()")
    run(page, "2000000", "8", "8")  # eight settings one by one: long past the checks below
    expect(page.get_by_role("button", name="Stop")).to_be_enabled()
    for _ in range(5):  # the page scrolls and answers while the worker computes
        page.mouse.wheel(0, 300)
        assert page.evaluate("1 + 1") == 2
        page.wait_for_timeout(200)
    stop = page.get_by_role("button", name="Stop")
    said = page.get_by_role("status").inner_text() + page.get_by_role("alert").inner_text()
    assert stop.is_enabled(), f"the run ended before Stop: {said}"
    expect(stop).to_be_focused()  # Run, disabled while running, handed the keyboard to Stop
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Stopped")
    expect(page.get_by_role("button", name="Run")).to_be_focused()
    expect(page.get_by_role("button", name="Run")).to_be_enabled()
    page.wait_for_timeout(1000)
    assert "Done on" not in page.get_by_role("status").inner_text()
    long = page.evaluate(f"window.__longTasks.filter(([t, d]) => t >= {started} && d > 200)")
    assert long == [], long


def test_the_panel_fits_a_phone(reader):
    page, _ = reader
    open_panel(page)
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0


def test_the_growing_batch_table_sits_beside_the_books_own_figures(reader, built_site):
    from bs4 import BeautifulSoup

    page, _ = reader
    open_panel(page)
    page.get_by_role("button", name="Time the book's sizes here").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Timed the book's", timeout=180_000)
    region = page.get_by_role("region", name="The book's turnaround times and this browser's")
    shown = [
        [cell.inner_text() for cell in row.locator("td").all()]
        for row in region.locator("tbody tr").all()
    ]
    # The book's columns are the measured page's tables as this build printed them.
    measured = BeautifulSoup(
        (built_site / "p5-9-1-measured" / "index.html").read_text(), "html.parser"
    )

    def printed(block_id: str) -> list[list[str]]:
        table = measured.select_one(f'div[data-exec-id="{block_id}"] table')
        return [
            [" ".join(td.get_text().split()) for td in tr.select("td")]
            for tr in table.select("tbody tr")
        ]

    cpu, gpu = printed("p5-9-1-turnaround-table"), printed("p5-9-1-turnaround-recorded-gpu")
    assert [row[:5] for row in shown] == [
        [c[0], c[1], c[2], c[4], g[4]] for c, g in zip(cpu, gpu, strict=True)
    ]
    for row in shown:  # this browser's two times, each a time as examples.timing prints one
        assert all(re.fullmatch(r"[\d.,]+ (ns|µs|ms|s)", cell) for cell in row[5:]), row
    # The panel open, after a run and its table: axe finds nothing serious in it.
    page.add_script_tag(path=AXE)
    violations = page.evaluate(
        "async () => (await axe.run(document.querySelector('details.try-it'))).violations"
    )
    serious = [
        (v["id"], [n["target"] for n in v["nodes"]])
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []


def test_the_code_shown_is_the_code_that_runs(built_site):
    """Each line of the two excerpts is a line of the module it names."""
    from bs4 import BeautifulSoup

    from testkit.project import ROOT

    html = (built_site / SECTION_PAGE / "index.html").read_text()
    js, python = BeautifulSoup(html, "html.parser").select(".try-it__code pre")
    sources = {
        "js": (built_site / "assets/javascripts/try-it/practice.js").read_text(),
        "python": (ROOT / "examples/scoring.py").read_text()
        + (ROOT / "examples/settings.py").read_text(),
    }
    for name, code in (("js", js), ("python", python)):
        lines = {line.strip() for line in sources[name].splitlines()}
        missing = [line for line in code.get_text().splitlines() if line.strip() not in lines]
        assert missing == [], f"{name} excerpt lines not in its source: {missing}"


def test_the_panel_works_after_instant_navigation(browser, served_site):
    """Material's instant navigation runs the panel's script again (as a classic script)."""
    page = open_page(browser, "light")
    try:
        page.goto(served_site, wait_until="networkidle")
        page.locator(f"article a[href$='{SECTION_PAGE}/']").first.click()
        page.wait_for_url(f"**/{SECTION_PAGE}/")
        open_panel(page)
        expect(page.get_by_label("Feature count")).to_have_value(re.compile(r"\d"))
    finally:
        page.context.close()


def test_a_backend_failing_mid_run_is_named_and_the_run_falls_back(browser, served_site):
    """WebGPU (SwiftShader) chosen, then made to fail as a lost device would: the panel names it
    and runs on Wasm, saying so."""
    from build_support.browser import LAUNCH_ARGS, WEBGPU_ARGS, find

    webgpu = browser.browser_type.launch(
        executable_path=str(find().path), args=[*LAUNCH_ARGS, *WEBGPU_ARGS]
    )
    try:
        page = open_page(webgpu, "light")

        def failing_webgpu(route):
            body = route.fetch().text()
            start = "export function onDevice(values, shape, device) {"
            assert start in body
            failing = f'{start}\n  if (device === "webgpu") throw new Error("device lost (test)");'
            route.fulfill(body=body.replace(start, failing), content_type="text/javascript")

        page.context.route("**/try-it/practice.js", failing_webgpu)
        page.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
        open_panel(page)
        page.get_by_role("button", name="Run").press("Enter")
        expect(page.get_by_role("status")).to_contain_text("Done on Wasm", timeout=60_000)
        output = page.locator(".try-it__output").inner_text()
        assert "backend = WebGPU" in output, output
        assert (
            "WebGPU failed during the run (device lost (test)); running on Wasm instead." in output
        )
    finally:
        webgpu.close()


def test_the_lighthouse_benchmark_compares_with_the_page_less_only_the_panel(built_site, tmp_path):
    """benchmarks/try_it_lighthouse.py's page "without" is the built page, the panel taken out."""
    import sys

    from testkit.project import ROOT

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from try_it_lighthouse import without_panel
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    without_panel(built_site, tmp_path / "without")
    page = f"{SECTION_PAGE}/index.html"
    with_html, without_html = (
        (built_site / page).read_text(),
        (tmp_path / "without" / page).read_text(),
    )
    assert "try-it" in with_html and "try-it" not in without_html
    start = with_html.index('<details class="try-it">')
    assert (
        without_html
        == with_html[:start] + with_html[with_html.index("</script>", start) + len("</script>") :]
    )


def test_without_javascript_the_panel_says_what_it_needs(browser, served_site):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 360, "height": 780})
    try:
        page = context.new_page()
        page.goto(f"{served_site}{SECTION_PAGE}/")
        page.locator("summary", has_text="Try it here").click()  # <details> opens without script
        # (playwright's text locators skip <noscript>: read the panel's rendered text)
        shown = page.locator("details.try-it").inner_text()
        assert "This panel runs the practice in your browser with JavaScript" in shown, shown
        expect(page.get_by_label("Batch size (rows)")).to_be_hidden()
    finally:
        context.close()
