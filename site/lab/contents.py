"""The notebooks as the lab serves them (files/NAME.ipynb): the same notebook, with each output's
multi-line text as one string: a stream's (what a cell printed) and each text value of a result or
a display (text/plain, text/html, text/markdown, image/svg+xml ...; a JSON value is not text).

nbformat lets a multi-line string be stored as a list of lines, to be joined with "" (nbformat
itself writes them that way). JupyterLite 0.6.4's notebook model (@jupyter/ydoc,
YCodeCell.createOutputs) joins a stream's list with Array.prototype.join's default separator, so
until Python re-runs a cell every continued line of what it printed started with ","; the same
for a result's list (lesson 1's 挑戰 2 showed a numpy array's continued lines as ",       3.469 …").
A single string is read the same by every reader, that model included.
"""
from __future__ import annotations

import json
from pathlib import Path


def is_json(mimetype: str) -> bool:
    return mimetype == "application/json" or mimetype.endswith("+json")


def joined_texts(notebook: dict) -> dict:
    """`notebook` (nbformat JSON) with every output text stored as a list of lines joined into one
    string: a stream's text, and each non-JSON value of an output's data."""
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and isinstance(output.get("text"), list):
                output["text"] = "".join(output["text"])
            for mimetype, value in output.get("data", {}).items():
                if isinstance(value, list) and not is_json(mimetype):
                    output["data"][mimetype] = "".join(value)
    return notebook


def copy_notebook(source: Path, target: Path) -> None:
    """Write `source` to `target` as the lab serves it (written as nbformat writes a notebook)."""
    notebook = joined_texts(json.loads(source.read_text(encoding="utf-8")))
    target.write_text(json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n",
                      encoding="utf-8")
