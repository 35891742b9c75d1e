// A link to an anchor inside a content tab that is not showing (line 5 of the JAX listing,
// #__codelineno-2-5) would land on nothing visible: Material switches tabs only for links to
// the tab itself. Select the tab that holds the target, then bring the target into view.
// Runs on every page load, on instant navigation (Material's document$) and on hash changes.
function showAnchorInTab() {
  const id = decodeURIComponent(location.hash.slice(1));
  const target = id && document.getElementById(id);
  if (!target) return;
  let moved = false;
  for (let block = target.closest(".tabbed-block"); block; ) {
    const set = block.closest(".tabbed-set");
    const index = [...block.parentElement.children].indexOf(block);
    const input = set && set.querySelectorAll(":scope > input")[index];
    if (input && !input.checked) {
      input.click();
      moved = true;
    }
    block = set && set.parentElement ? set.parentElement.closest(".tabbed-block") : null;
  }
  if (moved) target.scrollIntoView({ block: "center" });
}
if (typeof document$ !== "undefined") {
  document$.subscribe(showAnchorInTab);
} else {
  showAnchorInTab();
}
window.addEventListener("hashchange", showAnchorInTab);
