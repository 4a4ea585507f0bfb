// How the kernel's loader has the engine compile WebAssembly: Pyodide started through it
// (loader_start.mjs) with the kernel's packages, then numpy imported and used, every compile
// Pyodide asks for counted: asynchronous (WebAssembly.instantiate or compile given bytes) or
// synchronous (new WebAssembly.Module). Then what WebAssembly.instantiate answers, in the
// loader's worker, for bytes that are not WebAssembly and for a module already compiled.
// Prints {"asynchronous": [sizes], "synchronous": [sizes], "sum": numpy's answer, "libraries":
//         how many shared libraries numpy has in the file system,
//         "bad": the error's name, "compiled": whether a Module instantiates to {instance}}.
//     node loader_libraries.mjs PYODIDE_DIR '["package", ...]'
import { startThroughTheLoader } from "./loader_start.mjs";

const [dist, packages] = process.argv.slice(2);
const asynchronous = [], synchronous = [];
const Module = WebAssembly.Module;
const Counted = function (bytes) {
  synchronous.push(bytes.byteLength);
  return new Module(bytes);
};
Counted.prototype = Module.prototype;     // every module, however compiled, is still instanceof it
for (const name of ["imports", "exports", "customSections"]) Counted[name] = Module[name];
WebAssembly.Module = Counted;
for (const name of ["instantiate", "compile"]) {
  const real = WebAssembly[name];
  WebAssembly[name] = function (source, ...rest) {
    // (Pyodide's: Node's own fetch compiles its HTTP parser, for the loader's prefetch)
    if (!(source instanceof Module) && new Error().stack.includes("pyodide.asm.js")) {
      asynchronous.push(source.byteLength);
    }
    return real.call(WebAssembly, source, ...rest);
  };
}
const pyodide = await startThroughTheLoader(dist, JSON.parse(packages));
await pyodide.loadPackage(["numpy"], { messageCallback() {} });
const sum = pyodide.runPython("import numpy\nint(numpy.arange(5).sum())");
const libraries = pyodide.runPython("import pathlib\nlen(list(pathlib.Path(numpy.__file__).parent.rglob('*.so')))");
const seen = { asynchronous: [...asynchronous], synchronous: [...synchronous] };
const bad = await WebAssembly.instantiate(new Uint8Array([1, 2, 3, 4]), {}).then(() => "none", (e) => e.name);
const empty = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
const compiled = await WebAssembly.instantiate(new Module(empty), {}).then((r) => r instanceof WebAssembly.Instance);
console.log(JSON.stringify({ ...seen, sum, libraries, bad, compiled }));
process.exit(0);
