/* The course's offline copy, the page's side (issue 45, docs/offline.md). In a secure context
 * (https, localhost) it registers the site's service worker (sw.js at the site's root, with
 * site/offline/offline-sw.js); on a plain-http LAN there is no service worker and this does nothing.
 *  - 「課程已更新」 with a reload link once the worker holds a new build whole: the reload switches
 *    the whole course (pages and lab) to it at once;
 *  - once this page's lab has started, asks the worker to keep what the lab fetched before a
 *    worker was in control (a first visit): the lab's page, Python and the packages it loads.
 * window.specdecOffline: {kept} for the progress view and the tests.
 */
(function () {
  "use strict";
  if (!("serviceWorker" in navigator) || !window.isSecureContext || window.specdecOffline) return;
  const root = new URL("../../", document.currentScript.src);     // assets/course/offline.js
  const workers = navigator.serviceWorker;
  const state = { kept: null, registered: null };
  window.specdecOffline = state;
  state.registered = workers.register(new URL("sw.js", root)).catch(() => null);

  function send(message) {      // to the worker once it is active (on a first visit, once installed)
    return workers.ready.then((registration) => registration.active.postMessage({ specdecOffline: message }));
  }

  /* the notice: quiet (a status line, no focus taken), once */
  function showUpdate() {
    if (document.querySelector(".sd-update")) return;
    const note = document.createElement("div");
    note.className = "sd-update";
    note.setAttribute("role", "status");
    const link = document.createElement("a");
    link.href = location.href;
    link.textContent = "重新載入";
    link.addEventListener("click", (event) => {
      event.preventDefault();
      link.textContent = "載入中…";
      const reload = () => location.reload();
      workers.addEventListener("message", (e) => e.data && e.data.specdecOffline === "switched" && reload());
      setTimeout(reload, 3000);                  // the worker did not answer: reload anyway
      send("switch");
    });
    note.append("課程已更新。", link);
    document.body.append(note);
  }

  workers.addEventListener("message", (event) => {
    const message = event.data && event.data.specdecOffline;
    if (!message) return;
    if (message === "ready" || (message.status && message.status.ready)) showUpdate();
    if (message.kept !== undefined) {
      state.kept = message.kept;
      window.dispatchEvent(new CustomEvent("specdec-offline", { detail: { kept: message.kept } }));
    }
  });
  send("status");

  /* what the started lab fetched: the lab page's own files, those Python fetched as it started and
   * after (specdec-boot.json), their .later.zip, and the lab's extensions (the kernel's worker) */
  function resourceURLs(win) {
    try {
      return [win.location.href, ...win.performance.getEntriesByType("resource").map((e) => e.name)];
    } catch (e) { return []; }
  }
  async function labFiles(frame) {
    const urls = [...resourceURLs(window), ...resourceURLs(frame.contentWindow)];
    const lab = new URL("lab/", root);
    try {
      const boot = await (await fetch(new URL("specdec-boot.json", lab))).json();
      const base = new URL(boot.base, lab);
      for (const name of [...boot.files.map((f) => f.name), ...(boot.after_start || [])]) {
        urls.push(new URL(name, base).href);
        if (/\.(whl|zip)$/.test(name)) urls.push(new URL(name.replace(/\.(whl|zip)$/, ".later.zip"), base).href);
      }
      urls.push(new URL("later.json", base).href, new URL("specdec-name-hints.json", lab).href);
    } catch (e) { /* without the boot list: what the pages fetched */ }
    return urls;
  }
  let keeping = false;
  window.addEventListener("message", (event) => {
    const lab = event.origin === location.origin && event.data && event.data.specdecLab;
    if (!lab || !lab.kernelReady || keeping) return;
    const frame = document.querySelector(".sd-lab__frame");
    if (!frame) return;
    keeping = true;
    labFiles(frame).then((urls) => send({ keep: urls, prefixes: ["lab/extensions/"] }));
  });
})();
