// A region that scrolls sideways must take keyboard focus, or a keyboard user cannot reach
// what it hides.
//
// Tables: Material wraps every table in a .md-typeset__scrollwrap, which scrolls sideways when
// the table is wider than the page (on a phone, most tables here): give each wrapper a tab
// stop. Material adds the wrappers after the page loads (and again on instant navigation), so
// watch for them.
function focusableScrollRegions() {
  for (const wrapper of document.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])")) {
    wrapper.tabIndex = 0;
  }
}
new MutationObserver(focusableScrollRegions).observe(document.body, {
  childList: true,
  subtree: true,
});
focusableScrollRegions();

// Code: Material gives a block that scrolls a tab stop (where a pointer can hover, as Material
// does) when it mounts the block, and it mounts each block only as it comes into view
// (content.lazy in mkdocs.yml). A keyboard user tabbing down the page would pass over a block
// never brought into view. So once the page is idle, measure the blocks and do the same: after
// each page Material shows (its document$: the first, and each instant navigation).
function focusableCodeBlocks() {
  if (!matchMedia("(hover)").matches) return;
  for (const code of document.querySelectorAll(".md-typeset pre > code:not([tabindex])")) {
    if (code.scrollWidth > code.clientWidth) code.tabIndex = 0;
  }
}
// Formulas: a notebook's display formula wider than the column scrolls in its own box
// (course.css); measured as code is, it takes a tab stop wherever it scrolls.
function focusableFormulas() {
  for (const box of document.querySelectorAll(".md-typeset .notebook-math:not([tabindex])")) {
    if (box.scrollWidth > box.clientWidth) box.tabIndex = 0;
  }
}
const whenIdle = window.requestIdleCallback || ((callback) => setTimeout(callback, 1));
if (typeof document$ !== "undefined") {
  document$.subscribe(() => whenIdle(focusableCodeBlocks));
  document$.subscribe(() => whenIdle(focusableFormulas));
} else {
  window.addEventListener("load", () => whenIdle(focusableCodeBlocks));
  window.addEventListener("load", () => whenIdle(focusableFormulas));
}
