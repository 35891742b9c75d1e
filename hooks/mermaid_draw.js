
async ([themeCSS, diagrams]) => {
  mermaid.initialize({
    startOnLoad: false,
    themeCSS,
    sequence: { actorFontSize: "16px", messageFontSize: "16px", noteFontSize: "16px" },
  });
  const inert = ["data-points", "data-look", "data-id", "data-edge", "data-et"];
  const matches = (svg, selector) => {
    const plain = selector.replace(/::?[a-z-]+(\([^)]*\))?/g, "");  // states: :hover ...
    try {
      return svg.matches(plain) || svg.querySelector(plain) !== null;
    } catch {
      return true;  // a selector the engine cannot test is kept
    }
  };
  const svgs = [];
  for (const [id, source] of diagrams) {
    let drawn;
    try {
      drawn = (await mermaid.render(id, source)).svg;
    } catch (error) {
      return { error: `${id}: ${error.message || error}` };
    }
    const box = document.querySelector(".md-typeset");
    box.innerHTML = drawn;
    const svg = box.querySelector("svg");
    for (const element of svg.querySelectorAll("*")) {
      inert.forEach((name) => element.removeAttribute(name));
      if (element.getAttribute("style") === "") element.removeAttribute("style");
    }
    for (const label of svg.querySelectorAll("g.edgeLabel")) {
      if (!label.textContent.trim()) label.remove();
    }
    // HTML labels hold a <p> inside a <span>, which HTML does not allow in a page: the same
    // box as a block <span>, its margin kept as the <p> had it. It inherits its colour from the
    // label, as the <p> did (mermaid's theme colours every bare span a fixed grey).
    for (const paragraph of svg.querySelectorAll("foreignObject span p")) {
      const line = document.createElement("span");
      const { marginTop, marginBottom } = getComputedStyle(paragraph);
      line.style.display = "block";
      line.style.color = "inherit";
      if (marginTop !== "0px") line.style.marginTop = marginTop;
      if (marginBottom !== "0px") line.style.marginBottom = marginBottom;
      line.replaceChildren(...paragraph.childNodes);
      paragraph.replaceWith(line);
    }
    for (const style of svg.querySelectorAll("style")) {
      style.textContent = [...style.sheet.cssRules]
        .filter((rule) => !(rule instanceof CSSStyleRule) || matches(svg, rule.selectorText))
        .map((rule) => rule.cssText)
        .join("");
    }
    svgs.push(svg.outerHTML);
  }
  return { svgs };
}
