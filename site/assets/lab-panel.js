/* The 實驗場 beside the lesson (partials/lab-panel.html).
 *
 * Wide screens: the notebook sits on the right, fixed while the lesson scrolls; drag its edge (or
 * focus the edge and use ← → Home End) to resize it, "收合" folds it to a tab. It is put in after the lesson
 * has painted (at once when it was painted before this script ran), so the kernel starts as the
 * page opens without holding the lesson up.
 * Narrow screens (phones): a "🧪 實驗場" button opens it over the lesson; it loads on first open.
 * There the open lab is a step of the tab's history, as a full-screen view is: Back (Android's
 * button or gesture) closes it and the learner is where they were in the lesson, instead of on the
 * page before; "關閉 ✕" or Esc takes that step back too, so the next Back leaves the page as usual.
 * The lab's page script (site/lab/page/, served as lab/specdec-lab.js) reports how Python's start is going; this shows it.
 * "⬇ 下載" saves the learner's notebook as it is now (the original before the lab has loaded).
 * The lab keeps the learner's notebook for this tab while they move between pages (site/lab/page/notebook.js);
 * a refresh of the page forgets it, and the original comes back: that is what the lesson promises.
 * No dependencies; mounts as it runs (the page puts it before the theme's bundle), then through
 * Material's document$ (instant navigation).
 */
