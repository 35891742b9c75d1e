"""Transfer size of each built page: its HTML plus every asset the browser loads for it.

Each page of the built site (default ``site/``, from ``make build``) is opened in the headless
browser ``build_support.browser`` finds, from a server on 127.0.0.1, under site_url's path as
the host serves it, and left to settle (until its search index has loaded and the network is
idle). Every response body is counted as served (no compression) and gzipped (as most hosts
send text). Diagrams are drawn at build time (hooks/mermaid_svg.py): no page may load mermaid
(3.5 MB), with or without a diagram; the last columns say which pages have one and whether
mermaid was loaded.

    python benchmarks/page_weight.py [SITE_DIR]
"""

from __future__ import annotations

import gzip
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

# The browser tests' helpers (the editable install puts the repository root on sys.path).
from build_support.browser import launch
from testkit.serving import serve
from testkit.site import built_pages, site_prefix

SETTLED = "search/search_index.json"  # every page fetches it once Material has started


def weigh(browser, site: Path, base: str, page: str) -> dict[str, object]:
    sizes: dict[str, int] = {}
    missing: list[str] = []
    context = browser.new_context()
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())

    def finished(request):
        if request.response().ok:
            sizes[request.url] = request.sizes()["responseBodySize"]
        else:
            missing.append(request.url.removeprefix(base))

    context.on("requestfinished", finished)  # context level: the search worker's fetches too
    tab = context.new_page()
    tab.goto(base + page, wait_until="networkidle")
    deadline = time.monotonic() + 20
    while not any(url.endswith(SETTLED) for url in sizes) and time.monotonic() < deadline:
        tab.wait_for_timeout(100)
    tab.wait_for_load_state("networkidle")
    context.close()
    gzipped = 0
    for url in sizes:
        file = site / urlsplit(url).path.removeprefix(urlsplit(base).path)
        gzipped += len(gzip.compress((file / "index.html" if file.is_dir() else file).read_bytes()))
    html_file = site / (page if page.endswith(".html") else page + "index.html")
    return {
        "page": page or "(home)",
        "requests": len(sizes),
        "html": sizes.get(base + page, 0),
        "total": sum(sizes.values()),
        "gzip": gzipped,
        "diagram": 'class="course-diagram"' in html_file.read_text(encoding="utf-8"),
        "mermaid": any("mermaid" in urlsplit(url).path for url in sizes),
        "missing": missing,
    }


def main() -> int:
    site = Path(sys.argv[1] if len(sys.argv) > 1 else "site").resolve()
    if not (site / "index.html").is_file():
        print(f"no built site in {site}: run `make build` first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as root:
        # Serve the site under site_url's path, as its host will ("" when it is the root).
        prefix = site_prefix()  # "" or "course/"
        if prefix:
            (Path(root) / prefix).parent.mkdir(parents=True, exist_ok=True)
            (Path(root) / prefix).symlink_to(site)
        with serve(Path(root) if prefix else site) as origin, sync_playwright() as playwright:
            browser = launch(playwright)
            rows = [weigh(browser, site, origin + prefix, page) for page in built_pages(site)]
            browser.close()
    header = f"{'page':<40} {'reqs':>4} {'HTML KiB':>9} {'total KiB':>10} {'gzip KiB':>9}"
    print(header + "  diagram  mermaid")
    for r in rows:
        kib = f"{r['html'] / 1024:>9.1f} {r['total'] / 1024:>10.1f} {r['gzip'] / 1024:>9.1f}"
        flags = f"{'yes' if r['diagram'] else 'no':<7}  {'loaded' if r['mermaid'] else '-'}"
        print(f"{r['page']:<40} {r['requests']:>4} {kib}  {flags}")
    for missing in sorted({url for r in rows for url in r["missing"]}):
        print(f"not found, not counted: {missing}")
    wrong = [r["page"] for r in rows if r["mermaid"]]
    print(f"pages that load mermaid: {len(wrong)} {wrong or ''}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
