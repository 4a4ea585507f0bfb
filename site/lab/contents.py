"""The notebooks as the lab serves them (files/NAME.ipynb): the same notebook, with the text of
each stream output (what a cell printed) as one string.

nbformat lets a multi-line string be stored as a list of lines, to be joined with "" (nbformat
itself writes them that way). JupyterLite 0.6.4's notebook model (@jupyter/ydoc,
YCodeCell.createOutputs) joins a stream's list with Array.prototype.join's default separator, so
until Python re-runs a cell every continued line of what it printed started with ",". A single
string is read the same by every reader, that model included.
"""
from __future__ import annotations

import json
from pathlib import Path


def joined_streams(notebook: dict) -> dict:
    """`notebook` (nbformat JSON) with every stream output's text list joined into one string."""
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and isinstance(output.get("text"), list):
                output["text"] = "".join(output["text"])
    return notebook


def copy_notebook(source: Path, target: Path) -> None:
    """Write `source` to `target` as the lab serves it (written as nbformat writes a notebook)."""
    notebook = joined_streams(json.loads(source.read_text(encoding="utf-8")))
    target.write_text(json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n",
                      encoding="utf-8")
