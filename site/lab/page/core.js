// The 實驗場's page script, in the files of site/lab/page/. site/lab/builder/build_lab.py joins them,
// in the order its PAGE_MODULES lists (this core first), into one specdec-lab.js, inside one function,
// and adds it to JupyterLite's notebook page (lab/notebooks/index.html), before JupyterLite's own
// code. It (in the file named)
//   1. says what Python fetches as it starts, in megabytes (../specdec-boot.json) [kernel-start.js];
//   2. follows the kernel's start (the worker's "Loading …" lines, the kernel status) [kernel-start.js];
//   3. starts the kernel as soon as JupyterLite can, and holds a Run pressed before Python is
//      ready until it is: no "Select Kernel" dialog, no lost run [kernel-start.js];
//   4. gives the lesson page the learner's notebook (window.specdecLab.notebook()) [notebook.js];
//   5. follows the lesson page's light or dark colours [looks.js];
//   6. lets a focused slider have the arrow keys [keyboard.js];
//   7. says what a cell's first import is loading (matplotlib and co., seconds before any output)
//      [kernel-start.js];
//   8. opens the notebook at the cell the lesson page's static preview had been scrolled to
//      [notebook.js; the message is heard in kernel-start.js's findNotebook];
//   9. keeps the learner's notebook for the tab's session: moving to another page and back (instant
//      navigation or not) shows it as it was left; a refresh restores the original (the lesson page's
//      lab-panel.js forgets what was kept when the page is reloaded) [notebook.js];
//  10. marks the notebook as zh-TW, so its punctuation takes the Traditional Chinese shapes
//      [kernel-start.js's findNotebook];
//  11. wraps printed output between words, not inside a number [looks.js];
//  12. notes in localStorage that the learner ran a cell of this notebook (the course's progress view)
//      [notebook.js];
//  13. beside a lesson, takes the keyboard focus only when the learner gives it to the lab [keyboard.js];
//  14. beside a lesson, keeps JupyterLab's spinners still (the lesson page shows the progress) [looks.js];
//  15. keeps JupyterLite's service worker from being replaced while the lab loads [service-worker.js];
//  16. draws the notebook's scrollbars itself (always shown, never a fading overlay) [looks.js];
//  17. draws the notebook's text in the lesson's font where it is installed [looks.js];
//  18. lets a display formula wider than the notebook scroll sideways instead of being cut [looks.js];
//  19. names each slider to a screen reader and gives it the value its readout shows [keyboard.js];
//  20. tells Python how wide the notebook is, so a phone gets figures laid out for it [phone-width.js];
//  21. says in Chinese what the lab writes in English past its translations (menus, a tooltip,
//      what a screen reader says) [chinese.js];
//  22. draws × ÷ ± · − ≈ ≤ ≥ in a Markdown cell at a Latin font's width, as the lesson does [looks.js].
// This file is what the others share: the progress state and report(), the notebook panel, mark().
// Progress goes to the lesson page as postMessage({specdecLab: state}): state.stage is one of
// ui | start | packages | ready | error, state.text says it in words, notebookShown and
// kernelReady say which steps are done, marks holds when each milestone happened (Date.now()).
// (document.currentScript is read here, first: it is set only while the script itself runs.)
const SCRIPT_URL = document.currentScript.src;
const APP_VERSION = document.currentScript.dataset.appVersion;   // JupyterLite's (build_lab.py)
const MB = (n) => (n / 1e6).toFixed(1);
const RUN_COMMAND = /^(notebook|runmenu):(run|restart-run|restart-and-run)/;
const state = { stage: 'ui', text: '載入筆記本介面…', queued: 0,
                notebookShown: false, kernelReady: false, marks: {} };
const mark = (name) => { if (!state.marks[name]) state.marks = { ...state.marks, [name]: Date.now() }; };
let panel = null;   // the NotebookPanel, once JupyterLite shows it
let markReady = null;
const pythonReady = new Promise((resolve) => { markReady = resolve; });
let packageSizes = {};   // lock name -> bytes, to put megabytes on "Loading …" lines

function report(patch) {
  Object.assign(state, patch);
  for (const key of ['notebookShown', 'kernelReady']) if (state[key]) mark(key);
  const message = { specdecLab: { ...state } };
  if (window.parent !== window) window.parent.postMessage(message, location.origin);
  window.dispatchEvent(new CustomEvent('specdec-lab', { detail: message.specdecLab }));
}