(function () {
  "use strict";

  // (site/overrides/main.html lays a lab page out by these same rules before the lesson's first
  // layout, so that the lesson does not reflow as the panel mounts; mount() repeats it, for pages
  // reached by instant navigation)
  const WIDE = window.matchMedia("(min-width: 60em)");
  const LAYOUT_KEY = "specdec-lab:layout";          // the learner's panel width / folded state
  const MIN_WIDTH = 320;

  const OVERLAY = "specdecLabOverlay";               // history.state of the step the open lab adds
  const overlayStep = () => !!(history.state && history.state[OVERLAY]);
  let onOverlayStep = overlayStep();                   // (a reload keeps the step)
  let closeOnBack = null;                              // the current lab page's, set by mount()
  let showSection = null;                              // the same: opens the lab at a cell
  // Leaving that step changes nothing but the lab: the theme's instant navigation, listening after
  // this, would load the same page again (its frame, the learner's notebook and Python with it).
  window.addEventListener("popstate", (e) => {
    const left = onOverlayStep && !overlayStep();
    onOverlayStep = overlayStep();
    if (!left) return;
    e.stopImmediatePropagation();
    if (closeOnBack) closeOnBack();
  });

  // A lesson's 「實驗場 2️⃣」 (a link to the notebook's static preview, site/hooks/lab_links.py)
  // opens the lab beside the lesson, or over it on a phone, at that section.
  document.addEventListener("click", (e) => {
    const link = e.target.closest && e.target.closest("a.sd-lab-link[data-lab-cell]");
    if (!link || !showSection || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    showSection(Number(link.dataset.labCell));
  });

  function readLayout() {
    try { return JSON.parse(localStorage.getItem(LAYOUT_KEY)) || {}; } catch (e) { return {}; }
  }
  function saveLayout(patch) {
    try { localStorage.setItem(LAYOUT_KEY, JSON.stringify({ ...readLayout(), ...patch })); } catch (e) { /* private mode */ }
  }
  // a reload of the lesson page restores the original notebooks: forget what the lab had kept
  const KEPT = "specdec-lab:kept:";
  function keptNotebook(name) {
    try { return sessionStorage.getItem(KEPT + name) !== null; } catch (e) { return false; }
  }
  try {
    if (performance.getEntriesByType("navigation").some((entry) => entry.type === "reload")) {
      Object.keys(sessionStorage).filter((key) => key.startsWith(KEPT)).forEach((key) => sessionStorage.removeItem(key));
    }
  } catch (e) { /* storage off: nothing was kept */ }
  // Moving to another page keeps the notebook, so the lab's "Leave site?" (JupyterLab's question
  // about unsaved changes) would be a false alarm then; it stays for a reload or a closed tab.
  // The lab's page script reads this flag (Navigation API; without it the question stays).
  if (window.navigation) {
    navigation.addEventListener("navigate", (e) => { window.specdecLabMoving = e.navigationType !== "reload"; });
    for (const done of ["navigatesuccess", "navigateerror"]) {
      navigation.addEventListener(done, () => { window.specdecLabMoving = false; });
    }
  }

  // The "🧪 實驗場" button floats over the lesson (a phone, or a folded panel): it steps aside
  // while the learner scrolls down to read (on a phone it covered a tile of the toy, a table's last
  // column, a quiz's 重做這題) and comes back at a scroll up or the page's top; with the keyboard's
  // focus it stays (lab-panel.css). Material's back-to-top button does the same, the other way.
  // (from the top: read as this script runs, during the page's parsing, window.scrollY laid the
  // whole lesson out then and there, and said 0 anyway: a reload's scroll position comes later)
  let lastScrollY = 0;
  window.addEventListener("scroll", () => {
    const y = window.scrollY;
    if (Math.abs(y - lastScrollY) < 8 && y > 0) return;
    document.body.classList.toggle("sd-reading-on", y > lastScrollY && y > 0);
    lastScrollY = y;
  }, { passive: true });
  // It also steps aside when the learner uses a toy or a quiz it lies over: at the top of lesson 1
  // on a phone it sat over the toy's 5th column, and 抽一輪's 5th tile came out under it.
  function asideFrom(event) {
    const widget = event.target.closest && event.target.closest(".sd-toy, .sd-quiz");
    const button = document.querySelector(".sd-lab-open");
    if (!widget || !button) return;
    const a = widget.getBoundingClientRect(), b = button.getBoundingClientRect();   // (0 × 0 when not shown)
    if (b.width && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
      document.body.classList.add("sd-reading-on");
    }
  }
  document.addEventListener("pointerdown", asideFrom, { passive: true });
  document.addEventListener("focusin", asideFrom);

  // the lesson keeps LESSON_ROOM px beside the panel (its navigation and a readable column: at
  // 1440 px the text stays ~480 px wide), and the panel at most 70% of the window
  const LESSON_ROOM = 720;
  function maxWidth() {
    return Math.max(MIN_WIDTH, Math.min(window.innerWidth * 0.7, window.innerWidth - LESSON_ROOM));
  }
  function clampWidth(px) {
    return Math.round(Math.max(MIN_WIDTH, Math.min(px, maxWidth())));
  }

  // the page has been painted (Paint Timing; a browser without it waits for the next frame)
  function painted() {
    try { return performance.getEntriesByType("paint").length > 0; } catch (e) { return false; }
  }

  function mount(atLoad) {
    const panel = document.getElementById("sd-lab");
    document.body.classList.toggle("sd-has-lab", !!panel);
    if (!panel) { document.body.classList.remove("sd-lab-shown"); closeOnBack = null; showSection = null; return; }
    if (panel.dataset.mounted) return;
    panel.dataset.mounted = "1";
    panel.classList.add("sd-lab--mounted");

    const q = (sel) => panel.querySelector(sel);
    const body = q(".sd-lab__body");
    const openButton = document.querySelector(".sd-lab-open");
    const closeButton = q(".sd-lab__close");
    const handle = q(".sd-lab__resize");
    const download = q(".sd-lab__download");
    const progress = q(".sd-lab__progress");
    const status = q(".sd-lab__status-text");
    const notebookName = panel.dataset.notebook;
    // absolute: Material's bundle, as it starts, assigns every relative src in the page to itself
    // (to make it absolute), which loads an iframe again; the frame can be in by then (the bundle
    // comes after this script, and late on a busy machine), and its first load was aborted
    const labUrl = new URL(panel.dataset.lab + "notebooks/index.html?path=" + encodeURIComponent(notebookName),
                           document.baseURI).href;
    let frame = null;
    let hideTimer = null;

    const layout = readLayout();
    if (layout.width) document.documentElement.style.setProperty("--sd-lab-w", clampWidth(layout.width) + "px");
    panel.tabIndex = -1;
    // (for assistive technology, once the page is laid out: read at the next frame, the panel's
    // box laid out a phone's lesson before its first paint)
    (window.requestIdleCallback || setTimeout)(describeWidth);
    openButton.hidden = false;
    closeButton.hidden = false;
    handle.hidden = false;

    function load() {
      if (frame) return;
      frame = document.createElement("iframe");
      frame.className = "sd-lab__frame";
      frame.title = "實驗場：Python 筆記本 " + notebookName;
      frame.src = labUrl;
      // no lab where the page was built (`mkdocs serve` builds the lessons only): the frame got a
      // 404 page and the panel said 載入筆記本介面… for ever; say so, and keep the preview
      frame.addEventListener("load", () => {
        let isLab = true, notKept = false;
        try {
          isLab = !!frame.contentDocument.getElementById("jupyter-config-data");
          // offline, and this lab was never kept: the offline worker's 離線中 page (offline-sw.js)
          notKept = !!frame.contentDocument.querySelector("meta[name='specdec-not-kept']");
        } catch (e) { /* cannot tell */ }
        if (!isLab) {
          panel.classList.add("sd-lab--no-lab");    // (the preview's "Python 就緒後…" note goes: lab-panel.css)
          render({ stage: "error", keepPreview: true, text: notKept
            ? "離線中：這個實驗場還沒存在這台裝置上。連上網路後打開一次這一頁、等 Python 啟動，或在第 1 課按「整門課離線用」。"
            : "這裡沒有實驗場：這份預覽只組了課文（mkdocs serve）。要連同實驗場一起看，用 make serve。" });
        }
      });
      body.replaceChildren(frame);     // (it takes the focus only from the learner: site/lab/page/keyboard.js, 13.)
      showPreview();
      progress.hidden = false;
      render({ stage: "ui", text: "載入筆記本介面…" });
    }

    // Until the live notebook is on screen, its static preview (the stored cells and outputs)
    // covers the frame; then the live one takes over, showing the cell the learner had reached.
    let live = false;
    function showPreview() {
      if (keptNotebook(notebookName)) return;    // not the original: the learner's comes with the lab
      fetch(panel.dataset.preview).then((r) => (r.ok ? r.text() : "")).then((html) => {
        if (!html || live) return;
        const preview = document.createElement("div");
        preview.className = "sd-lab__preview";
        preview.tabIndex = 0;                      // scrollable with the keyboard
        preview.setAttribute("role", "region");
        preview.setAttribute("aria-label", "筆記本預覽（唯讀），Python 載入中");
        preview.innerHTML = html;
        body.append(preview);
        // code and formulas wider than the panel scroll sideways: reachable with the keyboard too
        // (all measured, then marked: a mark between two measures laid the panel out again)
        [...preview.querySelectorAll("pre > code, .sd-math")].filter((el) => el.scrollWidth > el.clientWidth)
          .forEach((el) => { el.tabIndex = 0; });
        if (window.sdScrollHints) window.sdScrollHints(preview);   // a11y.js: the fading edge
        for (const type of ["wheel", "touchstart", "keydown"]) {
          preview.addEventListener(type, () => { wanted = null; }, { passive: true });   // the learner's own way
        }
        reveal();
      }).catch(() => { /* no preview: the frame shows as it loads */ });
    }
    function showLive() {
      if (live) return;
      live = true;
      const preview = body.querySelector(".sd-lab__preview");
      if (!preview) { reveal(); return; }
      const top = preview.scrollTop;
      const reached = top > 0 && [...preview.querySelectorAll("[data-cell]")]
        .find((cell) => cell.offsetTop + cell.offsetHeight > top);
      if (reached && wanted === null) wanted = Number(reached.dataset.cell);
      reveal();
      const hadFocus = preview.contains(document.activeElement);   // the learner was in the lab's preview
      requestAnimationFrame(() => { preview.remove(); if (hadFocus) frame.focus(); });
    }

    // the cell a 「實驗場 N️⃣」 link asked for: the preview scrolls to it, and the live notebook
    // opens there (specdec-lab.js, 8.)
    let wanted = null;
    function reveal() {
      if (wanted === null) return;
      if (live) {
        frame.contentWindow.postMessage({ specdecLabShowCell: wanted }, location.origin);
        wanted = null;
        return;
      }
      const preview = body.querySelector(".sd-lab__preview");
      const cell = preview && preview.querySelector(`[data-cell="${wanted}"]`);
      if (cell) preview.scrollTop += cell.getBoundingClientRect().top - preview.getBoundingClientRect().top;
    }
    showSection = (index) => {
      wanted = index;
      setOpen(true, true);
      reveal();
    };

    function setOpen(open, focus) {
      const wasOpen = document.body.classList.contains("sd-lab-shown");
      document.body.classList.toggle("sd-lab-shown", open);
      openButton.setAttribute("aria-expanded", String(open));
      if (WIDE.matches) saveLayout({ folded: !open });
      else if (open && !wasOpen && !onOverlayStep) {
        history.pushState({ [OVERLAY]: true }, "");
        onOverlayStep = true;
      }
      // (by the flag: the theme's table of contents may have replaced the step's state meanwhile)
      else if (!open && onOverlayStep) history.back();           // (its popstate finds it closed)
      if (open) load();
      if (focus) (open ? panel : openButton).focus();
    }
    closeOnBack = () => {
      if (!WIDE.matches && document.body.classList.contains("sd-lab-shown")) setOpen(false, true);
    };

    function labelButtons() {
      closeButton.textContent = WIDE.matches ? "收合 ▶" : "關閉 ✕";
      closeButton.setAttribute("aria-label", WIDE.matches ? "收合實驗場" : "關閉實驗場");
    }

    // where it starts: open beside the lesson on a wide screen (unless folded last time)
    labelButtons();
    WIDE.addEventListener("change", () => { labelButtons(); setOpen(WIDE.matches && !readLayout().folded); });
    if (WIDE.matches && !layout.folded) {
      document.body.classList.add("sd-lab-shown");
      openButton.setAttribute("aria-expanded", "true");
      // after the lesson's first paint. A long lesson is painted before this script runs (WebKit
      // paints lesson 1 while its parser yields): the next frame would also wait for the theme's
      // bundle, which runs next (0.4-0.6 s in WebKit), so the frame goes in now (once this script
      // has run). A page moved to by instant navigation waits for its frame.
      if (atLoad === true && painted()) queueMicrotask(load);
      else requestAnimationFrame(() => setTimeout(load, 0));
    }
    openButton.addEventListener("click", () => setOpen(true, true));
    closeButton.addEventListener("click", () => setOpen(false, true));
    panel.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !WIDE.matches) setOpen(false, true);
    });

    // resizing: drag the left edge, or ← → on it
    function describeWidth() {
      const width = Math.round(panel.getBoundingClientRect().width) || clampWidth(window.innerWidth * 0.42);
      const percent = (px) => String(Math.round((100 * px) / window.innerWidth));
      handle.setAttribute("aria-valuemin", percent(MIN_WIDTH));
      handle.setAttribute("aria-valuemax", percent(maxWidth()));
      handle.setAttribute("aria-valuenow", percent(width));
      handle.setAttribute("aria-valuetext", `實驗場寬 ${width} 像素`);
    }
    function setWidth(px) {
      const width = clampWidth(px);
      document.documentElement.style.setProperty("--sd-lab-w", width + "px");
      saveLayout({ width });
      describeWidth();
    }
    handle.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      handle.setPointerCapture(e.pointerId);
      panel.classList.add("sd-lab--dragging");
    });
    handle.addEventListener("pointermove", (e) => {
      if (handle.hasPointerCapture(e.pointerId)) setWidth(window.innerWidth - e.clientX);
    });
    handle.addEventListener("pointerup", (e) => {
      handle.releasePointerCapture(e.pointerId);
      panel.classList.remove("sd-lab--dragging");
    });
    handle.addEventListener("keydown", (e) => {
      const width = panel.getBoundingClientRect().width;
      const to = { ArrowLeft: width + 40, ArrowRight: width - 40, End: maxWidth(), Home: MIN_WIDTH }[e.key];
      if (to !== undefined) { e.preventDefault(); setWidth(to); }
    });

    // the learner's own copy: the notebook as it is in the lab now
    download.addEventListener("click", (e) => {
      let notebook = null;
      try { notebook = frame && frame.contentWindow.specdecLab && frame.contentWindow.specdecLab.notebook(); } catch (err) { /* another origin */ }
      if (!notebook) return;            // the link itself: the original notebook
      e.preventDefault();
      const blob = new Blob([JSON.stringify(notebook, null, 1) + "\n"], { type: "application/x-ipynb+json" });
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = notebookName.replace(/\.ipynb$/, "") + "-我的版本.ipynb";
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    });

    // what Python is doing, from the lab's page script. The panel changes only when the lab
    // reports, and only what changed: no clock ticks beside the lesson while Python starts. (It
    // counted the seconds; without a GPU, WebKit composited each of those frames on the CPU that
    // Python's start needed, and lesson 1's first output came about 0.6-1 s later: benchmarks/README.md.)
    function render(s) {
      if (s.notebookShown || (s.stage === "error" && !s.keepPreview)) showLive();
      // steps 1 and 2 run side by side (Python starts loading before the notebook is drawn):
      // each is "current" while under way, "done" once finished; 3 is done with 2
      const shown = !!s.notebookShown, ready = !!s.kernelReady, failed = s.stage === "error";
      const done = [shown, ready, ready];
      const underWay = [!shown && !failed, !ready && !failed && s.stage !== "ui", false];
      panel.querySelectorAll(".sd-lab__steps span").forEach((chip, i) => {
        chip.classList.toggle("is-done", done[i]);
        chip.classList.toggle("is-current", underWay[i]);
      });
      let text = s.text || "";
      const waiting = !ready || s.stage === "packages";
      if (s.queued > 0) text += "　你按的執行會在 Python 就緒後自動開始。";
      if (status.textContent !== text) status.textContent = text;   // (a live region: only on change)
      progress.classList.toggle("is-indeterminate", waiting && s.stage !== "error");
      progress.classList.toggle("is-error", s.stage === "error");
      if (panel.dataset.stage !== s.stage) panel.dataset.stage = s.stage;
      const label = ready ? "🧪 實驗場 ✓" : "🧪 實驗場";
      if (openButton.textContent !== label) openButton.textContent = label;
      clearTimeout(hideTimer);
      if (s.stage === "ready") hideTimer = setTimeout(() => { progress.hidden = true; }, 2500);
      else progress.hidden = false;
    }
    window.addEventListener("message", (e) => {
      if (!frame || e.source !== frame.contentWindow || e.origin !== location.origin) return;
      if (e.data && e.data.specdecLab) render(e.data.specdecLab);
    });
  }

  // before the theme's bundle (see toy.js): mount now, then follow Material's document$
  mount(true);
  window.specdecEachPage(mount);
})();
