/* The course's offline copy, the page's side (issue 45, docs/offline.md). In a secure context
 * (https, localhost) it registers the site's service worker (sw.js at the site's root, with
 * site/offline/offline-sw.js); on a plain-http LAN there is no service worker and this does nothing.
 *  - 「課程已更新」 with a reload link once the worker holds a new build whole: the reload switches
 *    the whole course (pages and lab) to it at once;
 *  - once this page's lab has started, asks the worker to keep what the lab fetched before a
 *    worker was in control (a first visit): the lab's page, Python and the packages it loads;
 *  - beside the progress view (lesson 1's .sd-progress): the storage the site uses
 *    (navigator.storage.estimate), 「整門課離線用」 (says how many MB first, a progress bar;
 *    navigator.storage.persist() only then; nothing is fetched unless the learner asks, so a
 *    browser saving data fetches nothing more), and 「清除離線資料」 (asks first, says the result).
 * window.specdecOffline: {kept} for the progress view and the tests.
 */
(function () {
  "use strict";
  if (!("serviceWorker" in navigator) || !window.isSecureContext || window.specdecOffline) return;
  if (!document.querySelector('meta[name="specdec-offline"]')) return;     // built without it
  const root = new URL("../../", document.currentScript.src);     // assets/course/offline.js
  const workers = navigator.serviceWorker;
  const state = { kept: null, registered: null };
  window.specdecOffline = state;
  // Registered once the page has loaded and, on a page with a lab, once its Python has started
  // (at most 20 s later): a new worker's install fetches the lesson pages (3.6 MB), which on a
  // first visit would compete with Python's download. (Registered already: nothing waits. A
  // browser asking to save data: not registered until 「整門課離線用」 is pressed.)
  const LAB_WAIT = 20000;
  state.registered = new Promise((resolve) => {
    const register = () => resolve(workers.register(new URL("sw.js", root)).catch(() => null));
    const afterLoad = () => {
      if (!document.querySelector(".sd-lab__frame")) { register(); return; }
      const timer = setTimeout(register, LAB_WAIT);
      window.addEventListener("message", function started(event) {
        const lab = event.origin === location.origin && event.data && event.data.specdecLab;
        if (!lab || !lab.kernelReady) return;
        window.removeEventListener("message", started);
        clearTimeout(timer);
        register();
      });
    };
    state.registerNow = register;          // 「整門課離線用」 pressed
    workers.getRegistration(root.href).then((found) => {
      if (found) register();
      else if (navigator.connection && navigator.connection.saveData) return;   // nothing on its own
      else if (document.readyState === "complete") afterLoad();
      else window.addEventListener("load", afterLoad, { once: true });
    }, afterLoad);
  });

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
      let reloading = false;                     // once: a second reload would cut the first short
      const reload = () => { if (!reloading) { reloading = true; location.reload(); } };
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
    window.dispatchEvent(new CustomEvent("specdec-offline-worker", { detail: message }));
    if (message === "ready" || (message.status && message.status.ready)) showUpdate();
    if (message.kept !== undefined) {
      state.kept = message.kept;
      window.dispatchEvent(new CustomEvent("specdec-offline", { detail: { kept: message.kept } }));
    }
  });
  send("status");

  /* beside the progress view */
  const el = window.specdecEl;
  const mb = (bytes) => (bytes / 1e6).toFixed(1) + "\u00a0MB";   // the unit kept with its number
  function offlineView(view) {
    const used = el("p", { className: "sd-offline__used" });
    const whole = el("button", { type: "button", className: "md-button sd-offline__whole", text: "整門課離線用" });
    const bar = el("progress", { className: "sd-offline__bar", max: "1", value: "0", "aria-label": "整門課下載進度" });
    bar.hidden = true;
    const clear = el("button", { type: "button", className: "md-button sd-offline__clear", text: "清除離線資料" });
    const said = el("p", { className: "sd-offline__said", role: "status" });
    const box = el("div", { className: "sd-offline" }, [
      el("p", { className: "sd-progress__title" }, [el("strong", { text: "離線使用" })]),
      used, el("div", { className: "sd-offline__actions" }, [whole, clear]), bar, said]);
    view.after(box);
    const saveData = navigator.connection && navigator.connection.saveData;

    async function refresh() {
      if (navigator.storage && navigator.storage.estimate) {
        const { usage, quota } = await navigator.storage.estimate();
        used.textContent = `這個瀏覽器為本課程存了 ${mb(usage)}（可用上限約 ${Math.round(quota / 1e9)}\u00a0GB）。`;
      }
      send("size");                         // answered once a worker is active
      if (!workers.controller) {            // meanwhile the whole build's size (offline.json)
        fetch(new URL("offline.json", root)).then((r) => r.json()).then((manifest) => {
          const total = Object.values(manifest.files).reduce((sum, entry) => sum + entry[1], 0);
          if (!whole.textContent.includes("MB")) whole.textContent = `整門課離線用（下載 ${mb(total)}）`;
        }).catch(() => {});
      }
    }
    const follow = (event) => {
      if (!box.isConnected) { window.removeEventListener("specdec-offline-worker", follow); return; }
      const message = event.detail;
      if (message.progress) {
        bar.hidden = false;
        bar.max = message.progress[1] || 1;
        bar.value = message.progress[0];
      }
      if (message.whole) {
        const { missing } = message.whole;
        if (missing === 0 && !message.done && !said.textContent) said.textContent = "整門課都已存好，可以離線使用。";
        if (missing === null) {
          whole.disabled = true;
          whole.textContent = "整門課離線用（這次瀏覽存好課程頁之後）";
        } else if (missing === 0) {
          whole.hidden = true;                   // the sentence below says so
        } else {
          whole.hidden = false;
          whole.disabled = false;
          whole.textContent = `整門課離線用（下載 ${mb(missing)}）`;
        }
        if (message.done) {
          bar.hidden = true;
          said.textContent = missing === 0 ? "整門課已存好：沒有網路也能開每一頁與每個實驗場。"
            : `還有 ${mb(missing)} 沒存到（網路斷了？），再按一次會接著下載。`;
          refresh();
        }
      }
      if (message === "cleared") {
        said.textContent = "已清除離線資料（學習紀錄沒動）。之後上網瀏覽的頁面會再存一份。";
        refresh();
      }
    };
    window.addEventListener("specdec-offline-worker", follow);
    whole.addEventListener("click", async () => {
      whole.disabled = true;
      said.textContent = saveData ? "瀏覽器開著省流量模式；你按了下載，所以照樣下載。" : "下載中…";
      try { if (navigator.storage && navigator.storage.persist) await navigator.storage.persist(); } catch (e) { /* kept anyway */ }
      state.registerNow();
      send("whole");
    });
    clear.addEventListener("click", () => {
      if (!window.confirm("清除這個瀏覽器裡課程的離線資料（課程頁與實驗場的副本）？學習紀錄不會動。")) return;
      send("clear");
    });
    refresh();
  }
  function mount() {
    document.querySelectorAll(".sd-progress:not([data-sd-offline])").forEach((view) => {
      view.setAttribute("data-sd-offline", "");
      offlineView(view);
    });
  }
  mount();
  if (window.document$) window.document$.subscribe(mount);

  /* what the started lab fetched: the lab page's own files, those Python fetched as it started and
   * after (specdec-boot.json), and the lab's extensions (the kernel's worker) */
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
        urls.push(new URL(name, base).href);   // (not their .later.zip: Run all needs none, and
                                              // the worker keeps one a traceback fetches online)
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
