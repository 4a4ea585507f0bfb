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


# Keys pressed in the lesson while the lab starts (issue 16): an init script for the lesson page
# that counts the keys reaching the panel's resize handle and every time the lesson page lost the
# focus (its window's blur: the focus went into the lab's frame, or anywhere else)
KEYS_IN_LESSON = """if (window.parent === window) {
  window.__keys = {atHandle: 0, blurs: 0};
  document.addEventListener('keydown', (e) => {
    if (e.target.classList && e.target.classList.contains('sd-lab__resize')) window.__keys.atHandle++;
  }, true);
  window.addEventListener('blur', (e) => { if (e.target === window) window.__keys.blurs++; });
}"""
FOCUSED = "() => `${document.activeElement.tagName}.${document.activeElement.className}`"


def press_keys_through_the_start(lab, focus, press, after_ready: float = 2.0, timeout: float = 180) -> dict:
    """Focus the lab panel's resize handle and press ← → (the panel's width comes back) on it,
    one after the other, from the moment the lesson has its panel until `after_ready` seconds after
    Python is ready (JupyterLab focuses its splash, then its notebook, as it starts). `lab` is a
    LabPage or EngineLab opened with KEYS_IN_LESSON; focus(selector) and press(key) are the
    browser's. Returns {sent, atHandle, blurs, focused, notebookShownAt, readyAt}: how many keys
    were pressed before the lab showed its notebook and in all."""
    import time

    from .lab import wait_until

    wait_until(lambda: lab.page.evaluate("() => !!document.querySelector('.sd-lab__resize:not([hidden])')"),
               60, what="the lab panel's resize handle")
    focus(".sd-lab__resize")
    sent, shown_at, ready_at, ready = 0, None, None, None
    end = time.time() + timeout
    while ready is None or time.time() < ready + after_ready:
        if time.time() > end:
            raise TimeoutError(f"the lab was not ready within {timeout:.0f} s of pressing keys")
        for key in ("ArrowLeft", "ArrowRight"):
            press(key)
            sent += 1
        if ready is None:
            events = lab.events()
            if shown_at is None and any(e.get("notebookShown") for e in events):
                shown_at = sent
            if any(e.get("stage") == "ready" for e in events):
                ready, ready_at = time.time(), sent
    seen = lab.page.evaluate("() => window.__keys")
    return {"sent": sent, **seen, "focused": lab.page.evaluate(FOCUSED),
            "notebookShownAt": shown_at, "readyAt": ready_at}


# What comes later (site/lab/builder/later.py): run in the live kernel (support.lab.kernel_prints), it
# imports a module only a .later.zip holds and prints a traceback through the standard library,
# whose lines come from the same archive, read with a synchronous request from the kernel's worker;
# then numpy.fft, whose extension module (WebAssembly) comes later too and is linked as Python
# imports it (dlopen of a file Pyodide did not load with numpy). And the stand-ins of the kernel's
# start (site/lab/kernel/specdec_kernel/stand_ins.py): prompt_toolkit never imported; sqlite3, not loaded at start,
# loaded by the cell's import and working.
LATER_PROBE = r"""
import json, sys, traceback
try:
    json.loads("{bad")
except ValueError:
    lines = traceback.format_exc()
import email.mime.text
import numpy.fft
import sqlite3
print(json.dumps({"traceback": lines, "file": email.mime.text.__file__,
                  "fft": numpy.fft.fft([1.0, 2.0, 3.0, 4.0]).tolist(),
                  "fft_file": numpy.fft._pocketfft_umath.__file__,
                  "sqlite3": sqlite3.connect(":memory:").execute("select 6 * 7").fetchone()[0],
                  "terminal": sorted(m for m in sys.modules if m.startswith("prompt_toolkit"))}, default=str))
"""


