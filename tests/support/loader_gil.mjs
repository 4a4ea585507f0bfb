// Start Pyodide through the built lab's kernel loader (pyodide-loader.js) as the kernel's worker
// does, then let the engine collect garbage while Python has released the GIL, as it has around a
// blocking call (WebKit runs finalizers then: a file of the lab's drive is read through a
// synchronous request). A PyProxy the loader left to the garbage collector is freed by a finalizer
// that needs the GIL, and throws NoGilError. Prints {"errors": [uncaught errors]}.
//     node --expose-gc loader_gil.mjs PYODIDE_DIR '["package", ...]'
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const [dist, packages] = process.argv.slice(2);
const indexURL = path.resolve(dist) + "/";
const errors = [];
process.on("uncaughtException", (e) => errors.push(`${e.name}: ${e.message}`));
globalThis.self = globalThis;                   // a worker's globals, as the loader expects
globalThis.importScripts = (url) => {
  const exported = require(url);
  if (exported && exported.loadPyodide) globalThis.loadPyodide = exported.loadPyodide;
};
importScripts(indexURL + "pyodide-loader.js");
const pyodide = await self.loadPyodide({ indexURL, packages: JSON.parse(packages) });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const thread = pyodide._module._PyEval_SaveThread();
for (let i = 0; i < 5; i++) { gc(); await sleep(50); }     // finalizers run in the tasks after gc
pyodide._module._PyEval_RestoreThread(thread);
console.log(JSON.stringify({ errors }));
process.exit(0);
