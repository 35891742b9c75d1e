// Material wraps every table in a .md-typeset__scrollwrap, which scrolls sideways when the
// table is wider than the page (on a phone, most tables here). A region that scrolls must take
// keyboard focus, or a keyboard user cannot reach its hidden columns: give each wrapper a tab
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
