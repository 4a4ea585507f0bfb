/* Chinese input in Material's search box, as learners type it (no dependencies).
 *
 * Material reads the query on keyup only: text that arrives without a key going up (an input
 * method's commit, a paste, voice input) left the box on 「打字進行搜尋」 until one more key press.
 * Each input event outside a composition, and each composition's end, sends the box the keyup
 * Material listens for (it searches only when the text changed, so a real keyup costs nothing).
 *
 * A key pressed while an input method composes is the input method's: Enter picks the candidate,
 * the arrows move among candidates, Escape drops them. Material skips keys between
 * compositionstart and compositionend, but WebKit (Safari) ends the composition before the Enter
 * that commits it (its keydown has keyCode 229), and Material then opened the first result. Such a
 * key stops before Material's listener on window (its default action, the commit, is kept).
 * Listeners sit on document and window, so they serve every page of instant navigation.
 */
(function () {
  "use strict";

  const QUERY = ".md-search__input";
  const IME_KEY = 229;                  // keyCode of a key an input method is processing
  if (window.sdSearchIme) return;
  window.sdSearchIme = true;

  const isQuery = (node) => node instanceof Element && node.matches(QUERY);

  function readAgain(event) {
    if (!isQuery(event.target) || event.isComposing) return;
    event.target.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true }));
  }
  document.addEventListener("input", readAgain);
  document.addEventListener("compositionend", readAgain);

  window.addEventListener("keydown", (event) => {
    if ((event.isComposing || event.keyCode === IME_KEY) && isQuery(event.target)) event.stopPropagation();
  }, true);
})();
