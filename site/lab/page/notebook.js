// The learner's notebook: opened at the cell the lesson's preview showed (8.), a run noted for the
// progress view (12.), kept for the tab across pages (9.), handed to the lesson page (4.).

// The notebook draws the cells near the view first and the others later, when idle (late on a
// busy page), which moves what is on screen as their real heights replace estimates: for 15 s
// the cell is put back on top whenever it has moved, until the learner scrolls, clicks or types.
function showCell(notebook, index) {
  const outer = notebook.outerNode;
  let learnerMoved = false;
  for (const type of ['wheel', 'touchstart', 'pointerdown', 'keydown']) {
    outer.addEventListener(type, () => { learnerMoved = true; }, { once: true, passive: true });
  }
  const align = (tries) => {
    if (learnerMoved || tries > 60) return;
    const cell = notebook.widgets[index];
    const off = cell && cell.node.isConnected
      ? Math.abs(cell.node.getBoundingClientRect().top - outer.getBoundingClientRect().top) : Infinity;
    const again = () => setTimeout(() => align(tries + 1), 250);
    if (off > 30) notebook.scrollToItem(index, 'start', 0).then(again, again);   // margin 0: on top
    else again();
  };
  align(0);
}

// 12. the course's progress view (the lesson site's progress.js, same origin) shows which lab
// notebooks the learner has run: the first cell run of a notebook is noted in this browser's
// localStorage (nothing leaves it), under the notebook's name, as the lessons' `lab:` writes it.
function recordRun() {
  const name = (panel ? panel.context.path : new URLSearchParams(location.search).get('path') || '').split('/').pop();
  const key = 'specdec-lab:progress:lab:' + name;
  try {
    if (name && !localStorage.getItem(key)) localStorage.setItem(key, JSON.stringify({ at: Date.now() }));
  } catch (e) { /* storage off */ }
}

// 9. The lab keeps its contents in memory (jupyter-lite.json): a notebook left for another page
// would be gone. So the learner's notebook, once changed, is kept in sessionStorage (this tab
// only) under its path, and shown instead of the original when the lab opens it again. Widget
// views are left out (their models live in the kernel that is gone; the figure's PNG beside them
// stays); if the tab's storage is full, the cells are kept without their outputs.
const KEPT = 'specdec-lab:kept:';
if (window.parent === window && performance.getEntriesByType('navigation')
    .some((entry) => entry.type === 'reload')) {
  forgetKept();   // the lab opened on its own and reloaded (beside a lesson, lab-panel.js does this)
}
// (registered before JupyterLab's own listener, so that one is skipped while the lesson page moves on)
window.addEventListener('beforeunload', (event) => {
  let moving = false;
  try { moving = window.parent !== window && window.parent.specdecLabMoving === true; } catch (e) { /* another origin */ }
  if (moving) event.stopImmediatePropagation();
});
function forgetKept() {
  try {
    for (const key of Object.keys(sessionStorage)) if (key.startsWith(KEPT)) sessionStorage.removeItem(key);
  } catch (e) { /* storage off */ }
}
function withoutWidgetViews(notebook) {
  const view = 'application/vnd.jupyter.widget-view+json';
  if (notebook.metadata) delete notebook.metadata.widgets;
  for (const cell of notebook.cells) {
    if (!cell.outputs) continue;
    cell.outputs = cell.outputs.filter((output) => {
      if (!output.data || !output.data[view]) return true;
      delete output.data[view];
      return Object.keys(output.data).some((mime) => mime !== 'text/plain');
    });
  }
  return notebook;
}
function keep(path, model) {
  const notebook = withoutWidgetViews(model.toJSON());
  try {
    sessionStorage.setItem(KEPT + path, JSON.stringify(notebook));
  } catch (e) {
    try {
      for (const cell of notebook.cells) if (cell.outputs) { cell.outputs = []; cell.execution_count = null; }
      sessionStorage.setItem(KEPT + path, JSON.stringify(notebook));
    } catch (e2) { console.info('specdec-lab: this tab cannot keep the notebook', e2); }
  }
}
function restoreKept(notebookPanel) {
  const { path, model } = notebookPanel.context;
  let kept = null;
  try { kept = JSON.parse(sessionStorage.getItem(KEPT + path) || 'null'); } catch (e) { /* none */ }
  if (kept) {
    model.fromJSON(kept);
    model.dirty = true;        // (as it was: the browser still asks before a refresh drops it)
    state.keptNotebook = true;
  }
  let timer = null;
  const keepNow = () => { clearTimeout(timer); timer = null; keep(path, model); };
  model.contentChanged.connect(() => {
    clearTimeout(timer);
    timer = setTimeout(keepNow, 300);
  });
  // the frame goes away with its page (instant navigation removes it): keep the last keystrokes
  window.addEventListener('pagehide', () => { if (timer) keepNow(); });
}

window.specdecLab = {
  state: () => ({ ...state }),
  /** The notebook as the learner has it now (nbformat JSON), or null before it is shown. */
  notebook: () => (panel && panel.context.model ? panel.context.model.toJSON() : null),
  path: () => (panel ? panel.context.path : null),
};
