/* A phone does not start the 實驗場 from zero.
 *
 * On a narrow screen (or with the panel folded) the lab loads only when the learner opens it
 * (lab-panel.js), and then waits for the whole of Python's start: some 20 MB. While the learner
 * reads, this fetches those files (lab/specdec-boot.json's list: Pyodide's core and the packages
 * the kernel loads as it starts) one at a time, at low priority, once the page is idle, into the
 * browser's HTTP cache; the kernel's worker then finds them there (the Pyodide folder is cached
 * for good: its name carries its content's hash). It stops at the file under way when the lab is
 * opened, and does nothing when the lab is already loading, when the browser asks to save data
 * (navigator.connection.saveData) or says the link is slow (effectiveType 2g or 3g).
 * The fetching runs in a worker started from this same file (workers share the page's HTTP
 * cache): reading 20 MB of responses on the lesson's thread took its turns in tasks of 100-300 ms
 * on a phone (Lighthouse, 4x slowdown), while the learner scrolled.
 * What it did is on <html data-sd-lab-prefetch>: fetching, done, off: save-data, off: 3g, ...
 * No dependencies; once per tab (instant navigation keeps the cache and this script).
 */
(function () {
  "use strict";

  // in the worker: fetch each file to its end, one at a time, and say so after each
  if (typeof window === "undefined") {
    self.onmessage = async ({ data: { lab } }) => {
      try {
        const boot = await (await fetch(lab + "specdec-boot.json", { priority: "low" })).json();
        for (const file of boot.files) {
          const reader = (await fetch(lab + boot.base + file.name, { priority: "low" })).body.getReader();
          while (!(await reader.read()).done) { /* read to the end: then it is in the cache */ }
          postMessage({ fetched: file.name });
        }
        postMessage({ state: "done" });
      } catch (error) {
        postMessage({ state: "failed" });
      }
      close();
    };
    return;
  }

  const SCRIPT = document.currentScript && document.currentScript.src;     // the worker's script

  const SLOW = ["slow-2g", "2g", "3g"];
  const mark = (state) => { document.documentElement.dataset.sdLabPrefetch = state; };
  const labLoading = () => !!document.querySelector(".sd-lab__frame");

  function prefetch(lab) {
    const connection = navigator.connection;
    if (connection && connection.saveData) return mark("off: save-data");
    if (connection && SLOW.includes(connection.effectiveType)) return mark("off: " + connection.effectiveType);
    if (labLoading()) return mark("off: the lab is loading");
    let worker;
    try { worker = new Worker(SCRIPT); } catch (error) { return mark("failed"); }   // (no script URL, no workers)
    mark("fetching");
    // after each file: the lab opened meanwhile, no more (the worker has just asked for the next one)
    worker.onmessage = ({ data }) => {
      if (data.state) mark(data.state);
      else if (labLoading()) { mark("stopped: the lab was opened"); worker.terminate(); }
    };
    worker.onerror = () => { mark("failed"); worker.terminate(); };   // the lab fetches what it needs itself when opened
    worker.postMessage({ lab });
  }

  function start() {
    const panel = document.getElementById("sd-lab");
    if (!panel || window.sdLabPrefetch) return;
    window.sdLabPrefetch = true;
    // absolute now: Material's instant navigation may have moved to another page (another folder)
    // by the time the page is idle, and the relative URL would then point under that one
    const lab = new URL(panel.dataset.lab, document.baseURI).href;
    const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1000));
    idle(() => prefetch(lab), { timeout: 10000 });
  }

  // after the lesson has loaded (its own images and scripts first), then on each page Material's
  // instant navigation brings, until one has a lab
  const follow = () => { if (window.document$) window.document$.subscribe(start); else start(); };
  if (document.readyState === "complete") follow(); else window.addEventListener("load", follow);
})();
