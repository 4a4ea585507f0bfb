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
// as the kernel's loader does in the browser (site/lab/kernel/pyodide-loader.js), the lab's part of
// the kernel (specdec_kernel, a wheel of the lock: site/lab/kernel/pyproject.toml) brings back the
// modules and sources that site/lab/builder/later.py moved out of the start archives from their
// .later.zip (read as files here), and gives IPython's imports of sqlite3 and its terminal their
// stand-ins
await pyodide.loadPackage("specdec-kernel", { messageCallback() {} });
const kernel = pyodide.pyimport("specdec_kernel");
const later = path.join(path.resolve(dist), "later.json");
if (existsSync(later)) {
  const archives = pyodide.toPy(JSON.parse(readFileSync(later, "utf8")));
  const read = kernel.later_import.from_folder("/host" + path.resolve(dist) + "/");
  kernel.later_import.install(archives, read).destroy();
  archives.destroy();
  read.destroy();
}
kernel.stand_ins.install().destroy();
kernel.destroy();
pyodide.pyimport("sys").argv = pyodide.toPy([script, ...args].map((p) => "/host" + path.resolve(p)));
await pyodide.runPythonAsync(readFileSync(script, "utf8"), { filename: "/host" + path.resolve(script) });
