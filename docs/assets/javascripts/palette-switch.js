// The header's palette toggle (overrides/partials/palette.html): Material's markup and stored
// choice, switched here rather than by Material's palette component, which costs every page load
// two whole-page restyles (see the partial). The palette in use was set as the header was parsed
// (overrides/partials/javascripts/palette.html); this switches it when the reader asks.
const form = document.querySelector("[data-course-palette]");
const inputs = [...form.querySelectorAll(":scope > input")];

// No CSS transition runs while the colours change, as in Material; its rule for that is not
// served (hooks/palette_switching.py), so the same rule is added only while the reader switches
// and removed once the new colours have been styled and painted (two frames later). Kept out of
// course.css: a rule ending in `*` would be tried on every element at every restyle.
const SWITCHING_RULE = "*, ::before, ::after { transition-duration: 0s !important; }";

function withoutTransitions() {
  const style = document.createElement("style");
  style.dataset.coursePaletteSwitching = "";
  style.textContent = SWITCHING_RULE;
  document.head.append(style);
  requestAnimationFrame(() => requestAnimationFrame(() => style.remove()));
}

// The browser's own bar takes the header's colour, as Material sets it.
function matchBrowserBar() {
  let meta = document.querySelector("meta[name=theme-color]");
  if (!meta) {
    meta = document.createElement("meta");
    meta.name = "theme-color";
    document.head.append(meta);
  }
  meta.content = getComputedStyle(document.querySelector(".md-header")).backgroundColor;
}

function switchTo(index) {
  withoutTransitions();
  const color = applyPalette(index); // overrides/partials/javascripts/palette.html
  __md_set("__palette", { index, color }); // Material's key and shape, both ways
  matchBrowserBar();
}

// Each toggle is a label for the next palette's radio button: choosing it is a change.
form.addEventListener("change", (event) => switchTo(inputs.indexOf(event.target)));

// Enter on the focused toggle switches too, as in Material: to the palette after the one shown.
form.addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  const current = inputs.findIndex(
    (input) => input.nextElementSibling instanceof HTMLLabelElement && !input.nextElementSibling.hidden,
  );
  const next = inputs[(current + 1) % inputs.length];
  next.click();
  next.focus();
});

// After the page has loaded, when reading the header's colour costs no extra restyle.
window.addEventListener("load", () => setTimeout(matchBrowserBar));
