// Python's start: what it fetches (1.), the worker's log lines (2.), the kernel started early and
// Runs held until it is ready (3.), the notebook found and its kernel followed, what a cell's first
// import loads (7.). The lesson page hears all of it through report().

// 1. what Python fetches as it starts, with sizes (../specdec-boot.json, written by the build).
// (Fetching those files early from this page was measured: it slowed the start by about 2 s.)
let boot = null;
const bootLoaded = fetch(new URL('specdec-boot.json', SCRIPT_URL))
  .then((r) => r.json())
  .then((manifest) => { boot = manifest; packageSizes = manifest.packages || {}; })
  .catch(() => {});   // a lab built without it still works, only without megabytes

function startText() {
  if (!boot) return '下載並啟動 Python…';
  const sum = (files) => files.reduce((total, f) => total + f.bytes, 0);
  const core = boot.files.filter((f) => !/\.(whl|zip)$/.test(f.name) || f.name === 'python_stdlib.zip');
  const wheels = boot.files.filter((f) => !core.includes(f));
  return `下載並啟動 Python：執行環境 ${MB(sum(core))} MB、套件 ${MB(sum(wheels))} MB…`;
}

// 2. the worker's log lines: "Loading numpy, matplotlib" -> what is being loaded, and its size
// (the largest named first: "Loading Pillow, contourpy, …" is matplotlib's, loaded when a cell
// first uses specdec_lab.plotting)
const NativeWorker = window.Worker;
window.Worker = class extends NativeWorker {
  constructor(url, options) {
    super(url, options);
    mark('worker');
    state.workers = (state.workers || 0) + 1;
    this.addEventListener('message', (event) => {
      const log = event.data && event.data._logMessage;
      if (log && typeof log.data === 'string') onWorkerLog(log.data);
    });
    if (state.stage === 'ui') {
      report({ stage: 'start', text: startText() });
      bootLoaded.then(() => { if (state.stage === 'start') report({ text: startText() }); });
    }
  }
};

function onWorkerLog(line) {
  const loading = /^Loading (.+)$/.exec(line);
  const size = (name) => packageSizes[name.toLowerCase()] || 0;
  const names = loading ? loading[1].split(', ').sort((a, b) => size(b) - size(a)) : [];
  if (loading) report({ stage: 'packages', text: `載入 ${packagesInWords(names)}…` });
}

// "numpy、matplotlib（12.3 MB）", or the first three and how many in all; the course's own
// font wheel by what it is (its package name, specdec-lab-fonts, says nothing to a learner)
const SHOWN_AS = { 'specdec-lab-fonts': '中文字型' };
function packagesInWords(names) {
  const bytes = names.reduce((sum, n) => sum + (packageSizes[n.toLowerCase()] || 0), 0);
  const shown = names.map((n) => SHOWN_AS[n.toLowerCase()] || n);
  const list = shown.length > 3 ? `${shown.slice(0, 3).join('、')} 等 ${shown.length} 個套件`
                                 : shown.join('、');
  return list + (bytes ? `（${MB(bytes)} MB）` : '');
}

// 3. and 4.: JupyterLite's app object (exposeAppInBrowser) is assigned before the app starts
let app = null;
Object.defineProperty(window, 'jupyterapp', {
  configurable: true,
  get: () => app,
  set: (value) => { app = value; onApp(value); },
});

function onApp(theApp) {
  mark('app');
  // (not sooner, at serviceManager.ready, before JupyterLab's plugins: the worker came 0.8 s
  // earlier in Chromium, but on a busy machine the kernel then started before JupyterLite's
  // service worker was in control, without the lab's files: "Pyodide contents will NOT be synced")
  theApp.started.then(() => { mark('started'); startKernelEarly(theApp); tellWidth(theApp); translateTheRest(theApp); });
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
  theApp.restored.then(() => { mark('restored'); findNotebook(); followLessonScheme(theApp); });
}

// The notebook's session would start its kernel only once the notebook is open and drawn;
// starting the session as soon as the kernel plugins are in lets Python load meanwhile (the
// notebook then finds the session running for its path and uses it). This page's own
// connection to it is closed at once: a second connection would answer the widgets' comm
// messages ("no such target") and break the sliders.
// The notebook looks for that session among those the session manager last listed, and that
// list is not refreshed while the page is hidden (JupyterLab's polls stand by); the early session
// can also come in between that look and the notebook's own start. A lab page opened in a
// background tab on a busy machine missed it so, and the notebook started a session of its own,
// under a temporary path. JupyterLite answers that with the running session of the same name, at
// the notebook's path; JupyterLab takes a session at another path than it asked for as a stale
// request and shuts it down: the only kernel was gone, and the lab never became ready, in the
// background or after ("e.session is null", "Session … not found"; or, had the early session
// not been in yet, a second Python). So the notebook's first start of its own gets the early
// session, once started, moved to the path it asked for (it then moves it back to its own).
let earlySession = null;   // the early session's model, until the notebook has a session
function startKernelEarly(theApp) {
  const path = new URLSearchParams(location.search).get('path');
  if (!path) return;
  const name = path.split('/').pop();
  const sessions = theApp.serviceManager.sessions;
  earlySession = sessions
    .startNew({ path, name, type: 'notebook', kernel: { name: 'python' } })
    .then((connection) => { mark('session'); const { model } = connection; connection.dispose(); return model; });
  earlySession.catch((err) => console.warn('specdec-lab: early kernel start failed', err));
  const startNew = sessions.startNew.bind(sessions);
  sessions.startNew = async (options, connectOptions) => {
    const early = earlySession;
    if (early && options && options.name === name && options.path !== path) {
      earlySession = null;
      const model = await early.catch(() => null);
      if (model) {
        const connection = sessions.connectTo({ ...connectOptions, model });
        try {
          await connection.setPath(options.path);
          return connection;
        } catch (err) { connection.dispose(); }   // gone meanwhile: a session of its own
      }
    }
    return startNew(options, connectOptions);
  };
}

