/* Accessibility touch-ups of the theme, for every page (no dependencies; mounts through document$):
 * - the search dialog gets an accessible name (Material leaves role="dialog" unnamed);
 * - a formula or table wider than the screen (it scrolls sideways, see course.css) becomes
 *   keyboard-focusable, so it can be scrolled without a mouse;
 * - a display formula or a table that scrolls gets data-sd-more (right, left or both: where more
 *   of it is), which course.css shows as a fading edge; kept up to date as it is scrolled and as
 *   its box changes width (a phone turned, the lab panel beside the lesson resized).
 */
(function () {
  "use strict";

  function nameSearchDialog() {
    const dialog = document.querySelector(".md-search[role='dialog']");
    if (dialog && !dialog.hasAttribute("aria-label")) dialog.setAttribute("aria-label", "搜尋");
  }

  // Each pass reads every box first, then writes: a write (an attribute course.css or the theme
  // styles) followed by the next box's read made the browser lay the page out again for each formula
  // (lesson 1 on a phone: some 100 formulas and tables, 200-400 ms at 4x slowdown).
  function measure(node) {
    const room = node.scrollWidth - node.clientWidth;
    return { node, overflows: room > 1, left: node.scrollLeft > 1, right: room - node.scrollLeft > 1 };
  }
  function apply({ node, overflows, left, right }) {
    if (node.sdLabel && overflows && !node.hasAttribute("data-sd-scroll")) {
      node.setAttribute("data-sd-scroll", "");
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "region");
      node.setAttribute("aria-label", node.sdLabel);
    } else if (node.sdLabel && !overflows && node.hasAttribute("data-sd-scroll")) {
      ["data-sd-scroll", "tabindex", "role", "aria-label"].forEach((a) => node.removeAttribute(a));
    }
    // a display formula or a table that scrolls fades out on the side(s) with more of it (course.css)
    const more = left && right ? "both" : left ? "left" : right ? "right" : null;
    if (node.getAttribute("data-sd-more") === more) return;
    if (more) node.setAttribute("data-sd-more", more);
    else node.removeAttribute("data-sd-more");
  }
  const update = (nodes) => nodes.map(measure).forEach(apply);

  const SCROLLERS = ".sd-math, .md-typeset__scrollwrap, .sd-toy__scroll, .sd-nb__html";

  // measured again whenever the box or what it holds changes width: a window resize is not the only
  // cause (the lab panel resized beside the lesson; a formula or table laid out wider a moment after
  // the first check, as its font or the page's settles: a formula that scrolled had no fade then)
  const resized = window.ResizeObserver && new ResizeObserver((entries) =>
    update([...new Set(entries.map((entry) => entry.target.sdScroller || entry.target))]));
  function watch(nodes) {
    for (const node of nodes) {
      if (node.sdMore) continue;
      node.sdMore = true;
      node.addEventListener("scroll", () => apply(measure(node)), { passive: true });
      if (resized) {
        resized.observe(node);
        // what sets the content's width: a block formula's box is as wide as its block, its
        // rows are as wide as the formula; a table's own box
        for (const content of node.querySelectorAll("math > *, table")) {
          content.sdScroller = node;
          resized.observe(content);
        }
      }
    }
    return nodes;
  }
  const scrollers = (root) => watch([...(root || document).querySelectorAll(SCROLLERS)]);
  const scrollHints = (root) => update(scrollers(root));
  window.sdScrollHints = scrollHints;   // lab-panel.js, for the notebook preview it puts in

  function check() {
    const label = (selector, text) => document.querySelectorAll(selector).forEach((node) => { node.sdLabel = text; });
    label(".md-typeset .sd-math", "公式（可左右捲動）");
    label(".md-typeset__scrollwrap, .sd-toy__scroll", "表格（可左右捲動）");
    // an inline formula keeps its math role: focusable, but no region role or label
    const inline = [...document.querySelectorAll(".md-typeset math[display='inline']")];
    const nodes = [...document.querySelectorAll(SCROLLERS)];
    const wide = inline.map((math) => math.scrollWidth > math.clientWidth + 1);
    const boxes = nodes.map(measure);
    watch(nodes);
    boxes.forEach(apply);
    inline.forEach((math, i) => {
      if (wide[i] && math.getAttribute("tabindex") !== "0") math.setAttribute("tabindex", "0");
      else if (!wide[i] && math.hasAttribute("tabindex")) math.removeAttribute("tabindex");
    });
  }

  // the math font may arrive after the first check and widen the formulas: checked again when a
  // font has loaded (listened to before the first check, so no load falls between; not through
  // document.fonts.ready, which brings the page's style up to date: 250 ms of lesson 1 on a phone)
  let fontsWatched = false;
  function watchFonts() {
    if (fontsWatched || !document.fonts || !document.fonts.addEventListener) return;
    fontsWatched = true;
    document.fonts.addEventListener("loadingdone", () => afterPaint(check));
  }

  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(check);
  });

  // once the page has been laid out and painted (the boxes are then measured without laying the
  // page out again): the fading edges can wait for the learner's first look
  const idle = (f) => (window.requestIdleCallback ? requestIdleCallback(f, { timeout: 1000 }) : setTimeout(f, 200));
  const afterPaint = (f) => requestAnimationFrame(() => idle(f));
  function onPage() {
    watchFonts();
    nameSearchDialog();
    check();
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    // after Material has wrapped the tables of the new page
    window.document$.subscribe(() => afterPaint(onPage));
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => afterPaint(onPage));
  } else {
    afterPaint(onPage);
  }
})();
