// Start Pyodide through the built lab's kernel loader (pyodide-loader.js) as the kernel's worker
// does: a worker's globals (self, importScripts), then self.loadPyodide with the kernel's packages.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);

export async function startThroughTheLoader(dist, packages) {
  const indexURL = path.resolve(dist) + "/";
  globalThis.self = globalThis;
  globalThis.importScripts = (url) => {
    const exported = require(url);
    if (exported && exported.loadPyodide) globalThis.loadPyodide = exported.loadPyodide;
  };
  importScripts(indexURL + "pyodide-loader.js");
  return self.loadPyodide({ indexURL, packages });
}
