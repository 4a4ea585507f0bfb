"""Checks of the live 實驗場 that run inside the lesson page, as JS function text, so every
browser runs the same ones: Playwright's `page.evaluate(JS)` (Chromium) and the Firefox driver's
`FirefoxPage.evaluate(JS)` take it alike.

    page.evaluate(IMAGE_OUTPUTS)     # after Run all: every image output of the notebook, loaded?
    page.evaluate(STREAM_TEXTS)      # the text of each cell's stream outputs as shown
    stream_texts_of(notebook)        # ... and as the notebook file has it, to compare

JupyterLab draws only the cells near the view, so both scroll the notebook to each cell they read
(every wait in them is bounded: 10 s a cell, then they report what they saw).
"""
from __future__ import annotations

from .lab import WITH_APP

_EACH_CELL = """
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  async function eachCell(wanted, read) {      // scroll to each code cell wanted(model) picks
    const out = [];
    for (let i = 0; i < nb.model.cells.length; i++) {
      const model = nb.model.cells.get(i);
      if (model.type !== 'code' || !wanted(model)) continue;
      await nb.content.scrollToItem(i, 'start').catch(() => null);
      const end = Date.now() + 10000;
      let seen = null;
      while (Date.now() < end) {
        const widget = nb.content.widgets[i];
        seen = widget && widget.node.isConnected ? read(widget.node, model) : null;
        if (seen && seen.done) break;
        await sleep(100);
      }
      out.push({cell: i, ...(seen || {done: false})});
    }
    return out;
  }
"""

# after Run all: for each code cell with an image output (in the model), the <img> elements of its
# outputs once they are drawn and complete: [{cell, expected, images: [{src, complete,
# naturalWidth}], done}]. A broken image (say data:image/png;base64,[object Object]) is complete
# with naturalWidth 0.
IMAGE_OUTPUTS = WITH_APP % ("""async () => {""" + _EACH_CELL + """
  const imageCount = (model) => model.outputs.toJSON().filter((o) => o.data
      && Object.keys(o.data).some((t) => t.startsWith('image/'))
      && !o.data['application/vnd.jupyter.widget-view+json']).length;
  const hasImage = (model) => model.outputs.toJSON().some((o) => o.data
      && Object.keys(o.data).some((t) => t.startsWith('image/')));
  return eachCell(hasImage, (node, model) => {
    const imgs = [...node.querySelectorAll('.jp-OutputArea-output img')];
    const expected = Math.max(1, imageCount(model));
    return {expected, done: imgs.length >= expected && imgs.every((im) => im.complete),
            images: imgs.map((im) => ({src: im.src.slice(0, 48), complete: im.complete,
                                       naturalWidth: im.naturalWidth}))};
  });
}""")

# for each code cell with a stream output (in the model): the text its stream outputs show
# [{cell, text, done}]
STREAM_TEXTS = WITH_APP % ("""async () => {""" + _EACH_CELL + """
  const hasStream = (model) => model.outputs.toJSON().some((o) => o.output_type === 'stream');
  return eachCell(hasStream, (node) => {
    const shown = [...node.querySelectorAll('.jp-OutputArea-output[data-mime-type^="application/vnd.jupyter.std"]')];
    return {done: shown.length > 0, text: shown.map((o) => o.textContent).join('')};
  });
}""")


def stream_texts_of(notebook: dict) -> dict[int, str]:
    """Cell index -> the text of its stream outputs, as the notebook file stores it."""
    texts = {}
    for index, cell in enumerate(notebook["cells"]):
        streams = [o for o in cell.get("outputs", []) if o["output_type"] == "stream"]
        if streams:
            texts[index] = "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                                   for o in streams)
    return texts


def broken_images(seen: list[dict]) -> list[dict]:
    """IMAGE_OUTPUTS' cells with an image not drawn, not loaded, or loaded empty."""
    return [c for c in seen if not c["done"] or len(c["images"]) < c["expected"]
            or any(not im["complete"] or im["naturalWidth"] == 0 for im in c["images"])]


def note_first_output(setup: str, seconds: float) -> None:
    """Keep a measured first live output (seconds from opening the page, Run pressed at once) in
    build/test-output/first-live-output.tsv, for people; tests never assert on it."""
    import time
    from pathlib import Path

    out = Path(__file__).resolve().parents[2] / "build" / "test-output" / "first-live-output.tsv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a", encoding="utf-8") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}\t{setup}\t{seconds:.1f}\n")
    print(f"first live output, {setup}: {seconds:.1f} s")
