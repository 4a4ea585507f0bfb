// The kernel worker's Pyodide loader. jupyter-lite.json's pyodideUrl points here, beside
// pyodide.js; the worker of jupyterlite-pyodide-kernel 0.6.1 runs importScripts(pyodideUrl) and
// calls self.loadPyodide({indexURL: this folder, ...loadPyodideOptions}).
//
// That worker installs jedi as the kernel starts unless loadPyodideOptions.packages names it, so
// the built jupyter-lite.json names the packages the course does not load (runtime.toml
// [kernel] not_loaded, filled in below by site/lab/build_lab.py) and this loader keeps them out
// of what Pyodide loads. Without jedi, IPython completes with its own matchers: a startup file
// turns Completer.use_jedi off again (pyodide_kernel forces it on, and then nothing completes).
(function () {
  const NOT_LOADED = ["NOT_LOADED"];
  const COMPLETER = `# written by the 實驗場's Pyodide loader: jedi is not shipped (site/lab/runtime.toml),
# so IPython completes with its own matchers
get_ipython().Completer.use_jedi = False
`;
  async function loadPyodide(options) {
    importScripts(options.indexURL + 'pyodide.js');   // defines Pyodide's own self.loadPyodide
    const packages = (options.packages || []).filter((name) => !NOT_LOADED.includes(name));
    const pyodide = await self.loadPyodide({ ...options, packages });
    if (NOT_LOADED.includes('jedi')) {
      const startup = pyodide.runPython(
        'import os; os.path.expanduser("~/.ipython/profile_default/startup")',
        { globals: pyodide.toPy({}) });
      pyodide.FS.mkdirTree(startup);
      pyodide.FS.writeFile(startup + '/00-no-jedi.py', COMPLETER);
    }
    return pyodide;
  }
  loadPyodide.notLoaded = NOT_LOADED;   // for benchmarks/lab_breakdown.py's timing loader
  self.loadPyodide = loadPyodide;
})();
