/* The lesson quiz, enhanced: choose → instant feedback with the explanation, retry, a score.
 *
 * The build (site/hooks/quiz_format.py) renders each `/// quiz` block as a list of options, each with
 * a folded <details> explanation, which is what a reader without JavaScript gets. This script turns
 * each option into a button; a choice marks it ✓/✗ (icon + text + colour), shows its explanation in
 * an aria-live region and counts the first choice of every question in the page's score.
 * A numeric question (.sd-calc) gets an input: the learner's number is right within data-tolerance
 * of data-value (the build computed both). Answers are kept in this browser (progress.js's store,
 * under the question's data-key) and shown again on reload and on instant navigation.
 * No dependencies; mounts as it runs (the page puts it
 * before the theme's bundle), then through Material's document$ (instant navigation).
 */
(function () {
  "use strict";
  const el = window.specdecEl;   // dom.js, loaded first


  /* a copy of an explanation node for the feedback box (ids stay unique in the page) */
  function copyWithoutIds(node) {
    const copy = node.cloneNode(true);
    if (copy.nodeType === 1) {
      copy.removeAttribute("id");
      copy.querySelectorAll("[id]").forEach((inner) => inner.removeAttribute("id"));
    }
    return copy;
  }

  const store = window.specdecProgress || { get: () => null, set: () => {} };

  function setUpPage(quizzes) {
    const first = new Map();   // quiz section → was its first choice right?
    const score = el("p", { className: "sd-quiz-score" });
    quizzes[quizzes.length - 1].after(score);

    // what the score counts, where the page has both kinds: "5 / 7" under a heading of five
    // scenario questions read wrong without it
    const calcs = quizzes.filter((section) => section.classList.contains("sd-calc")).length;
    const counted = calcs && calcs < quizzes.length
      ? `（算算看 ${calcs} 題＋情境測驗 ${quizzes.length - calcs} 題）` : "";

    function renderScore() {
      const right = [...first.values()].filter(Boolean).length;
      score.replaceChildren(
        el("strong", { text: "測驗成績" + counted + "：" }),
        `已作答 ${first.size} / ${quizzes.length} 題，第一次就答對 `,
        el("strong", { className: "sd-quiz-score__right", text: String(right) }),
        " 題。" + (first.size === quizzes.length ? "（重做不改變成績。）" : ""));
    }

    const resets = [];
    quizzes.forEach((section) => {
      const key = section.dataset.key;
      const saved = key ? store.get("quiz", key) : null;
      if (saved && typeof saved.first === "boolean") first.set(section, saved.first);
      const keep = (patch) => {
        if (!key) return;
        const now = store.get("quiz", key) || {};
        store.set("quiz", key, { ...now, ...patch });
      };
      const onAnswer = (correct, answer) => {
        if (!first.has(section)) first.set(section, correct);
        keep({ first: first.get(section), ...answer });
        renderScore();
      };
      const onRetry = (answer) => keep(answer);
      const question = section.classList.contains("sd-calc")
        ? enhanceNumber(section, onAnswer, onRetry) : enhance(section, onAnswer, onRetry);
      if (saved) question.restore(saved);
      resets.push(question.reset);
    });
    renderScore();
    // the progress view's 清除紀錄 forgets every answer: this page's questions start over too
    const controller = new AbortController();
    window.addEventListener("specdec-progress", (event) => {
      if (!score.isConnected) { controller.abort(); return; }
      if (!(event.detail && event.detail.cleared)) return;
      resets.forEach((reset) => reset());
      first.clear();
      renderScore();
    }, { signal: controller.signal });
  }

  function enhance(section, onAnswer, onRetry) {
    section.setAttribute("data-sd-ready", "");
    const options = [...section.querySelectorAll(".sd-quiz__option")];
    const feedback = el("div", { className: "sd-quiz__feedback", role: "status", "aria-live": "polite" });
    const retry = el("button", { type: "button", className: "md-button sd-quiz__retry", text: "重做這題" });
    retry.hidden = true;
    const list = section.querySelector(".sd-quiz__options");
    list.after(feedback, el("div", { className: "sd-quiz__actions" }, [retry]));
    section.classList.add("sd-quiz--live");

    const buttons = options.map((option) => {
      const choice = option.querySelector(".sd-quiz__choice");
      const why = option.querySelector(".sd-quiz__why");
      const button = el("button", { type: "button", className: "sd-quiz__button" }, [
        ...choice.childNodes,
        el("span", { className: "sd-quiz__mark", "aria-hidden": "true" }),
        el("span", { className: "sd-quiz__state sd-visually-hidden" }),
      ]);
      choice.replaceWith(button);
      why.hidden = true;
      button.addEventListener("click", () => choose(option, button, why, false));
      return button;
    });

    let chosen = [];     // the labels chosen since the last 重做, in order (kept, and shown again)
    function choose(option, button, why, restoring) {
      const correct = option.dataset.correct === "true";
      const label = option.dataset.label;
      chosen = [...chosen.filter((l) => l !== label), label];
      option.dataset.state = correct ? "right" : "wrong";
      button.querySelector(".sd-quiz__mark").textContent = correct ? "✓ 答對" : "✗ 答錯";
      button.querySelector(".sd-quiz__state").textContent = correct ? "（你選了，答對）" : "（你選了，答錯）";
      if (!restoring) onAnswer(correct, { choices: chosen });

      const explanation = [...why.childNodes].filter((node) =>
        !(node.nodeType === 1 && (node.matches("summary") || node.matches(".sd-quiz__verdict"))));
      const verdict = correct
        ? el("p", { className: "sd-quiz__verdict", "data-state": "right" }, [
          el("strong", { text: `✓ 答對了！` }), ` ${label} 是最佳答案。`])
        : el("p", { className: "sd-quiz__verdict", "data-state": "wrong" }, [
          el("strong", { text: `✗ 不對。` }), ` ${label} 不是最佳答案。`]);
      const next = correct
        ? el("p", { className: "sd-quiz__next", text: "其他選項為什麼不對，可以展開各選項下方的解釋。" })
        : el("p", { className: "sd-quiz__next", text: "再選一次，或按「重做這題」重來。" });
      feedback.dataset.state = correct ? "right" : "wrong";
      const content = [verdict, ...explanation.map(copyWithoutIds), next];
      if (restoring) {
        feedback.replaceChildren(...content);
      } else {
        // clear first so the same verdict twice is still announced
        feedback.replaceChildren();
        requestAnimationFrame(() => { feedback.replaceChildren(...content); });
      }
      if (correct) {
        section.dataset.solved = "";
        options.forEach((o) => { o.querySelector(".sd-quiz__why").hidden = false; });
      }
      retry.hidden = false;
    }

    function reset() {
      options.forEach((o) => {
        delete o.dataset.state;
        o.querySelector(".sd-quiz__why").hidden = true;
        o.querySelector(".sd-quiz__why").open = false;
        o.querySelector(".sd-quiz__mark").textContent = "";
        o.querySelector(".sd-quiz__state").textContent = "";
      });
      delete section.dataset.solved;
      delete feedback.dataset.state;
      feedback.replaceChildren();
      retry.hidden = true;
      chosen = [];
    }
    retry.addEventListener("click", () => {
      reset();
      onRetry({ choices: [] });
      buttons[0].focus();
    });

    return {
      // a kept answer, shown as it was left: its choices marked, the last one explained
      restore(saved) {
        for (const label of Array.isArray(saved.choices) ? saved.choices : []) {
          const option = options.find((o) => o.dataset.label === label);
          if (option) choose(option, buttons[options.indexOf(option)], option.querySelector(".sd-quiz__why"), true);
        }
      },
      reset,
    };
  }

  /* a numeric question: an input, 檢查, feedback; the folded answer stays for whoever wants it,
     until a right answer shows it anyway */
  function enhanceNumber(section, onAnswer, onRetry) {
    section.setAttribute("data-sd-ready", "");
    section.classList.add("sd-quiz--live");
    const value = Number(section.dataset.value);
    const tolerance = Number(section.dataset.tolerance);
    const solution = section.querySelector(".sd-quiz__solution");
    const inputId = section.id + "-input";
    const input = el("input", { id: inputId, type: "text", inputmode: "decimal", autocomplete: "off",
                                className: "sd-quiz__input", "aria-describedby": section.id + "-title" });
    const form = el("form", { className: "sd-quiz__entry" }, [
      el("label", { for: inputId, text: "你的答案" }), input,
      el("button", { type: "submit", className: "md-button sd-quiz__check", text: "檢查" })]);
    const feedback = el("div", { className: "sd-quiz__feedback", role: "status", "aria-live": "polite" });
    const retry = el("button", { type: "button", className: "md-button sd-quiz__retry", text: "重做這題" });
    retry.hidden = true;
    solution.before(form, feedback, el("div", { className: "sd-quiz__actions" }, [retry]));

    function check(text, restoring) {
      // full-width digits and signs from a Chinese keyboard count as the same number
      const plain = text.trim().replace(/[０-９．－＋]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xFEE0))
        .replace(/，/g, ",").replace(/^([-+]?\d+),(\d+)$/, "$1.$2");
      const number = plain === "" ? NaN : Number(plain);
      feedback.replaceChildren();
      if (!Number.isFinite(number)) {
        delete feedback.dataset.state;
        requestAnimationFrame(() => feedback.replaceChildren(
          el("p", { text: "請填一個數字，例如 2.5。" })));
        return;
      }
      const correct = Math.abs(number - value) <= tolerance * (1 + 1e-9) + 1e-12;
      section.dataset.state = correct ? "right" : "wrong";
      feedback.dataset.state = correct ? "right" : "wrong";
      const verdict = correct
        ? el("p", { className: "sd-quiz__verdict", "data-state": "right" }, [
          el("strong", { text: "✓ 答對了！" }), ` 答案是 ${section.dataset.shown}。`])
        : el("p", { className: "sd-quiz__verdict", "data-state": "wrong" }, [
          el("strong", { text: "✗ 不對。" }), ` 你填的是 ${plain}。`]);
      const explanation = [...solution.childNodes].filter((node) =>
        !(node.nodeType === 1 && node.matches("summary, .sd-quiz__verdict")));
      const content = correct ? [verdict, ...explanation.map(copyWithoutIds)]
        : [verdict, el("p", { className: "sd-quiz__next", text: "再算一次；想直接看答案，展開下面的「看答案與解釋」。" })];
      if (restoring) feedback.replaceChildren(...content);
      else requestAnimationFrame(() => feedback.replaceChildren(...content));
      retry.hidden = false;
      solution.hidden = correct;    // a right answer shows the explanation above: not twice
      if (!restoring) onAnswer(correct, { entry: plain });
    }

    form.addEventListener("submit", (event) => { event.preventDefault(); check(input.value, false); });
    function reset() {
      input.value = "";
      delete section.dataset.state;
      delete feedback.dataset.state;
      feedback.replaceChildren();
      retry.hidden = true;
      solution.hidden = false;
    }
    retry.addEventListener("click", () => {
      reset();
      onRetry({ entry: null });
      input.focus();
    });
    return {
      restore(saved) {
        if (typeof saved.entry === "string") { input.value = saved.entry; check(saved.entry, true); }
      },
      reset,
    };
  }

  function mountAll() {
    const quizzes = [...document.querySelectorAll(":is(.sd-quiz, .sd-calc):not([data-sd-ready])")];
    if (quizzes.length) setUpPage(quizzes);
  }

  // The page puts this script before the theme's bundle, after the lesson: what it mounts is parsed
  // already, so it mounts now rather than after the theme has started (~0.3 s on a cold load).
  // Pages reached by instant navigation come through Material's document$ (its bundle defines it).
  mountAll();
  window.specdecEachPage(mountAll);
})();
