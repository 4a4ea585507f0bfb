// 15.: JupyterLite's service worker kept while the lab loads. Runs at once, before JupyterLite's
// own code reads the version it noted.

// 15. JupyterLite's service worker (through it the kernel reads the lab's files: a learner's
// upload) registers on the first lab page a browser opens. On the next, JupyterLite finds it in
// control but no version noted for it in localStorage (it notes one only then), so it unregisters
// it and registers it again while the lab loads: in WebKit such a page sometimes never showed the
// notebook, or never started the kernel. So the version of this JupyterLite is noted for the
// worker in control first, as JupyterLite itself would note it, and the worker stays. (Another
// version noted means another JupyterLite: that one still starts its worker afresh.)
try {
  const controller = navigator.serviceWorker && navigator.serviceWorker.controller;
  const key = controller && `${controller.scriptURL}-version`;
  if (key && APP_VERSION && localStorage.getItem(key) === null) localStorage.setItem(key, APP_VERSION);
} catch (e) { /* storage off: JupyterLite decides */ }
