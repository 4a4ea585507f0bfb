/* The lesson quiz, enhanced: choose → instant feedback with the explanation, retry, a score.
 *
 * The build (site/hooks/quiz_format.py) renders each `/// quiz` block as a list of options, each with
 * a folded <details> explanation, which is what a reader without JavaScript gets. This script turns
 * each option into a button; a choice marks it ✓/✗ (icon + text + colour), shows its explanation in
 * an aria-live region and counts the first choice of every question in the page's score.
 * No dependencies; mounts as it runs (the page puts it
 * before the theme's bundle), then through Material's document$ (instant navigation).
 */
(function () {
  "use strict";

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.append(child);
    return node;
  }

  /* a copy of an explanation node for the feedback box (ids stay unique in the page) */
  function copyWithoutIds(node) {
    const copy = node.cloneNode(true);
    if (copy.nodeType === 1) {
      copy.removeAttribute("id");
      copy.querySelectorAll("[id]").forEach((inner) => inner.removeAttribute("id"));
    }
    return copy;
  }

  function setUpPage(quizzes) {
    const first = new Map();   // quiz section → was its first choice right?
    const score = el("p", { className: "sd-quiz-score" });
    quizzes[quizzes.length - 1].after(score);

    function renderScore() {
      const right = [...first.values()].filter(Boolean).length;
      score.replaceChildren(
        el("strong", { text: "測驗成績：" }),
        `已作答 ${first.size} / ${quizzes.length} 題，第一次就答對 `,
        el("strong", { className: "sd-quiz-score__right", text: String(right) }),
        " 題。" + (first.size === quizzes.length ? "（重做不改變成績。）" : ""));
    }

    quizzes.forEach((section) => enhance(section, (correct) => {
      if (!first.has(section)) first.set(section, correct);
      renderScore();
    }));
    renderScore();
  }

  function enhance(section, onAnswer) {
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
      button.addEventListener("click", () => choose(option, button, why));
      return button;
    });

    function choose(option, button, why) {
      const correct = option.dataset.correct === "true";
      const label = option.dataset.label;
      option.dataset.state = correct ? "right" : "wrong";
      button.querySelector(".sd-quiz__mark").textContent = correct ? "✓ 答對" : "✗ 答錯";
      button.querySelector(".sd-quiz__state").textContent = correct ? "（你選了，答對）" : "（你選了，答錯）";
      onAnswer(correct);

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
      // clear first so the same verdict twice is still announced
      feedback.replaceChildren();
      requestAnimationFrame(() => {
        feedback.replaceChildren(verdict, ...explanation.map(copyWithoutIds), next);
      });
      if (correct) {
        section.dataset.solved = "";
        options.forEach((o) => { o.querySelector(".sd-quiz__why").hidden = false; });
      }
      retry.hidden = false;
    }

    retry.addEventListener("click", () => {
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
      buttons[0].focus();
    });
  }

  function mountAll() {
    const quizzes = [...document.querySelectorAll(".sd-quiz:not([data-sd-ready])")];
    if (quizzes.length) setUpPage(quizzes);
  }

  // The page puts this script before the theme's bundle, after the lesson: what it mounts is parsed
  // already, so it mounts now rather than after the theme has started (~0.3 s on a cold load).
  // Pages reached by instant navigation come through Material's document$ (its bundle defines it).
  mountAll();
  const follow = () => window.document$ && window.document$.subscribe(mountAll);
  if (window.document$) follow(); else document.addEventListener("DOMContentLoaded", follow);
})();
