// The kernel worker's Pyodide loader. jupyter-lite.json's pyodideUrl points here, beside
// pyodide.js; the worker of jupyterlite-pyodide-kernel 0.6.1 runs importScripts(pyodideUrl) and
// calls self.loadPyodide({indexURL: this folder, ...loadPyodideOptions}).
//
// The build (site/lab/builder/build_lab.py) fills in CONFIG, one JSON object: runtime.toml's
// [kernel] settings, later.json, the files fetched after the start, where the name hints are.
// Python's part is the lab's own package specdec_kernel (site/lab/kernel/specdec_kernel/), a
// wheel in the lab's lock: loaded as soon as Python is up and started with one call,
// specdec_kernel.start(CONFIG), before Pyodide loads the kernel's packages. What stays here is what
// only JavaScript can do:
//   - keep runtime.toml [kernel] not_loaded and loaded_on_import out of what Pyodide loads: the
//     worker installs jedi as the kernel starts unless loadPyodideOptions.packages names it, so the
//     built jupyter-lite.json names them;
//   - compile shared libraries synchronously, and make finalizers wait for the GIL (below);
//   - fetch the first figure's files into the HTTP cache once the start's are in;
//   - before each cell, load the packages of runtime.toml [kernel.loaded_on_use] that it needs
//     (specdec_kernel says which; the worker's loadPackage says "Loading …", which the lab's page
//     script shows);
//   - once the kernel's start ("import pyodide_kernel") has run, tell specdec_kernel, with the name
//     hints read from the lab's specdec-name-hints.json (outside this content-addressed folder,
//     whose name must not change when a notebook does).
(function () {
  const CONFIG = ["CONFIG"];
  const QUIETLY = { messageCallback() {} };     // as loadPyodide loads its packages
  // Every PyProxy made here is destroyed once used (the Kernel object is kept for good): one left to the
  // garbage collector is freed by a finalizer that needs the GIL, and WebKit can run finalizers
  // while Python has let the GIL go (a file of the lab's drive read through a synchronous
  // request): "NoGilError: Attempted to use PyProxy when Python GIL not held", uncaught.
  // That finalizer still runs for the PyProxies the kernel itself leaves to the collector, and
  // WebKit runs it while Python has let the GIL go: Python calls a file operation of the lab's
  // drive with the GIL released (as CPython does around every blocking call), the drive reads
  // through a synchronous request, and (most likely; not caught in the act) WebKit's worker runs
  // finalization callbacks in the nested run loop of that request. So every FinalizationRegistry
  // made once the loader starts waits for the GIL: a callback that finds it released is run
  // again in a later task.
  function finalizersWaitForTheGil() {
    const Registry = self.FinalizationRegistry;
    if (!Registry || Registry.waitsForTheGil) return;
    let module = null;
    const held = () => !module || module._PyGILState_Check();
    const later = [];
    const drain = () => {
      if (!held()) { setTimeout(drain, 0); return; }
      for (const [callback, value] of later.splice(0)) callback(value);
    };
    class WaitingRegistry extends Registry {
      constructor(callback) {
        super((value) => {
          if (held()) { callback(value); return; }
          if (later.push([callback, value]) === 1) setTimeout(drain, 0);
        });
      }
    }
    WaitingRegistry.waitsForTheGil = true;
    WaitingRegistry.knowModule = (m) => { module = m; };
    self.FinalizationRegistry = WaitingRegistry;
  }
  // A shared library (numpy's, matplotlib's: Pyodide's loadDynlib hands its bytes to
  // WebAssembly.instantiate) is compiled synchronously, here in the worker, which waits for it
  // either way. WebKit's JavaScriptCore puts an asynchronous compile on its one queue of
  // WebAssembly compilations behind every tier-up compilation already waiting there (same
  // priority, first come first served: Source/JavaScriptCore/wasm/WasmWorklist.cpp), and runs
  // cores - 1 compiler threads, so one on a 2-core machine, busy optimising Python's interpreter
  // as Python starts: numpy's first library (52 KB) waited 1.3 s in that queue. A synchronous
  // compile goes to the head of the queue and waits only for the compilation in progress
  // (how much of that reaches the first output is within the noise of this machine: benchmarks/README.md).
  // Bytes that do not compile synchronously go the asynchronous way, which reports the error as
  // it would have.
  function librariesCompiledAtTheHeadOfTheQueue() {
    const instantiate = WebAssembly.instantiate;
    WebAssembly.instantiate = function (source, imports) {
      if (source instanceof WebAssembly.Module) return instantiate.apply(WebAssembly, arguments);
      let module;
      try {
        module = new WebAssembly.Module(source);
      } catch (error) {
        return instantiate.apply(WebAssembly, arguments);
      }
      try {
        return Promise.resolve({ module, instance: new WebAssembly.Instance(module, imports) });
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  // Once the start's own files are in, the files the first cells fetch next (CONFIG.after_start:
  // the project's wheel, then the first figure's, runtime.toml [kernel.loaded_on_use]) are
  // fetched into the HTTP cache while Python finishes starting, so that on a slow link the figure's
  // 10 MB no longer wait for the cell that draws it; Pyodide then finds them there (the folder is
  // cached for good: its name carries its content's hash). Every lab notebook of the course draws.
  // One at a time, so that the requests Python and the page still make (piplite's index, a cell's
  // package) find a free connection. Not when the browser is asked to save data.
  function fetchAfterStart(base) {
    const connection = self.navigator && self.navigator.connection;
    if (connection && connection.saveData) return;
    CONFIG.after_start.reduce((previous, name) => previous.then(
      () => fetch(base + name).then((r) => r.arrayBuffer()).catch(() => {})), Promise.resolve());
  }
  // Pyodide unpacks a wheel into its in-memory file system (MEMFS) 64 KB at a time, and MEMFS
  // grows a file's buffer by doubling it (up to 1 MB, then by an eighth): a 700 KB font ends in a
  // 1 MB buffer. Each file's buffer is cut to its size once a package is in: some 11 MB of the
  // kernel worker's memory in lesson 1 (benchmarks/lab_memory.py). A file written to later grows
  // again as before.
  function filesTrimmedAfter(pyodide, method) {
    const load = pyodide[method];
    pyodide[method] = async function (...args) {
      try { return await load.apply(this, args); } finally { trimFiles(pyodide.FS, "/lib"); trimFiles(pyodide.FS, "/usr/lib"); }
    };
  }
  function trimFiles(FS, path) {
    let folder;
    try { folder = FS.lookupPath(path).node; } catch (error) { return; }
    const todo = [folder];
    while (todo.length) {
      const node = todo.pop();
      if (FS.isDir(node.mode) && !node.mounted && node.contents && typeof node.contents === "object") {
        todo.push(...Object.values(node.contents));
      } else if (FS.isFile(node.mode) && ArrayBuffer.isView(node.contents)
                 && node.contents.length > node.usedBytes) {
        node.contents = node.contents.slice(0, node.usedBytes);
      }
    }
  }
  // specdec_kernel, from the lock, started with CONFIG: returns its Kernel (a PyProxy kept for good)
  async function startTheKernelsOwnPart(pyodide, base) {
    await pyodide.loadPackage(CONFIG.package, QUIETLY);
    const kernelPackage = pyodide.pyimport("specdec_kernel");
    const config = pyodide.toPy({ ...CONFIG, base });
    try {
      return kernelPackage.start(config);
    } finally {
      config.destroy();
      kernelPackage.destroy();
    }
  }
  // Pyodide runs a cell's code through loadPackagesFromImports first (the kernel takes it from
  // this object when it is imported, after this wrapper is in): the packages of the cell's imports,
  // then those specdec_kernel says the cell's use of a module of [kernel.loaded_on_use] needs.
  function loadOnUse(pyodide, kernel) {
    const fromImports = pyodide.loadPackagesFromImports;
    pyodide.loadPackagesFromImports = async (code, options) => {
      await fromImports.call(pyodide, code, options);
      const found = kernel.packages_for(code);
      const names = found.toJs().filter((name) => !pyodide.loadedPackages[name]);
      found.destroy();
      if (names.length) await pyodide.loadPackage(names);   // the worker's, which says so
    };
  }
  // `then` runs once the kernel's start has run (it ends with "import pyodide_kernel"), failed or
  // not, before any cell.
  function afterTheKernelsStart(pyodide, then) {
    const run = pyodide.runPythonAsync;
    pyodide.runPythonAsync = async function (code, ...rest) {
      if (!/^import pyodide_kernel$/m.test(String(code))) return run.call(this, code, ...rest);
      pyodide.runPythonAsync = run;
      try {
        return await run.call(this, code, ...rest);
      } finally {
        then();
      }
    };
  }
  function tellTheKernelItStarted(pyodide, kernel, hints) {
    const given = hints ? pyodide.toPy(hints) : null;
    try {
      const failed = kernel.started(given);
      for (const what of failed.toJs()) console.warn(`pyodide-loader.js: ${what} (not installed)`);
      failed.destroy();
    } catch (error) {                                  // (a hint less; never a kernel less)
      console.warn("pyodide-loader.js: specdec_kernel's start not finished", error);
    } finally {
      if (given) given.destroy();
    }
  }
  // Pyodide's own pyodide.js, filled in below by the build (its source map line left out): run, it
  // defines Pyodide's self.loadPyodide. The worker fetched it as the start began; in WebKit a
  // worker's request waits for the page's main thread, then busy with JupyterLab's start (that
  // 15 KB took 0.1-0.3 s there; Chromium 0.01-0.04 s).
  function definePyodidesLoader() {
    /* PYODIDE_JS */
  }
  function fetchNameHints(indexURL) {       // fetched while Python starts; null: a hint less
    return Promise.resolve()                      // no page URL (Node.js's harness): null too
      .then(() => fetch(new URL(CONFIG.name_hints_file, new URL(indexURL, self.location.href))))
      .then((response) => (response.ok ? response.json() : null)).catch(() => null);
  }
  async function loadPyodide(options) {
    const nameHints = fetchNameHints(options.indexURL);
    definePyodidesLoader();                            // Pyodide's own self.loadPyodide
    if (self.loadPyodide === loadPyodide) throw new Error("pyodide-loader.js: Pyodide's pyodide.js is not in it");
    const packages = (options.packages || []).filter((name) => !CONFIG.not_loaded.includes(name));
    finalizersWaitForTheGil();                         // before Pyodide makes its registry
    librariesCompiledAtTheHeadOfTheQueue();
    const pyodide = await self.loadPyodide({ ...options, packages: [] });
    if (self.FinalizationRegistry.knowModule) self.FinalizationRegistry.knowModule(pyodide._module);
    filesTrimmedAfter(pyodide, "loadPackage");
    filesTrimmedAfter(pyodide, "loadPackagesFromImports");
    const kernel = await startTheKernelsOwnPart(pyodide, options.indexURL);
    if (packages.length) await pyodide.loadPackage(packages, QUIETLY);
    fetchAfterStart(options.indexURL);
    if (Object.keys(CONFIG.loaded_on_use).length) loadOnUse(pyodide, kernel);
    const hints = await nameHints;
    afterTheKernelsStart(pyodide, () => tellTheKernelItStarted(pyodide, kernel, hints));
    return pyodide;
  }
  loadPyodide.notLoaded = CONFIG.not_loaded;   // for benchmarks/lab_breakdown.py's timing loader
  self.loadPyodide = loadPyodide;
})();
