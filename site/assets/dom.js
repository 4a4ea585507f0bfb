/* The course widgets' one DOM helper (toy.js, quiz.js, progress.js load after it):
 * specdecEl(tag, attrs, children) makes an element; attrs.text is its text, attrs.className its
 * class, any other key an attribute; children are nodes or strings. No dependencies. */
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
})();