function findNotebook() {
  const widget = app.shell.currentWidget;
  if (!widget || !widget.sessionContext || !widget.context) {
    setTimeout(findNotebook, 50);
    return;
  }
  panel = widget;
  // the notebook is in the course's language, zh-TW (mkdocs.yml; the page's own lang is the
  // lab's interface language, set by JupyterLab): so the browser draws ，。：「」 from the
  // Traditional Chinese font, centred as in the lesson, not the Simplified or Japanese forms
  panel.node.setAttribute('lang', 'zh-TW');
  mark('panel');
  narrowSignsInMarkdown(panel.content);
  panel.context.ready.then(() => { restoreKept(panel); report({ notebookShown: true }); });
  panel.sessionContext.ready.then(() => { earlySession = null; });   // it has one (startKernelEarly)
  refitToolbar(panel.toolbar);
  // 8. the lesson page's preview was scrolled to a cell: show the live notebook there
  window.addEventListener('message', (event) => {
    const index = event.data && event.data.specdecLabShowCell;
    if (event.source !== window.parent || event.origin !== location.origin || !Number.isInteger(index)) return;
    panel.revealed.then(() => showCell(panel.content, index)).catch(() => {});
  });
  const ctx = panel.sessionContext;
  const onStatus = () => {
    const status = ctx.session && ctx.session.kernel ? ctx.session.kernel.status : null;
    if (status === 'idle' && !state.kernelReady) {
      report({ stage: 'ready', text: 'Python 已就緒', kernelReady: true });
      markReady();
    } else if (status === 'idle' && state.stage === 'packages') {   // a package loaded for a cell
      report({ stage: 'ready', text: 'Python 已就緒' });
    } else if (status === 'dead') {
      report({ stage: 'error', text: 'Python 停止了：重新整理頁面再試一次' });
    }
  };
  ctx.statusChanged.connect(onStatus);
  ctx.kernelChanged.connect(onStatus);
  ctx.sessionChanged.connect(onStatus);
  ctx.kernelChanged.connect((_, change) => { if (change.newValue) watchImports(change.newValue); });
  if (ctx.session && ctx.session.kernel) watchImports(ctx.session.kernel);
  onStatus();
}

// 7. A cell's first import of a package Python has not loaded yet keeps the kernel busy for
// seconds before any output, and the kernel says nothing meanwhile: say what it is loading, from
// the code sent and specdec-boot.json's import map. (The packages of specdec_lab.plotting load
// before the first cell that uses it, through the worker's loadPackage: its log line, 2. above.)
let loadedPackages = null;    // lock names loaded, or being loaded
const watched = new WeakSet();
function importedNames(code) {
  const names = [];
  for (const m of code.matchAll(/^\s*from\s+([A-Za-z_]\w*)/gm)) names.push(m[1]);
  for (const m of code.matchAll(/^\s*import\s+([^\n#;]+)/gm)) {
    for (const part of m[1].split(',')) names.push(part.trim().split(/[.\s]/)[0]);
  }
  return names;
}
function watchImports(kernel) {
  if (watched.has(kernel)) return;
  watched.add(kernel);
  kernel.anyMessage.connect((_, { msg, direction }) => {
    if (direction === 'send' && msg.header.msg_type === 'execute_request') recordRun();
    if (direction !== 'send' || msg.header.msg_type !== 'execute_request' || !boot || !boot.imports) return;
    if (!loadedPackages) loadedPackages = new Set(boot.at_start || []);
    const wanted = [];
    const imports = [];
    for (const name of importedNames(msg.content.code || '')) {
      const fresh = (boot.imports[name] || []).filter((pkg) => !loadedPackages.has(pkg));
      fresh.forEach((pkg) => { loadedPackages.add(pkg); wanted.push(pkg); });
      if (fresh.length) imports.push(name);
    }
    if (wanted.length) {
      report({ stage: 'packages', text: `第一次 import ${imports.join('、')}：載入 ${packagesInWords(wanted)}…` });
    }
  });
}
