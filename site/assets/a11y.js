/* Accessibility touch-ups of the theme, for every page (no dependencies; mounts through document$):
 * - the search dialog gets an accessible name (Material leaves role="dialog" unnamed);
 * - a formula or table wider than the screen (it scrolls sideways, see course.css) becomes
 *   keyboard-focusable, so it can be scrolled without a mouse;
 * - a display formula or a table that scrolls gets data-sd-more (right, left or both: where more
 *   of it is), which course.css shows as a fading edge; kept up to date as it is scrolled and as
 *   its box changes width (a phone turned, the lab panel beside the lesson resized, a font arrived).
 * The boxes are measured by a ResizeObserver, which the browser calls right after it has laid the
 * page out: measuring them as the page loaded (after a write, or before the layout) made the
 * browser lay lesson 1 out again, 150-400 ms on a phone at 4x slowdown. All reads of a call come
 * before its writes.
 */
(function () {
  "use strict";

  function nameSearchDialog() {
    const dialog = document.querySelector(".md-search[role='dialog']");
    if (dialog && !dialog.hasAttribute("aria-label")) dialog.setAttribute("aria-label", "搜尋");
  }

  function measure(node) {
    const room = node.scrollWidth - node.clientWidth;
    return { node, overflows: room > 1, left: node.scrollLeft > 1, right: room - node.scrollLeft > 1 };
  }
  function apply({ node, overflows, left, right }) {
    if (node.sdInline) {      // an inline formula keeps its math role: focusable, no region role or label
      if (overflows && node.getAttribute("tabindex") !== "0") node.setAttribute("tabindex", "0");
      else if (!overflows && node.hasAttribute("tabindex")) node.removeAttribute("tabindex");
      return;
    }
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

  // called once for each box as it is first laid out, then whenever it or what it holds changes
  // size (what sets the content's width: a block formula's box is as wide as its block, its rows
  // are as wide as the formula; a table's own box)
  const resized = window.ResizeObserver && new ResizeObserver((entries) =>
    update([...new Set(entries.map((entry) => entry.target.sdScroller || entry.target))]));
  function watch(nodes) {
    const fresh = nodes.filter((node) => !node.sdWatched);
    for (const node of fresh) {
      node.sdWatched = true;
      if (!node.sdInline) node.addEventListener("scroll", () => apply(measure(node)), { passive: true });
      if (!resized) continue;
      resized.observe(node);
      for (const content of node.querySelectorAll("math > *, table")) {
        content.sdScroller = node;
        resized.observe(content);
      }
    }
    if (!resized) update(nodes);    // (no ResizeObserver: measured now, and at each window resize)
  }
  window.sdScrollHints = (root) => watch([...root.querySelectorAll(SCROLLERS)]);   // lab-panel.js: the notebook preview

  function onPage() {
    nameSearchDialog();
    const label = (selector, text) => [...document.querySelectorAll(selector)].map((node) => {
      node.sdLabel = text;
      return node;
    });
    const inline = [...document.querySelectorAll(".md-typeset math[display='inline']")];
    inline.forEach((math) => { math.sdInline = true; });
    watch([...label(".md-typeset .sd-math", "公式（可左右捲動）"),
           ...label(".md-typeset__scrollwrap, .sd-toy__scroll", "表格（可左右捲動）"),
           ...document.querySelectorAll(SCROLLERS), ...inline]);
  }
  if (!resized) {
    window.addEventListener("resize", () => requestAnimationFrame(() =>
      update([...document.querySelectorAll(SCROLLERS + ", .md-typeset math[display='inline']")])));
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    // after Material has wrapped the tables of the new page
    window.document$.subscribe(() => requestAnimationFrame(onPage));
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", onPage);
  } else {
    onPage();
  }
})();
