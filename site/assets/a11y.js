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

  function makeScrollable(node, label) {
    const overflows = node.scrollWidth > node.clientWidth + 1;
    if (overflows && !node.hasAttribute("data-sd-scroll")) {
      node.setAttribute("data-sd-scroll", "");
      node.setAttribute("tabindex", "0");
      node.setAttribute("role", "region");
      node.setAttribute("aria-label", label);
    } else if (!overflows && node.hasAttribute("data-sd-scroll")) {
      ["data-sd-scroll", "tabindex", "role", "aria-label"].forEach((a) => node.removeAttribute(a));
    }
  }

  // a display formula or a table that scrolls fades out on the side(s) with more of it (course.css)
  const SCROLLERS = ".sd-math, .md-typeset__scrollwrap, .sd-toy__scroll, .sd-nb__html";
  function showMore(node) {
    const rest = node.scrollWidth - node.clientWidth - node.scrollLeft;
    const left = node.scrollLeft > 1, right = rest > 1;
    const more = left && right ? "both" : left ? "left" : right ? "right" : "";
    if (more) node.setAttribute("data-sd-more", more);
    else node.removeAttribute("data-sd-more");
  }

  // measured again whenever the box or what it holds changes width: a window resize is not the only
  // cause (the lab panel resized beside the lesson; a formula or table laid out wider a moment after
  // the first check, as its font or the page's settles: a formula that scrolled had no fade then)
  const resized = window.ResizeObserver && new ResizeObserver((entries) => entries.forEach((entry) => {
    const node = entry.target.sdScroller || entry.target;
    if (node.sdLabel) makeScrollable(node, node.sdLabel);
    showMore(node);
  }));
  function scrollHints(root) {
    (root || document).querySelectorAll(SCROLLERS).forEach((node) => {
      if (!node.sdMore) {
        node.sdMore = true;
        node.addEventListener("scroll", () => showMore(node), { passive: true });
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
      showMore(node);
    });
  }
  window.sdScrollHints = scrollHints;   // lab-panel.js, for the notebook preview it puts in

  function check() {
    const label = (selector, text) => document.querySelectorAll(selector).forEach((node) => {
      node.sdLabel = text;
      makeScrollable(node, text);
    });
    label(".md-typeset .sd-math", "公式（可左右捲動）");
    label(".md-typeset__scrollwrap, .sd-toy__scroll", "表格（可左右捲動）");
    scrollHints(document);
    // an inline formula keeps its math role: focusable, but no region role or label
    document.querySelectorAll(".md-typeset math[display='inline']").forEach((math) => {
      if (math.scrollWidth > math.clientWidth + 1) math.setAttribute("tabindex", "0");
      else math.removeAttribute("tabindex");
    });
  }

  function onPage() {
    nameSearchDialog();
    check();
  }

  // the math font may arrive after the first check and widen the formulas
  if (document.fonts && document.fonts.ready) {
    document.fonts.ready.then(() => requestAnimationFrame(check));
    document.fonts.addEventListener("loadingdone", () => requestAnimationFrame(check));
  }

  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(check);
  });

  if (window.document$ && typeof window.document$.subscribe === "function") {
    // after Material has wrapped the tables of the new page
    window.document$.subscribe(() => requestAnimationFrame(onPage));
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", onPage);
  } else {
    onPage();
  }
})();