def later_fetched(printed: str) -> list[str]:
    """What LATER_PROBE's output shows wrong ([] when the module and the source line came)."""
    import json
    try:
        seen = json.loads(printed.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return [f"no result: {printed[-300:]!r}"]
    wrong = []
    if not seen["file"].startswith("/lib/later/python_stdlib.later/email/mime/"):
        wrong.append(f"email.mime.text from {seen['file']}")
    if "obj, end = self.scan_once(s, idx)" not in seen["traceback"]:
        wrong.append(f"no source line of json/decoder.py in {seen['traceback'][-400:]!r}")
    if not seen["fft_file"].startswith("/lib/later/numpy-"):
        wrong.append(f"numpy.fft's extension module from {seen['fft_file']}")
    if seen["fft"] != ["(10+0j)", "(-2+2j)", "(-2+0j)", "(-2-2j)"]:     # FFT of 1, 2, 3, 4
        wrong.append(f"numpy.fft.fft([1, 2, 3, 4]) = {seen['fft']}")
    if seen["sqlite3"] != 42:
        wrong.append(f"sqlite3 answered {seen['sqlite3']!r} to select 6 * 7")
    if seen["terminal"]:
        wrong.append(f"the kernel imported IPython's terminal: {seen['terminal'][:3]}")
    return wrong


# the lesson page while the lab starts: the looping animations (CSS animations with no end, running)
# of the lesson page and of the lab's frame, and the panel's meter: how much of it is filled (% of
# its width) and how opaque the fill is
LOOPING_AND_METER = """() => {
  const loops = (doc) => doc.getAnimations()
    .filter((a) => a.playState === 'running' && a.effect && a.effect.getComputedTiming().iterations === Infinity)
    .map((a) => (a.animationName || 'animation') + ' on ' + ((a.effect.target && a.effect.target.className) || '?'));
  const looping = loops(document);
  const frame = document.querySelector('.sd-lab__frame');
  let labLooping = null;
  try { labLooping = frame && frame.contentDocument ? loops(frame.contentDocument) : null; } catch (e) { /* not yet */ }
  const meter = document.querySelector('.sd-lab__meter');
  const fill = meter && meter.querySelector('.sd-lab__meter-fill');
  const last = (window.__lab && window.__lab.events.length) ? window.__lab.events[window.__lab.events.length - 1] : {};
  return {looping, labLooping,
          filled: fill ? Math.round(100 * fill.getBoundingClientRect().width / meter.getBoundingClientRect().width) : null,
          opacity: fill ? Number(getComputedStyle(fill).opacity) : null,
          stage: last.stage || null, kernelReady: !!last.kernelReady};
}"""

# LOOPING_AND_METER sampled in the page every 100 ms while the lab says Python is starting (stage
# "start" or "packages", not ready), from when it is run until Python is ready; START_SAMPLES reads
# what it saw: how many samples, how many with the lab's frame readable and with its kernel spinner
# on screen (not always: in WebKit the toolbar showed none in 1 of 6 starts), the samples with
# something looping, and each meter state seen. (Read from the test, once the spinner showed, the
# state was sometimes already "ready" on a busy machine, and the check had nothing to check.)
START_SAMPLER = """() => {
  const sample = %s;
  const spinner = () => { try { return !!document.querySelector('.sd-lab__frame').contentDocument
                                   .querySelector('.jp-KernelStatus-spinner'); } catch (e) { return false; } };
  const seen = window.__startSamples = {taken: 0, framed: 0, withSpinner: 0, looping: [], meters: []};
  const timer = setInterval(() => {
    const s = sample();
    if (s.kernelReady) return clearInterval(timer);
    if (!['start', 'packages'].includes(s.stage)) return;
    seen.taken++;
    if (s.labLooping) seen.framed++;
    if (spinner()) seen.withSpinner++;
    if (s.looping.length || (s.labLooping && s.labLooping.length)) seen.looping.push(s);
    const meter = [s.filled, s.opacity];
    if (!seen.meters.some((m) => m[0] === meter[0] && m[1] === meter[1])) seen.meters.push(meter);
  }, 100);
}""" % LOOPING_AND_METER
START_SAMPLES = "() => window.__startSamples || null"

# true once the lab's toolbar shows the kernel's spinner (starting or busy), or Python is ready
KERNEL_SPINNER_OR_READY = """() => {
  const frame = document.querySelector('.sd-lab__frame');
  let doc = null;
  try { doc = frame && frame.contentDocument; } catch (e) { /* not yet */ }
  return !!(doc && doc.querySelector('.jp-KernelStatus-spinner'))
    || !!(window.__lab && window.__lab.events.some((e) => e.kernelReady));
}"""
