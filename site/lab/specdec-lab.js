// The 實驗場's page script. site/lab/build_lab.py adds it to JupyterLite's notebook page
// (lab/notebooks/index.html), before JupyterLite's own code. It
//   1. fetches the files Python needs as it starts (../specdec-boot.json) while the notebook
//      interface loads, and counts the megabytes;
//   2. follows the kernel's start (the worker's "Loading …" lines, the kernel status);
//   3. holds a Run pressed before the kernel exists until it does: no "Select Kernel" dialog;
//   4. gives the lesson page the learner's notebook (window.specdecLab.notebook()).
// Progress goes to the lesson page as postMessage({specdecLab: state}): state.stage is one of
// ui | download | start | packages | ready | busy | error, state.text says it in words, and
// notebookShown / downloaded / kernelReady say which steps are done.
(function () {
  'use strict';
  const SCRIPT_URL = document.currentScript.src;
  const MB = (n) => (n / 1e6).toFixed(1);
  const RUN_COMMAND = /^(notebook|runmenu):(run|restart-run|restart-and-run)/;
  const state = { stage: 'ui', text: '載入筆記本介面…', loaded: 0, total: 0, queued: 0,
                  notebookShown: false, downloaded: false, kernelReady: false };
  let panel = null;   // the NotebookPanel, once JupyterLite shows it
  let markReady = null;
  const pythonReady = new Promise((resolve) => { markReady = resolve; });
  let packageSizes = {};   // lock name -> bytes, to put megabytes on "Loading …" lines

  function report(patch) {
    Object.assign(state, patch);
    const message = { specdecLab: { ...state } };
    if (window.parent !== window) window.parent.postMessage(message, location.origin);
    window.dispatchEvent(new CustomEvent('specdec-lab', { detail: message.specdecLab }));
  }

  // 1. the files the kernel will fetch, fetched now (low priority: the interface comes first)
  async function prefetch() {
    let manifest;
    try {
      manifest = await (await fetch(new URL('specdec-boot.json', SCRIPT_URL))).json();
    } catch (err) {
      return;   // a lab built without the manifest still works, only without megabytes
    }
    const base = new URL(manifest.base, SCRIPT_URL);
    packageSizes = manifest.packages || {};
    const total = manifest.files.reduce((sum, f) => sum + f.bytes, 0);
    let loaded = 0;
    let shown = 0;
    const show = (force) => {
      const now = performance.now();
      if (!force && now - shown < 100) return;   // about ten updates a second
      shown = now;
      if (state.stage === 'download') {
        report({ loaded, total, text: `下載 Python 執行環境 ${MB(loaded)} / ${MB(total)} MB` });
      } else {
        report({ loaded, total });
      }
    };
    report({ stage: 'download', total });
    const queue = manifest.files.slice();
    async function fetchQueue() {
      for (let file = queue.shift(); file; file = queue.shift()) {
        try {
          const response = await fetch(new URL(file.name, base), { priority: 'low' });
          const reader = response.body.getReader();
          for (let r = await reader.read(); !r.done; r = await reader.read()) {
            loaded += r.value.length;
            show(false);
          }
        } catch (err) {
          loaded += file.bytes;   // the kernel will fetch it itself
        }
      }
    }
    await Promise.all([fetchQueue(), fetchQueue(), fetchQueue(), fetchQueue()]);
    show(true);
    report({ downloaded: true });
    if (state.stage === 'download') report({ stage: 'start', text: '啟動 Python…' });
  }

  // 2. the worker's log lines: "Loading numpy, matplotlib" -> what is being loaded, and its size
  const NativeWorker = window.Worker;
  window.Worker = class extends NativeWorker {
    constructor(url, options) {
      super(url, options);
      this.addEventListener('message', (event) => {
        const log = event.data && event.data._logMessage;
        if (log && typeof log.data === 'string') onWorkerLog(log.data);
      });
      if (state.stage === 'ui' || state.stage === 'download') report({ stage: 'start', text: '啟動 Python…' });
    }
  };

  function onWorkerLog(line) {
    const loading = /^Loading (.+)$/.exec(line);
    if (!loading || state.stage === 'ready') return;
    const names = loading[1].split(', ');
    const bytes = names.reduce((sum, n) => sum + (packageSizes[n.toLowerCase()] || 0), 0);
    const list = names.length > 3 ? `${names.slice(0, 3).join('、')} 等 ${names.length} 個套件`
                                   : names.join('、');
    report({ stage: state.stage === 'busy' ? 'busy' : 'packages',
             text: `載入 ${list}${bytes ? `（${MB(bytes)} MB）` : ''}…` });
  }

  // 3. and 4.: JupyterLite's app object (exposeAppInBrowser) is assigned before the app starts
  let app = null;
  Object.defineProperty(window, 'jupyterapp', {
    configurable: true,
    get: () => app,
    set: (value) => { app = value; onApp(value); },
  });

  function onApp(theApp) {
    // A Run pressed before the session has its kernel opens "Select Kernel" (no kernel chosen yet)
    // or is silently dropped (kernel chosen, still being created); one pressed while Python loads
    // would clear the stored outputs long before new ones come. So a Run waits for Python.
    const execute = theApp.commands.execute.bind(theApp.commands);
    theApp.commands.execute = async (id, args) => {
      if (RUN_COMMAND.test(id) && !state.kernelReady) {
        report({ queued: state.queued + 1 });
        await pythonReady;
        report({ queued: state.queued - 1 });
      }
      return execute(id, args);
    };
    theApp.restored.then(findNotebook);
  }

  function findNotebook() {
    const widget = app.shell.currentWidget;
    if (!widget || !widget.sessionContext || !widget.context) {
      setTimeout(findNotebook, 50);
      return;
    }
    panel = widget;
    panel.context.ready.then(() => report({ notebookShown: true }));
    const ctx = panel.sessionContext;
    const onStatus = () => {
      const status = ctx.session && ctx.session.kernel ? ctx.session.kernel.status : null;
      if (status === 'idle' && !state.kernelReady) {
        report({ stage: 'ready', text: 'Python 已就緒', kernelReady: true });
        markReady();
      } else if (status === 'busy' && state.kernelReady) {
        report({ stage: 'busy', text: '執行中…' });
      } else if (status === 'idle' && state.stage === 'busy') {
        report({ stage: 'ready', text: 'Python 已就緒' });
      } else if (status === 'dead') {
        report({ stage: 'error', text: 'Python 停止了：重新整理頁面再試一次' });
      }
    };
    ctx.statusChanged.connect(onStatus);
    ctx.kernelChanged.connect(onStatus);
    ctx.sessionChanged.connect(onStatus);
    onStatus();
  }

  window.specdecLab = {
    state: () => ({ ...state }),
    /** The notebook as the learner has it now (nbformat JSON), or null before it is shown. */
    notebook: () => (panel && panel.context.model ? panel.context.model.toJSON() : null),
    path: () => (panel ? panel.context.path : null),
  };

  prefetch();
})();
