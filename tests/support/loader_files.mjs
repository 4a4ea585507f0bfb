// What the kernel's in-memory files hold once packages are in: Pyodide started through the lab's
// loader (loader_start.mjs) with the kernel's packages, then matplotlib loaded the way a cell's
// import loads it (loadPackagesFromImports). Walks /lib and counts the bytes each file's buffer
// holds beyond the file's size (MEMFS grows a buffer by doubling it as a file is written).
// Prints {"files": how many, "bytes": their sizes, "slack": buffer bytes beyond them,
//         "font": the sha256 of matplotlib's DejaVuSans.ttf as Python reads it, "drawn": a PNG's size}.
//     node loader_files.mjs PYODIDE_DIR '["package", ...]'
import { startThroughTheLoader } from "./loader_start.mjs";

const [dist, packages] = process.argv.slice(2);
const pyodide = await startThroughTheLoader(dist, JSON.parse(packages));
await pyodide.loadPackagesFromImports("import matplotlib");
const { FS } = pyodide;
let files = 0, bytes = 0, slack = 0;
const todo = [FS.lookupPath("/lib").node];
while (todo.length) {
  const node = todo.pop();
  if (FS.isDir(node.mode) && !node.mounted) todo.push(...Object.values(node.contents));
  else if (FS.isFile(node.mode) && ArrayBuffer.isView(node.contents)) {
    files += 1;
    bytes += node.usedBytes;
    slack += node.contents.length - node.usedBytes;
  }
}
const [font, drawn] = pyodide.runPython(`
import hashlib, io, os
import matplotlib
matplotlib.use("agg")
from matplotlib.figure import Figure
path = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")
fig = Figure(figsize=(2, 1))
fig.text(0.1, 0.5, "α = 0.8")
buf = io.BytesIO()
fig.savefig(buf, format="png")
[hashlib.sha256(open(path, "rb").read()).hexdigest(), len(buf.getvalue())]
`).toJs();
console.log(JSON.stringify({ files, bytes, slack, font, drawn }));
