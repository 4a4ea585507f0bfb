// Start Pyodide through the built lab's kernel loader (loader_start.mjs), with the working
// directory a folder like the lab's drive, then run the kernel's start as
// jupyterlite-pyodide-kernel 0.6.1 does (piplite's set-up; "import pyodide_kernel", then the
// chdir to the drive).
// The folder holds a learner's file named like a module IPython imports (traitlets.py, which
// raises) and a module of their own (mine.py). Counts how often the working directory was asked
// for its mtime (FS.stat) during the start, then imports mine.
// Prints {"stats": n, "path0": sys.path[0], "cwdEntries": how many '' sys.path holds, "mine": mine.VALUE,
//         "error": the start's error or null}.
//     node kernel_start.mjs PYODIDE_DIR '["package", ...]'
import { startThroughTheLoader } from "./loader_start.mjs";

const [dist, packages] = process.argv.slice(2);
const pyodide = await startThroughTheLoader(dist, JSON.parse(packages));
const drive = "/drive";
pyodide.FS.mkdirTree(drive);
pyodide.FS.writeFile(drive + "/traitlets.py", "raise ImportError('the learner\\'s traitlets.py')\n");
pyodide.FS.writeFile(drive + "/mine.py", "VALUE = 42\n");
pyodide.FS.chdir(drive);
let stats = 0;
const stat = pyodide.FS.stat;
pyodide.FS.stat = function (p, ...rest) {
  if (p === drive || p === drive + "/") stats++;
  return stat.call(this, p, ...rest);
};
let error = null;
try {
  await pyodide.runPythonAsync("import piplite.piplite\npiplite.piplite._PIPLITE_DISABLE_PYPI = True\n"
                                + "piplite.piplite._PIPLITE_URLS = []");
  await pyodide.runPythonAsync(`import pyodide_kernel\nimport os\nos.chdir("${drive}")`);
} catch (e) {
  error = String(e.message || e).trim().split("\n").pop();
}
const counted = stats;
pyodide.FS.stat = stat;
const globals = pyodide.toPy({});
pyodide.runPython("import sys\npath0 = sys.path[0]\ncwd_entries = sys.path.count('')\nimport mine\nvalue = mine.VALUE", { globals });
console.log(JSON.stringify({ stats: counted, path0: globals.get("path0"), cwdEntries: globals.get("cwd_entries"),
                              mine: globals.get("value"), error }));
globals.destroy();
process.exit(0);
