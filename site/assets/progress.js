/* A learner's progress through the course, kept in this browser only (localStorage; nothing is
 * sent anywhere):
 *   specdec-lab:progress:read:PAGE   the learner reached the end of the lesson at PAGE ("", "lossless-lab/")
 *   specdec-lab:progress:quiz:KEY    a quiz answer (quiz.js): {first: right at the first try?, choices | entry}
 *   specdec-lab:progress:lab:NAME    a cell of the lab notebook NAME was run (site/lab/page/notebook.js)
 * KEY is the build's hash of what the question asks (quiz_format.py), so an edited question starts
 * fresh. window.specdecProgress is the store (quiz.js uses it); the page's end carries a marker
 * from the build (.sd-page: which page this is) and a lesson may hold the course-wide view,
 * <div class="sd-progress" data-course="[…lessons…]">, filled here. Runs before the theme's bundle,
 * then on every page of Material's instant navigation (document$).
 */
(function () {
  "use strict";
  const el = window.specdecEl;   // dom.js, loaded first
  const PREFIX = "specdec-lab:progress:";

  const store = {
    get(kind, id) {
      try { return JSON.parse(localStorage.getItem(PREFIX + kind + ":" + id) || "null"); } catch (e) { return null; }
    },
    set(kind, id, value) {
      try { localStorage.setItem(PREFIX + kind + ":" + id, JSON.stringify(value)); } catch (e) { /* storage off or full */ }
      window.dispatchEvent(new CustomEvent("specdec-progress"));
    },
    clear() {
      try {
        for (const key of Object.keys(localStorage)) if (key.startsWith(PREFIX)) localStorage.removeItem(key);
      } catch (e) { /* storage off */ }
      window.dispatchEvent(new CustomEvent("specdec-progress", { detail: { cleared: true } }));
    },
    any() {
      try { return Object.keys(localStorage).some((key) => key.startsWith(PREFIX)); } catch (e) { return false; }
    },
  };
  window.specdecProgress = store;


  /* the lesson counts as read once its end has been on screen */
  let watching = null;
  function watchEnd(marker) {
    if (watching) watching.disconnect();
    const page = marker.dataset.page;
    if (store.get("read", page) || !("IntersectionObserver" in window)) return;
    watching = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) {
        store.set("read", page, { at: Date.now() });
        watching.disconnect();
      }
    });
    watching.observe(marker);
  }

  function summary(lesson) {
    const read = !!store.get("read", lesson.page);
    const answers = lesson.quizzes.map((key) => store.get("quiz", key)).filter(Boolean);
    const right = answers.filter((a) => a.first === true).length;
    const ran = lesson.lab ? !!store.get("lab", lesson.lab) : null;
    return { read, answered: answers.length, right, total: lesson.quizzes.length, ran };
  }

  function badge(done, text) {
    return el("span", { className: "sd-progress__badge", "data-done": done ? "true" : "false" }, [
      el("span", { "aria-hidden": "true", text: done ? "✓ " : "○ " }), text]);
  }

  function renderView(view) {
    let course;
    try { course = JSON.parse(view.dataset.course || "[]"); } catch (e) { return; }
    const status = el("p", { className: "sd-progress__status", role: "status" });   // seen and heard
    const draw = (event) => {
      const cleared = event && event.detail && event.detail.cleared;
      const items = course.map((lesson) => {
        const s = summary(lesson);
        const parts = [badge(s.read, s.read ? "讀到最後了" : "還沒讀到最後")];
        if (s.total) {
          parts.push(badge(s.answered === s.total,
            `測驗：作答 ${s.answered} / ${s.total} 題，第一次就答對 ${s.right} 題`));
        }
        if (s.ran !== null) parts.push(badge(s.ran, s.ran ? "實驗場跑過" : "實驗場還沒跑過"));
        return el("li", { className: "sd-progress__lesson" }, [
          el("a", { href: lesson.href, text: lesson.title }), el("span", { className: "sd-progress__badges" }, parts)]);
      });
      const clear = el("button", { type: "button", className: "md-button sd-progress__clear", text: "清除紀錄" });
      clear.addEventListener("click", () => {
        if (!window.confirm("清除這個瀏覽器裡所有課程的閱讀、測驗答案與實驗場紀錄？")) return;
        store.clear();
      });
      view.hidden = !store.any() && !cleared;
      view.replaceChildren(
        el("p", { className: "sd-progress__title", id: "sd-progress-title" }, [el("strong", { text: "你的學習進度" })]),
        el("ul", { className: "sd-progress__lessons", "aria-labelledby": "sd-progress-title" }, items),
        el("p", { className: "sd-progress__note", text: "這些紀錄只存在這個瀏覽器裡（localStorage），不會傳到任何地方；換一台電腦或清除瀏覽資料就不見了。" }),
        el("div", { className: "sd-progress__actions" }, cleared ? [] : [clear]),
        status);
      if (cleared) {
        requestAnimationFrame(() => { status.textContent = "已清除這個瀏覽器裡的學習紀錄。"; });
        view.tabIndex = -1;
        view.focus();
      }
    };
    draw();
    const controller = new AbortController();
    window.addEventListener("specdec-progress", (event) => {
      if (!view.isConnected) { controller.abort(); return; }
      draw(event);
    }, { signal: controller.signal });
    window.addEventListener("storage", (event) => {
      if (!view.isConnected) { controller.abort(); return; }
      if (!event.key || event.key.startsWith(PREFIX)) draw();
    }, { signal: controller.signal });
  }

  function mount() {
    const marker = document.querySelector(".sd-page");
    if (marker) watchEnd(marker);
    document.querySelectorAll(".sd-progress:not([data-sd-ready])").forEach((view) => {
      view.setAttribute("data-sd-ready", "");
      renderView(view);
    });
  }

  mount();
  window.specdecEachPage(mount);
})();
