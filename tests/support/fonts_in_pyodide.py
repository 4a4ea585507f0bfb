# Run in Pyodide under Node.js by tests/test_lab_build.py (site/lab/node/run_in_pyodide.mjs):
#     sys.argv = [this, mode.json, output.json]; mode "shipped" or "rebuild" (list removed first)
# Imports specdec_lab.plotting and writes the fonts matplotlib ended up with, whether it rebuilt
# its font list, and a digest of a course figure.
import hashlib
import json
import logging
import sys
from pathlib import Path

import pyodide_js

# specdec-lab, and matplotlib and the course font as the lab loads them before a cell that uses
# plotting (runtime.toml [kernel.loaded_on_use] and [kernel.split_out])
await pyodide_js.loadPackage(["specdec-lab", "matplotlib", "specdec-lab-fonts"])  # noqa: F704  (top-level await: Pyodide runs it)
mode = json.loads(Path(sys.argv[1]).read_text())
said = []


class Keep(logging.Handler):
    def emit(self, record):
        said.append(record.getMessage())


log = logging.getLogger("matplotlib.font_manager")
log.addHandler(Keep())
log.setLevel(logging.INFO)
import matplotlib  # noqa: E402

if mode == "rebuild":
    Path(matplotlib.__file__).with_name("fontlist.json").unlink()
from specdec_lab import plotting  # noqa: E402

plotting.register_font      # noqa: B018  (a first name sets matplotlib up: the module is lazy)
from matplotlib import font_manager  # noqa: E402

manager = font_manager.fontManager
fonts = sorted([f.fname, f.name, f.style, f.variant, str(f.weight), f.stretch]
               for f in manager.ttflist + manager.afmlist)
figure = plotting.figure_png(plotting.speedup_figure(0.8, 0.05))
Path(sys.argv[2]).write_text(json.dumps({
    "rebuilt": "generated new fontManager" in said, "fonts": fonts,
    "defaults": [manager.defaultFamily, manager.default_size],
    "figure": hashlib.sha256(figure).hexdigest()}))
