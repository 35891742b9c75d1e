// Material runs no CSS transition while it switches the colour palette. Its rule for that
// hangs on an attribute it also sets on every page load, which costs a phone two restyles of the
// whole page, so the site serves the palette stylesheet without it (hooks/palette_switching.py).
// The same rule is added here only while the reader switches: in the capture phase, before
// Material's own listener applies the palette, and removed once the new colours have been
// styled and painted (two frames later). Kept out of course.css, a rule ending in `*` would be
// tried on every element at every restyle of every page load.
const SWITCHING_RULE = "*, ::before, ::after { transition-duration: 0s !important; }";

document.addEventListener(
  "change",
  (event) => {
    if (!event.target.closest("[data-md-component=palette]")) return;
    const style = document.createElement("style");
    style.dataset.coursePaletteSwitching = "";
    style.textContent = SWITCHING_RULE;
    document.head.append(style);
    requestAnimationFrame(() => requestAnimationFrame(() => style.remove()));
  },
  true,
);
