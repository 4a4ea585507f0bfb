// The course's offline copy (issue 45, docs/offline.md), run at the head of both service workers:
// the site's (sw.js at the site's root: the lesson pages) and JupyterLite's (lab/service-worker.js:
// the lab, whose own code, the /api/drive and stdin relay, follows unchanged). The build writes
// each as `self.specdecSiteRoot = "./" or "../"; importScripts(".../offline-sw.js");` + JupyterLite's.
//
// One cache per build, "specdec-<version>" (offline.json: every file's sha256; the version is a
// hash of that list). A file enters a cache only if its bytes have that build's hash, so a cache
// never holds two builds. The cache in use ("current") changes only when a new one is complete and
// the learner reloads from the 「課程已更新」 notice (or opens the course with no page of it open);
// then the others are deleted. A file whose hash did not change is copied, not fetched again.
// Requests for files the build does not list (JupyterLite's /api/drive, the heartbeat) go on to
// JupyterLite's handler or to the network, as without this file.
(function () {
  "use strict";
  const SITE = new URL(self.specdecSiteRoot || "./", self.location.href).href;
  const MANIFEST = SITE + "offline.json";
  const STATE = "specdec-offline-state";          // a cache holding one JSON: {current, ready}
  const STATE_KEY = SITE + "offline.json?state";   // (absolute: both workers read the same entry)
  const PREFIX = "specdec-";
  const MANIFEST_KEY = SITE + "offline.json?manifest";   // each version's manifest, in its cache
  const channel = "BroadcastChannel" in self ? new BroadcastChannel("specdec-offline") : null;

  let memo = null;          // {state, manifests: {version: manifest}}: read again when told
  async function readState() {
    const stored = await (await caches.open(STATE)).match(STATE_KEY);
    return stored ? stored.json() : { current: null, ready: null };
  }
  async function writeState(state) {
    await (await caches.open(STATE)).put(STATE_KEY, new Response(JSON.stringify(state)));
    memo = null;
    if (channel) channel.postMessage("state");
  }
  if (channel) channel.onmessage = () => { memo = null; };
  async function manifestOf(version) {
    if (!version) return null;
    const stored = await (await caches.open(PREFIX + version)).match(MANIFEST_KEY);
    return stored ? stored.json() : null;
  }
  async function known() {
    if (!memo) {
      const state = await readState();
      memo = { state, current: await manifestOf(state.current) };
    }
    return memo;
  }

  function pathOf(url) {                  // a file's path in the site, or null (not the site's)
    if (!url.startsWith(SITE)) return null;
    let path = decodeURIComponent(new URL(url).pathname.slice(new URL(SITE).pathname.length));
    if (path === "" || path.endsWith("/")) path += "index.html";
    return path;
  }
  const keyOf = (path) => SITE + path;

  async function sha256(buffer) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
    return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  // (a file copied from the previous build's cache; one fetched is checked by fetchAndKeep)
  // the response itself if its bytes have the build's hash, else null. Kept as fetched, not
  // rebuilt from its bytes: a response with no URL gets no code cache, so Chromium compiled the
  // lab's JavaScript and Python's WebAssembly again on every load from the cache.
  async function verified(response, expected) {
    if (!response || !response.ok) return null;
    const body = await response.clone().arrayBuffer();
    return (await sha256(body)) === expected ? response : null;
  }
  async function keep(cache, manifest, path, response) {
    const entry = manifest.files[path];
    const good = entry && await verified(response, entry[0]);
    if (good) await cache.put(keyOf(path), good);
    return !!good;
  }
  // A file fetched to be kept: the browser checks its hash (Subresource Integrity: a mismatch
  // rejects the fetch) and the cache reads the body straight from the network. Hashing it here
  // took a copy of every file as an ArrayBuffer, garbage the worker's heap kept until its next
  // collection: on a first visit, tens of MB in each of the two workers while the lab ran
  // (issue 46, benchmarks/lab_memory.py). Rejects when the network does (offline).
  function integrity(hex) {
    return "sha256-" + btoa(String.fromCharCode(...hex.match(/../g).map((h) => parseInt(h, 16))));
  }
  async function fetchAndKeep(cache, manifest, path, init) {
    const entry = manifest.files[path];
    if (!entry) return false;
    let response;
    try {
      response = await fetch(keyOf(path), { ...(init || {}), integrity: integrity(entry[0]) });
    } catch (error) {
      if (!self.navigator.onLine) throw error;
      return false;        // (a hash that is not the build's: not kept)
    }
    if (!response.ok) return false;
    await cache.put(keyOf(path), response);
    return true;
  }

  // A build's cache, filled: the lesson pages and their assets (everything outside lab/), and
  // every file the current cache holds (a lab visited), each copied if its hash is the same.
  let building = null;
  function checkForUpdate() {
    if (!building) building = update().catch(() => {}).finally(() => { building = null; });
    return building;
  }
  async function update() {
    const response = await fetch(MANIFEST, { cache: "no-cache" });
    if (!response.ok) return;
    const manifest = await response.json();
    const state = await readState();
    if (manifest.version === state.current || manifest.version === state.ready) return;
    const old = await manifestOf(state.current);
    const oldCache = old && await caches.open(PREFIX + state.current);
    const held = oldCache ? (await oldCache.keys()).map((r) => pathOf(r.url)) : [];
    const wanted = new Set(Object.keys(manifest.files).filter((p) => !p.startsWith("lab/")));
    for (const path of held) if (path && manifest.files[path]) wanted.add(path);
    const cache = await caches.open(PREFIX + manifest.version);
    for (const path of wanted) {
      if (await cache.match(keyOf(path))) continue;          // (an update begun before)
      const same = old && old.files[path] && old.files[path][0] === manifest.files[path][0];
      const copy = same && await oldCache.match(keyOf(path));
      if (copy && await keep(cache, manifest, path, copy)) continue;
      if (!await fetchAndKeep(cache, manifest, path, { cache: "no-cache" })) {
        return;      // not whole (a file changed again meanwhile): tried again on the next visit
      }
    }
    await cache.put(MANIFEST_KEY, new Response(JSON.stringify(manifest)));
    const now = await readState();
    if (!now.current) await writeState({ current: manifest.version, ready: null });
    else {
      await writeState({ current: now.current, ready: manifest.version });
      tell({ specdecOffline: "ready" });
    }
  }

  async function switchToReady() {
    const state = await readState();
    if (state.ready) await writeState({ current: state.ready, ready: null });
    const current = (await readState()).current;
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== STATE && name !== PREFIX + current) await caches.delete(name);
    }
  }

  // files a page fetched before a worker was in control (the first visit's lab): kept if listed
  // (and every file under the given folders of the site)
  async function keepFetched(urls, prefixes) {
    const { state, current } = await known();
    if (!current) return 0;
    const cache = await caches.open(PREFIX + state.current);
    const paths = new Set(urls.map(pathOf).filter((path) => path && current.files[path]));
    for (const path of Object.keys(current.files)) {
      if ((prefixes || []).some((prefix) => path.startsWith(prefix))) paths.add(path);
    }
    let kept = 0;
    for (const path of paths) {
      if (await cache.match(keyOf(path))) { kept += 1; continue; }
      try {
        if (await fetchAndKeep(cache, current, path)) kept += 1;
      } catch (e) { /* offline now: kept another time */ }
    }
    return kept;
  }

  // 「整門課離線用」: how many bytes of the current build are not kept yet, and keeping them all
  async function wholeCourse(fetchThem, progress) {
    const { state, current } = await known();
    if (!current) return { missing: null, total: null };
    const cache = await caches.open(PREFIX + state.current);
    const held = new Set((await cache.keys()).map((r) => pathOf(r.url)));
    const missing = Object.keys(current.files).filter((path) => !held.has(path));
    const bytes = (paths) => paths.reduce((sum, path) => sum + current.files[path][1], 0);
    const total = bytes(Object.keys(current.files));
    if (!fetchThem) return { missing: bytes(missing), total };
    let done = 0;
    for (const path of missing) {
      try { await fetchAndKeep(cache, current, path); } catch (e) { /* counted missing */ }
      done += current.files[path][1];
      progress([done, bytes(missing)]);
    }
    return wholeCourse(false);
  }

  async function clearAll() {
    for (const name of await caches.keys()) if (name.startsWith(PREFIX)) await caches.delete(name);
    memo = null;
    if (channel) channel.postMessage("state");
  }

  async function tell(message) {
    for (const client of await self.clients.matchAll({ type: "window", includeUncontrolled: true })) {
      client.postMessage(message);
    }
  }

  async function answer(event) {
    const { state, current } = await known();
    const path = pathOf(event.request.url);
    const cache = await caches.open(PREFIX + state.current);
    const cached = await cache.match(keyOf(path));
    if (cached) return cached;
    // fetched with its hash checked, kept, then answered from the cache (not the network's
    // answer with a clone of it hashed here: each file's bytes once more in this worker's heap,
    // until a collection); a file not kept (another build's bytes) is fetched as asked
    if (await fetchAndKeep(cache, current, path).catch(() => false)) {
      const kept = await cache.match(keyOf(path));
      if (kept) return kept;
    }
    return fetch(event.request);
  }

  // The site's worker has the lesson pages cached before it takes over. The lab's worker does not
  // wait for them: JupyterLite starts the kernel once its worker is registered, and a kernel
  // started while that worker still installs has no /api/drive relay (a learner's upload lost).
  self.addEventListener("install", (event) => {
    if (self.specdecSiteWorker) event.waitUntil(checkForUpdate());
    else checkForUpdate();
  });
  // The site's worker takes no open page over (JupyterLite's claim, in the code after this file,
  // is stopped there): a lab page it took over as JupyterLite starts in it has JupyterLite
  // unregister every worker of the site (docs/offline.md). JupyterLite's own worker claims its
  // lab pages as before.
  self.addEventListener("activate", (event) => {
    if (self.specdecSiteWorker) event.stopImmediatePropagation();
  });
  self.addEventListener("message", (event) => {
    const data = (event.data || {}).specdecOffline;
    const reply = (message) => event.source && event.source.postMessage({ specdecOffline: message });
    if (data === "status") {
      event.waitUntil(readState().then((state) => reply({ status: state })));
    } else if (data === "switch") {
      event.waitUntil(switchToReady().then(() => reply("switched")));
    } else if (data === "size") {
      event.waitUntil(wholeCourse(false).then((whole) => reply({ whole })));
    } else if (data === "whole") {
      let last = 0;
      const progress = (value) => {          // at most a few times a second
        if (Date.now() - last > 200) { last = Date.now(); reply({ progress: value }); }
      };
      event.waitUntil(wholeCourse(true, progress).then((whole) => reply({ whole, done: true })));
    } else if (data === "clear") {
      event.waitUntil(clearAll().then(() => reply("cleared")));
    } else if (data && data.keep) {
      event.waitUntil(keepFetched(data.keep, data.prefixes).then((kept) => reply({ kept })));
    }
  });

  // JupyterLite's relay and heartbeat are its own handler's, always
  const RELAY = /\/api\/(drive|stdin\/|service-worker-heartbeat)/;

  self.addEventListener("fetch", (event) => {
    const { request } = event;
    if (request.method !== "GET" || !request.url.startsWith(SITE) || RELAY.test(new URL(request.url).pathname)) return;
    const path = pathOf(request.url);
    // a page opened (not a lab's frame: its page checked already): offline.json revalidated
    if (request.mode === "navigate" && request.destination === "document") {
      event.waitUntil(readState().then(async (state) => {
        // no page of the course open: a new build completed earlier is taken now
        const open = await self.clients.matchAll({ type: "window" });
        if (state.ready && open.length === 0) await switchToReady();
        await checkForUpdate();
      }).catch(() => {}));
    }
    // answered here (from the cache, else the network as JupyterLite's handler would), not there too
    event.stopImmediatePropagation();
    const answered = known().then(({ current }) =>
      current && current.files[path] ? answer(event) : fetch(request)).catch(() => fetch(request));
    // A page neither kept nor reachable gets a page saying so, never a failed answer: Firefox
    // counts each failed answer to a navigation as the worker's fault and, after a few (a lab
    // frame not kept, opened offline on three pages), unregisters it: the whole course offline.
    event.respondWith(request.mode === "navigate" ? answered.catch(() => notKept()) : answered);
  });

  // 503, in the course's language: what to do to have this page offline
  function notKept() {
    const html = `<!doctype html><html lang="zh-Hant-TW"><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="specdec-not-kept" content="">
<title>離線中</title>
<body style="font-family: system-ui, sans-serif; margin: 1.5rem; line-height: 1.6">
<p><strong>離線中：這一頁還沒存在這台裝置上。</strong></p>
<p>連上網路後打開一次這一頁（有實驗場的頁面，等 Python 啟動），之後離線也能用；
或在第 1 課「離線使用」按「整門課離線用」，一次存好整門課。</p>`;
    return new Response(html, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } });
  }
})();
