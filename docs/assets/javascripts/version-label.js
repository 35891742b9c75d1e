// Material labels its version button "Select version" but shows the version itself; WCAG's
// "label in name" wants the visible text inside the accessible name. The button is drawn
// after versions.json loads, into the header, so watch the header (the whole body would call
// this for every element Material adds while the page loads).
new MutationObserver(() => {
  for (const button of document.querySelectorAll(".md-version__current")) {
    const label = `Select version, current ${button.textContent.trim()}`;
    if (button.getAttribute("aria-label") !== label) button.setAttribute("aria-label", label);
  }
}).observe(document.querySelector(".md-header") ?? document.body, {
  childList: true,
  subtree: true,
});
