/* The course widgets' DOM helpers (toy.js, quiz.js, progress.js, lab-panel.js load after it):
 * specdecEl(tag, attrs, children) makes an element; attrs.text is its text, attrs.className its
 * class, any other key an attribute; children are nodes or strings.
 * specdecEachPage(fn) calls fn for each page Material's instant navigation brings. No dependencies. */
(function () {
  "use strict";
  window.specdecEl = function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.append(child);
    return node;
  };

  // The widgets mount the page at hand as they run (before the theme's bundle); this follows the
  // theme's document$ (it replays the page at hand, then each new one) from the page's load on.
  // Subscribed at DOMContentLoaded, their listener ran first in the task in which the theme starts
  // (0.6-1 s on a phone) and Lighthouse, which names a task after its first script, put it under toy.js.
  window.specdecEachPage = function (fn) {
    const follow = () => window.document$ && window.document$.subscribe(fn);
    if (document.readyState === "complete") follow(); else window.addEventListener("load", follow);
  };
})();
