// The keyboard and a screen reader: a focused slider keeps the arrow keys (6.), the lab takes the
// focus only from the learner beside a lesson (13.), each slider named with its readout's value (19.).

// 6. keys inside a widget belong to the widget: in command mode the notebook takes the arrow
// keys (select another cell) before a focused slider sees them. Lumino skips its shortcuts for
// an element marked data-lm-suppress-shortcuts; the mark goes on the focused element itself
// (the notebook's bindings match "… :focus" there, before Lumino looks at its parents).
document.addEventListener('focusin', (event) => {
  const target = event.target;
  if (target.closest && target.closest('.jupyter-widgets')) {
    target.setAttribute('data-lm-suppress-shortcuts', 'true');
  }
}, true);

// 13. JupyterLab focuses its splash and then its notebook as it starts (and a cell as one runs),
// and a focus() in this frame takes the keyboard from the lesson page around it: a key the
// learner pressed in the lesson then (an arrow on the panel's edge, an answer to the quiz) went
// to the notebook. So beside a lesson a focus() here only does something while the focus is
// already in this frame (the lesson's active element is the frame: a click or Tab into it, or the
// lesson's frame.focus()) or while a pointer is pressed in it (JupyterLab focuses a cell on
// mousedown, before the browser moves the focus in). Nothing ever moves the focus back.
if (window.frameElement) {
  let pressed = false;
  const learnerIsHere = () => {
    try { return pressed || window.parent.document.activeElement === window.frameElement; } catch (e) { return true; }
  };
  for (const type of ['pointerdown', 'mousedown', 'touchstart']) {
    window.addEventListener(type, () => { pressed = true; }, true);
  }
  for (const type of ['pointerup', 'pointercancel', 'mouseup', 'touchend', 'touchcancel']) {
    window.addEventListener(type, () => setTimeout(() => { pressed = false; }, 0), true);   // after its click
  }
  for (const proto of [HTMLElement.prototype, SVGElement.prototype]) {
    const focus = proto.focus;
    proto.focus = function (options) { if (learnerIsHere()) focus.call(this, options); };
  }
  const focusWindow = window.focus;
  window.focus = function () { if (learnerIsHere()) focusWindow.call(window); };
}

// 19. A notebook slider's handle (ipywidgets' noUiSlider) tells a screen reader its name and its
// value as the readout beside it says it. It had no name, its aria-valuetext was the raw float
// ("0.020000000000000004" where the readout says 0.020, "0.05" where it says 5%) and its
// aria-valuenow one decimal ("0.1" for 0.05). noUiSlider writes both again at each move: each
// write is answered. (Sliders come only from a cell that ran, so the watch starts with Python.)
function describeSlider(handle) {
  const row = handle.closest('.widget-slider');
  const slider = handle.closest('.noUi-target');
  if (!row || !slider || !slider.noUiSlider) return;
  const label = row.querySelector('.widget-label');
  const readout = row.querySelector('.widget-readout');
  const value = Number(slider.noUiSlider.get());
  const attributes = { 'aria-label': label && label.textContent.trim(),
                       'aria-valuenow': Number.isFinite(value) ? String(Number(value.toPrecision(12))) : null,
                       'aria-valuetext': readout && readout.textContent.trim() };
  for (const [name, text] of Object.entries(attributes)) {
    if (text && handle.getAttribute(name) !== text) handle.setAttribute(name, text);
  }
}
pythonReady.then(() => {
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === 'attributes') {
        if (record.target.classList.contains('noUi-handle')) describeSlider(record.target);
        continue;
      }
      for (const node of record.addedNodes) {
        if (node.nodeType === 1) node.querySelectorAll('.noUi-handle').forEach(describeSlider);
      }
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true,
                              attributeFilter: ['aria-valuetext', 'aria-valuenow'] });
  document.querySelectorAll('.noUi-handle').forEach(describeSlider);
});
