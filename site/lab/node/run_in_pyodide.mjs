// Run a Python script in Pyodide under Node.js, with the host's files under /host:
//     node run_in_pyodide.mjs PYODIDE_DIR SCRIPT.py [ARG ...]     (absolute paths)
// The script sees sys.argv = [SCRIPT, ARG, ...] with /host in front of each path, may use
// top-level await (e.g. `await pyodide_js.loadPackage([...])`) and reports through files.
// site/lab/builder/bytecode.py uses it to work with the very interpreter the browser runs.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [dist, script, ...args] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { loadPyodide } = require(path.join(path.resolve(dist), "pyodide.js"));
const pyodide = await loadPyodide({ indexURL: path.resolve(dist) + "/" });
pyodide.mountNodeFS("/host", "/");
// as the kernel's loader does in the browser (site/lab/kernel/pyodide-loader.js): the modules and
// sources that site/lab/builder/later.py moved out of the start archives come from their .later.zip
const later = path.join(path.resolve(dist), "later.json");
if (existsSync(later)) {
  const globals = pyodide.toPy({ archives: JSON.parse(readFileSync(later, "utf8")),
                                 base: "/host" + path.resolve(dist) + "/" });
  pyodide.runPython(readFileSync(new URL("../kernel/later_import.py", import.meta.url), "utf8")
                    + "\ninstall(archives, lambda name: open(base + name, 'rb').read())\n", { globals });
  globals.destroy();
}
// and IPython's imports of sqlite3 and its terminal get their stand-ins (site/lab/kernel/stand_ins.py)
{
  const globals = pyodide.toPy({});
  pyodide.runPython(readFileSync(new URL("../kernel/stand_ins.py", import.meta.url), "utf8") + "\ninstall()\n", { globals });
  globals.destroy();
}
pyodide.runPython("import sys");
pyodide.globals.get("sys").argv = pyodide.toPy([script, ...args].map((p) => "/host" + path.resolve(p)));
await pyodide.runPythonAsync(readFileSync(script, "utf8"), { filename: "/host" + path.resolve(script) });
