// The 實驗場's page script. site/lab/builder/build_lab.py adds it to JupyterLite's notebook page
// (lab/notebooks/index.html), before JupyterLite's own code. It
//   1. says what Python fetches as it starts, in megabytes (../specdec-boot.json);
//   2. follows the kernel's start (the worker's "Loading …" lines, the kernel status);
//   3. starts the kernel as soon as JupyterLite can, and holds a Run pressed before Python is
//      ready until it is: no "Select Kernel" dialog, no lost run;
//   4. gives the lesson page the learner's notebook (window.specdecLab.notebook());
//   5. follows the lesson page's light or dark colours; 6. lets a focused slider have the arrow keys;
//   7. says what a cell's first import is loading (matplotlib and co., seconds before any output);
//   8. opens the notebook at the cell the lesson page's static preview had been scrolled to;
//   9. keeps the learner's notebook for the tab's session: moving to another page and back (instant
//      navigation or not) shows it as it was left; a refresh restores the original (the lesson page's
//      lab-panel.js forgets what was kept when the page is reloaded);
//  10. marks the notebook as zh-TW, so its punctuation takes the Traditional Chinese shapes;
//  11. wraps printed output between words, not inside a number;
//  12. notes in localStorage that the learner ran a cell of this notebook (the course's progress view);
//  13. beside a lesson, takes the keyboard focus only when the learner gives it to the lab;
//  14. beside a lesson, keeps JupyterLab's spinners still (the lesson page shows the progress);
//  15. keeps JupyterLite's service worker from being replaced while the lab loads;
//  16. draws the notebook's scrollbars itself (always shown, never a fading overlay);
//  17. draws the notebook's text in the lesson's font where it is installed;
//  18. lets a display formula wider than the notebook scroll sideways instead of being cut;
//  19. names each slider to a screen reader and gives it the value its readout shows;
//  20. tells Python how wide the notebook is, so a phone gets figures laid out for it;
//  21. says in Chinese what the lab writes in English past its translations (menus, a tooltip,
//      what a screen reader says);
//  22. draws × ÷ ± · − ≈ ≤ ≥ in a Markdown cell at a Latin font's width, as the lesson does.
// Progress goes to the lesson page as postMessage({specdecLab: state}): state.stage is one of
// ui | start | packages | ready | error, state.text says it in words, notebookShown and
// kernelReady say which steps are done, marks holds when each milestone happened (Date.now()).
(function () {
  'use strict';
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

  // 15. JupyterLite's service worker (through it the kernel reads the lab's files: a learner's
  // upload) registers on the first lab page a browser opens. On the next, JupyterLite finds it in
  // control but no version noted for it in localStorage (it notes one only then), so it unregisters
  // it and registers it again while the lab loads: in WebKit such a page sometimes never showed the
  // notebook, or never started the kernel. So the version of this JupyterLite is noted for the
  // worker in control first, as JupyterLite itself would note it, and the worker stays. (Another
  // version noted means another JupyterLite: that one still starts its worker afresh.)
  try {
    const controller = navigator.serviceWorker && navigator.serviceWorker.controller;
    const key = controller && `${controller.scriptURL}-version`;
    if (key && APP_VERSION && localStorage.getItem(key) === null) localStorage.setItem(key, APP_VERSION);
  } catch (e) { /* storage off: JupyterLite decides */ }

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

  // 5. the lab in the lesson's colours: JupyterLab's dark theme while the lesson page (Material,
  // body[data-md-color-scheme]) is dark, its light theme otherwise, following the page's toggle.
  // One theme change at a time, and only once the lab shows a theme: JupyterLab covers the page
  // while it loads a theme and takes the cover away a frame after the theme is on, and a second
  // load started before that puts up the same cover twice and takes it away twice, the second time
  // throwing "Failed to execute 'removeChild' on 'Node'" (Notebook 7's splash). A change asked for
  // before the first theme was on was such a second load, of the same theme (seen in CI runs).
  function followLessonScheme(theApp) {
    let lesson = null;
    try { lesson = window.parent !== window ? window.parent.document.body : null; } catch (e) { /* another origin */ }
    if (!lesson || !theApp.commands.hasCommand('apputils:change-theme')) return;
    const shown = () => document.body.dataset.jpThemeName;   // set by JupyterLab once a theme is on
    let loading = false;
    const apply = () => {
      const theme = lesson.getAttribute('data-md-color-scheme') === 'slate' ? 'JupyterLab Dark' : 'JupyterLab Light';
      if (loading || !shown() || shown() === theme) return;
      loading = true;
      theApp.commands.execute('apputils:change-theme', { theme }).catch(() => { loading = false; });
    };
    // a theme is on: its cover goes in the next frame, before this callback (queued after it)
    new MutationObserver(() => requestAnimationFrame(() => { loading = false; apply(); }))
      .observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-name'] });
    new MutationObserver(apply).observe(lesson, { attributes: true, attributeFilter: ['data-md-color-scheme'] });
    requestAnimationFrame(apply);   // after the frame that takes away the first theme's cover
  }

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

  // 12. The notebook's toolbar folds what does not fit into "⋯", measuring its items when its own
  // size changes. WebKit had it measure them before they were drawn (0 px wide), and its size never
  // changed after: on a phone the kernel's name and status wrapped to a second line, on top of the
  // notebook. So it measures again whenever one of its items (the kernel's name is one added
  // later) changes width.
  function refitToolbar(toolbar) {
    let Widget = toolbar && toolbar.constructor;
    while (Widget && !Widget.ResizeMessage) Widget = Object.getPrototypeOf(Widget);
    if (!Widget || typeof ResizeObserver === 'undefined') return;
    const widths = new WeakMap();
    const observer = new ResizeObserver((entries) => {
      const changed = entries.filter((e) => widths.get(e.target) !== e.contentRect.width);
      entries.forEach((e) => widths.set(e.target, e.contentRect.width));
      const { clientWidth, clientHeight } = toolbar.node;
      if (changed.length && clientWidth > 0 && !toolbar.isDisposed) {
        toolbar.processMessage(new Widget.ResizeMessage(clientWidth, clientHeight));
      }
    });
    const observeItems = () => { for (const item of toolbar.node.children) observer.observe(item); };
    new MutationObserver(observeItems).observe(toolbar.node, { childList: true });   // items added later
    observeItems();
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

  // In a narrow side panel, two of the notebook app's badges are noise: "Not Trusted" (only about
  // JavaScript inside outputs, which these notebooks do not have) and the fading kernel-status
  // badge, which covers the menu bar on a phone (the lesson page shows Python's progress).
  // 11. JupyterLab wraps printed output anywhere (word-break: break-all): a long line of Chinese
  // with numbers broke "p < 1e-300" into "1e-3" and "00" in the narrow panel. Here it wraps between
  // words and characters, as the lesson does; inside a word only when nothing else fits.
  // 14. Beside a lesson nothing here loops while Python starts: JupyterLab's splash spinner (under
  // the lesson's preview of the notebook) and the kernel indicator's spinner in the toolbar, which
  // turns as long as the kernel is starting or busy, stand still (the indicator: a ring with a gap,
  // the ✓ once idle). The lesson page's panel says how the start is going, with the seconds, and a
  // running cell shows [*]. (In WebKit without a GPU every frame of a turning spinner was composited
  // on the CPU Python's start needs: benchmarks/webkit_probe.py --ab.)
  // 16. The notebook shows a scrollbar of its own, always there, so a learner sees in the narrow
  // panel that there is more; a code cell's long line wraps instead of scrolling sideways
  // (site/lab/overrides.json: codeCellConfig.lineWrap). WebKit on Linux draws overlay scrollbars
  // instead: each one that appears is shown, and 2 s later fades out at 60 frames a second for 3 s
  // (WebCore's ScrollbarsControllerGeneric). The notebook's and a long code line's appeared while
  // Python starts, and without a GPU each of those frames was composited on the CPU that Python
  // needed: about 2 CPU s, and the first output about a tenth later (benchmarks/webkit_probe.py
  // --ab). Chromium and WebKit take ::-webkit-scrollbar; Firefox keeps its own. The thumb has the
  // theme's secondary text colour (light and dark).
  // 17. Where Noto Sans CJK TC is installed (Linux), it draws the notebook's text, Latin too, as in
  // the lesson (site/assets/course.css says why: WebKitGTK looks up every family before the one that
  // draws); elsewhere JupyterLab's own stack, which follows it. (The theme settings' "overrides"
  // are read from the learner's own settings only, not from overrides.json.) html:root outranks
  // the theme's :root, which loads later.
  // A slider's handle is 24 px under a finger (WCAG 2.5.8's smallest target; ipywidgets' is 16 px).
  // 18. A display formula wider than the notebook (MathJax's, in a Markdown cell: lesson 1's
  // E[每輪 token 數] = 1 + α + ⋯ at 390 px) was cut at the cell's edge with nothing saying there
  // was more, and the rest out of reach; it scrolls sideways now (on a desktop its scrollbar, 16.,
  // shows that it does; a phone shows its overlay scrollbar once it is swiped).
  // The File menu's "New Console for …" has no label where there is no console (the lab has none):
  // it was an empty, disabled row. Hidden here: overrides.json can drop a menu item too, but then
  // JupyterLab warns on every load that the item is "duplicated".
  const FONTS = "'Noto Sans CJK TC', system-ui, -apple-system, blinkmacsystemfont, 'Segoe UI', helvetica,"
    + " arial, sans-serif, 'Apple Color Emoji', 'Segoe UI Emoji', 'Segoe UI Symbol'";
  const style = document.createElement('style');
  style.textContent = '.jp-NotebookTrustedStatus, .jp-NotebookKernelStatus { display: none; }\n'
    + '.lm-Menu-item[data-command="filemenu:create-console"] { display: none; }\n'
    + 'body .jp-OutputArea-output pre { word-break: normal; overflow-wrap: anywhere; }\n'
    + '.jp-RenderedMarkdown mjx-container[display="true"] { overflow-x: auto; overflow-y: hidden; }\n'
    + 'body { text-spacing-trim: space-all; }\n'     // every full-width mark a full em, as course.css
    + '::-webkit-scrollbar { width: 10px; height: 10px; }\n'
    + '::-webkit-scrollbar-track, ::-webkit-scrollbar-corner { background: transparent; }\n'
    + '::-webkit-scrollbar-thumb { background: var(--jp-ui-font-color2, #757575); border: 2px solid transparent;'
    + ' background-clip: content-box; border-radius: 5px; }'
    + (window.frameElement ? '\nbody .jp-KernelStatus-spinner, body .jp-SpinnerContent { animation: none; }' : '')
    + `\nhtml:root { --jp-ui-font-family: ${FONTS}; --jp-content-font-family: ${FONTS}; }`
    + '\n@media (pointer: coarse) { html:root { --jp-widgets-slider-handle-size: 24px; } }'
    + `\n.jp-RenderedMarkdown .sd-sign { font-family: 'Liberation Sans', 'Noto Sans', 'DejaVu Sans', ${FONTS}; }`
    + `\n.jp-RenderedMarkdown .sd-sup { font-family: 'DejaVu Sans', 'Noto Sans', ${FONTS}; }`;
  document.head.append(style);

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

  // 20. How wide the notebook is, for its figures: in a narrow one (a phone's) specdec_lab's
  // figures are laid out for it, two panels one above the other (specdec_lab/plotting/style.py);
  // shrunk to a phone's width, the ones made for a wide panel had 6-8 px labels. The width goes
  // into the lab's drive (this tab's memory, beside the notebook), where Python reads it as it
  // makes a figure: no message to the kernel, nothing in the notebook, there again after a restart.
  const WIDTH_FILE = '.specdec-lab-width';
  function tellWidth(theApp) {
    let told = null;
    const tell = () => {
      const width = String(document.documentElement.clientWidth);
      if (width === told || width === '0') return;
      told = width;
      theApp.serviceManager.contents.save(WIDTH_FILE, { type: 'file', format: 'text', content: width })
        .catch((err) => { told = null; console.info('specdec-lab: the notebook width was not written', err); });
    };
    tell();
    let timer = null;
    window.addEventListener('resize', () => { clearTimeout(timer); timer = setTimeout(tell, 250); });
  }

  // 21. The lab's interface is in Chinese through its translator (the zh-TW language pack and
  // site/lab/ui-zh_TW.json, both in api/translations/zh_TW.json), and some of its English never
  // passes it. JupyterLab makes its registry of file types, with their names, before any plugin
  // (the translator is one) has run: the File menu's items named after the notebook's file type
  // said "儲存 Notebook", "另存 Notebook 為…", "從硬碟上重新載入 Notebook" and "將 Notebook 還原到
  // 檢查點…". So once the plugins are in, every file type's name is looked up again ("Notebook" ->
  // 筆記本; one already translated stays as it is). Notebook 7 labels View > 右側欄's items
  // `Show ${caption}`, English around a translated name ("Show 筆記本工具"): that label goes
  // through its msgid "Show %1" here. And a few titles and aria-labels are written in English
  // without the translator: JupyterLite's kernel indicator ("Click to open kernel logs"), and what
  // a screen reader says for the notebook and its toolbar ("main area content", "main area
  // toolbar", and "More commands" for the ⋯ that a narrow toolbar folds its items into: JupyterLab
  // gives the notebook's panel no translator), its cells ("Cells"), a Markdown or raw cell (no
  // translator either; a code cell says 程式碼儲存格內容) and the active cell's toolbar ("Cell
  // toolbar"; the same): such a value is translated wherever it is written.
  const TOGGLE_PANEL = 'application:toggle-panel';
  const UNTRANSLATED = [   // [domain, attribute, English]
    ['jupyterlite', 'title', 'Click to open kernel logs'],
    ['jupyterlab', 'aria-label', 'main area content'],
    ['jupyterlab', 'aria-label', 'main area toolbar'],
    ['jupyterlab', 'title', 'More commands'],
    ['jupyterlab', 'aria-label', 'More commands'],
    ['jupyterlab', 'aria-label', 'Cells'],
    ['jupyterlab', 'aria-label', 'Markdown Cell Content'],
    ['jupyterlab', 'aria-label', 'Raw Cell Content'],
    ['jupyterlab', 'aria-label', 'Cell toolbar'],
  ];
  function translateTheRest(theApp) {
    const translator = theApp.shell && theApp.shell.translator;   // Notebook's shell has the lab's
    if (!translator) return;
    const lab = translator.load('jupyterlab');
    for (const fileType of theApp.docRegistry.fileTypes()) fileType.displayName = lab.__(fileType.displayName);
    const notebook = translator.load('notebook');
    const label = theApp.commands.label.bind(theApp.commands);
    theApp.commands.label = (id, args) => {
      const text = label(id, args);
      const shown = id === TOGGLE_PANEL && /^Show (.+)$/.exec(text);
      return shown ? notebook.__('Show %1', shown[1]) : text;
    };
    const selector = UNTRANSLATED.map(([, name, english]) => `[${name}="${english}"]`).join(', ');
    const translate = (element) => {
      for (const [domain, name, english] of UNTRANSLATED) {
        if (element.getAttribute(name) === english) element.setAttribute(name, translator.load(domain).__(english));
      }
    };
    new MutationObserver((records) => {
      for (const record of records) {
        if (record.type === 'attributes') {
          if (record.target.matches(selector)) translate(record.target);
          continue;
        }
        for (const node of record.addedNodes) {
          if (node.nodeType !== 1) continue;
          if (node.matches(selector)) translate(node);
          node.querySelectorAll(selector).forEach(translate);
        }
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true,
                                attributeFilter: ['title', 'aria-label'] });
    document.querySelectorAll(selector).forEach(translate);
  }

  // 22. Where Noto Sans CJK TC draws the notebook's text (17.), it gives × ÷ ± · − ≈ ≤ ≥ a full em,
  // as it does ideographs: a Markdown cell's "(1 + K·c) ÷ E" read "(1 + K・c) ÷ E". The lesson and
  // the notebook's preview wrap each in <span class="sd-sign"> as they are built
  // (site/hooks/signs.py), and each run of superscript digits in <span class="sd-sup">; the live
  // notebook's Markdown gets the same spans as JupyterLab renders it, drawn by the fonts the
  // lesson's course.css names (style above). Only text: never inside code, a formula (MathJax's
  // output), or a text still holding TeX (MathJax typesets it next, and a span would break it: its
  // text around the formula is wrapped once MathJax has replaced the TeX).
  // (the same signs and superscripts as site/hooks/signs.py's SIGNS and SUPERSCRIPTS, the same
  // fonts as course.css's .sd-sign and .sd-sup: tests/test_lab_build.py checks that they agree)
  const SIGN = /[×÷±·−≈≤≥⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]/;
  const SIGNS = /([×÷±·−≈≤≥])|([⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)/g;
  const NOT_HERE = 'code, pre, mjx-container, math, script, style, textarea, .sd-sign, .sd-sup';
  const TEX = /\$|\\\(|\\\[/;
  function narrowSigns(markdown) {
    const walker = document.createTreeWalker(markdown, NodeFilter.SHOW_TEXT);
    const texts = [];
    while (walker.nextNode()) {
      const text = walker.currentNode;
      if (SIGN.test(text.data) && !TEX.test(text.data) && !text.parentElement.closest(NOT_HERE)) texts.push(text);
    }
    for (const text of texts) {
      const parts = document.createDocumentFragment();
      let at = 0;
      for (const found of text.data.matchAll(SIGNS)) {
        parts.append(text.data.slice(at, found.index));
        const span = document.createElement('span');
        span.className = found[1] ? 'sd-sign' : 'sd-sup';
        span.textContent = found[0];
        parts.append(span);
        at = found.index + found[0].length;
      }
      parts.append(text.data.slice(at));
      text.replaceWith(parts);
    }
  }
  // Through JupyterLab's renderer, not a MutationObserver on the notebook: with one observing it
  // as the notebook is first drawn, your-gpu's first live output came 0.6 s later in WebKit and
  // 0.4 s in Firefox (benchmarks/engines.py --variant, 3 rounds, every round later); this way
  // it did not (benchmarks/README.md). Each Markdown renderer (cells and Markdown outputs) narrows
  // its node once it has rendered, and MathJax's typesetter each node once it has typeset it.
  function narrowSignsInMarkdown(notebook) {
    const rendermime = notebook.rendermime;
    const factory = rendermime && rendermime.getFactory('text/markdown');
    if (factory && !factory.narrowsSigns) {
      const createRenderer = factory.createRenderer.bind(factory);
      factory.createRenderer = (options) => {
        const renderer = createRenderer(options);
        const renderModel = renderer.renderModel.bind(renderer);
        renderer.renderModel = (model, ...rest) => renderModel(model, ...rest).then((done) => {
          narrowSigns(renderer.node);
          return done;
        });
        return renderer;
      };
      factory.narrowsSigns = true;
    }
    const typesetter = rendermime && rendermime.latexTypesetter;
    if (typesetter && !typesetter.narrowsSigns) {
      const typeset = typesetter.typeset.bind(typesetter);
      typesetter.typeset = (node) => Promise.resolve(typeset(node)).then(() => narrowSigns(node));
      typesetter.narrowsSigns = true;
    }
    notebook.node.querySelectorAll('.jp-RenderedMarkdown').forEach(narrowSigns);
  }

  window.specdecLab = {
    state: () => ({ ...state }),
    /** The notebook as the learner has it now (nbformat JSON), or null before it is shown. */
    notebook: () => (panel && panel.context.model ? panel.context.model.toJSON() : null),
    path: () => (panel ? panel.context.path : null),
  };

})();
