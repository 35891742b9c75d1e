// Material runs no CSS transition while it switches the colour palette. Its rule for that
// hangs on an attribute it also sets on every page load, which costs a phone two restyles of the
// whole page, so the site serves the palette stylesheet without it (hooks/palette_switching.py)
// and course.css has the same rule on .course-palette-switching. Set that class only while the
// reader switches: in the capture phase, before Material's own listener applies the palette,
// and off again once the new colours have been styled and painted (two frames later).
document.addEventListener(
  "change",
  (event) => {
    if (!event.target.closest("[data-md-component=palette]")) return;
    document.body.classList.add("course-palette-switching");
    requestAnimationFrame(() =>
      requestAnimationFrame(() => document.body.classList.remove("course-palette-switching")),
    );
  },
  true,
);
