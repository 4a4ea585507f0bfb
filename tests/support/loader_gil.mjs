// Start Pyodide through the built lab's kernel loader (loader_start.mjs), then let the engine
// collect garbage while Python has released the GIL, as it has around a blocking call (WebKit
// runs finalizers then: a file of the lab's drive is read through a synchronous request).
// A PyProxy the loader left to the garbage collector is freed by a finalizer that needs the GIL,
// and throws NoGilError. The kernel leaves PyProxies of its own to the collector too: one such
// proxy (of an object only it keeps alive) is dropped before the GIL is released, and must be
// freed once Python holds the GIL again, without an error.
// Prints {"errors": [uncaught errors], "freed": whether that object was freed}.
//     node --expose-gc loader_gil.mjs PYODIDE_DIR '["package", ...]'
import { startThroughTheLoader } from "./loader_start.mjs";

const [dist, packages] = process.argv.slice(2);
const errors = [];
process.on("uncaughtException", (e) => errors.push(`${e.name}: ${e.message}`));
const pyodide = await startThroughTheLoader(dist, JSON.parse(packages));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const globals = pyodide.toPy({});
pyodide.runPython("import weakref\nclass Left: pass\nleft = Left()\nref = weakref.ref(left)", { globals });
(() => { pyodide.runPython("left", { globals }); })();   // a PyProxy nobody destroys
pyodide.runPython("del left", { globals });               // now only that proxy keeps it alive
const thread = pyodide._module._PyEval_SaveThread();
for (let i = 0; i < 5; i++) { gc(); await sleep(50); }     // finalizers run in the tasks after gc
pyodide._module._PyEval_RestoreThread(thread);
for (let i = 0; i < 5; i++) { gc(); await sleep(20); }     // (with the GIL held again)
const freed = pyodide.runPython("ref() is None", { globals });
globals.destroy();
console.log(JSON.stringify({ errors, freed }));
process.exit(0);
