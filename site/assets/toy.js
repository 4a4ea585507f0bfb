/* 草稿猜 K 個 — one random verification round of speculative decoding, in the page.
 *
 * Mounts on <div class="sd-toy" data-k="5" data-alpha="0.7"></div> (the build puts a static
 * example round inside; this script replaces it). Each draft token is accepted with probability α
 * until the first miss; the target's token at the missed position is the free correction, and when
 * all K are accepted the target adds a bonus token. Tokens per round = accepted + 1, whose mean is
 * (1 − α^(K+1)) / (1 − α). No dependencies; mounts as it runs (the page puts it
 * before the theme's bundle), then through Material's document$ (instant navigation).
 */
(function () {
  "use strict";
  const el = window.specdecEl;   // dom.js, loaded first

  const K_MAX = 8;
  // [target token, plausible wrong guesses]; each sentence has K_MAX + 1 tokens (room for a bonus)
  const SENTENCES = [
    { prefix: "今天下午我們", tokens: [
      ["去", ["在", "要"]], ["公園", ["海邊", "學校"]], ["散步", ["野餐", "放風箏"]],
      ["，", ["了", "吧"]], ["順便", ["然後", "還"]], ["買", ["吃", "喝"]],
      ["杯", ["個", "些"]], ["咖啡", ["飲料", "冰淇淋"]], ["。", ["吧", "！"]]] },
    { prefix: "這張 GPU 在解碼時", tokens: [
      ["其實", ["通常", "幾乎"]], ["大部分", ["一半", "很多"]], ["時間", ["算力", "時候"]],
      ["都", ["只", "也"]], ["在", ["是", "花"]], ["等", ["算", "跑"]],
      ["記憶體", ["資料", "權重"]], ["搬", ["送", "傳"]], ["權重", ["資料", "東西"]]] },
    { prefix: "請幫我把這段文字", tokens: [
      ["翻譯", ["改寫", "整理"]], ["成", ["為", "到"]], ["英文", ["日文", "中文"]],
      ["，", ["。", "並"]], ["語氣", ["用詞", "風格"]], ["要", ["請", "盡量"]],
      ["正式", ["輕鬆", "客氣"]], ["一點", ["一些", "些"]], ["。", ["！", "，"]]] },
    { prefix: "小模型猜錯也沒關係，", tokens: [
      ["大", ["因為", "反正"]], ["模型", ["家", "的"]], ["會", ["能", "就"]],
      ["在", ["用", "從"]], ["同", ["這", "下"]], ["一次", ["一個", "一輪"]],
      ["前向", ["計算", "步驟"]], ["裡", ["中", "時"]], ["改正", ["修正", "補上"]]] },
  ];

  let counter = 0;

  function expectedTokens(alpha, k) {
    return alpha >= 1 ? k + 1 : (1 - Math.pow(alpha, k + 1)) / (1 - alpha);
  }

  /* P(a round yields n tokens), n = 1..K+1 */
  function yieldProbabilities(alpha, k) {
    const p = [];
    for (let n = 1; n <= k; n++) p.push(Math.pow(alpha, n - 1) * (1 - alpha));
    p.push(Math.pow(alpha, k));
    return p;
  }

  function pick(list) {
    return list[Math.floor(Math.random() * list.length)];
  }

  function drawRound(alpha, k) {
    const sentence = pick(SENTENCES);
    const positions = [];
    let miss = -1;
    for (let i = 0; i < k; i++) {
      const [target, wrong] = sentence.tokens[i];
      if (miss >= 0) {
        // the draft kept going after its own wrong guess: these guesses are thrown away unchecked
        positions.push({ draft: pick([target].concat(wrong)), target: "—", state: "discard" });
      } else if (Math.random() < alpha) {
        positions.push({ draft: target, target: target, state: "accept" });
      } else {
        miss = i;
        positions.push({ draft: pick(wrong), target: target, state: "reject" });
      }
    }
    const accepted = miss >= 0 ? miss : k;
    const extra = miss >= 0
      ? { token: sentence.tokens[miss][0], kind: "correction" }
      : { token: sentence.tokens[k][0], kind: "bonus" };
    return { prefix: sentence.prefix, positions, accepted, miss, extra, produced: accepted + 1 };
  }


  const VERDICT = { accept: ["✓", "接受"], reject: ["✗", "拒絕"], discard: ["−", "丟棄"], bonus: ["★", "bonus"] };

  /* a verdict is an icon and a word (the icon sits above the word on phones) */
  function verdict(state) {
    const [icon, word] = VERDICT[state];
    return [el("span", { className: "sd-toy__icon", "aria-hidden": "true", text: icon }), " " + word];
  }

  function mount(root) {
    root.setAttribute("data-sd-ready", "");
    const id = "sd-toy-" + (++counter);
    const k = Math.max(1, Math.min(K_MAX, parseInt(root.dataset.k, 10) || 5));
    let alpha = Math.max(0, Math.min(1, parseFloat(root.dataset.alpha)));
    if (Number.isNaN(alpha)) alpha = 0.7;
    const tally = { rounds: 0, tokens: 0, counts: new Array(k + 1).fill(0) };

    const draw = el("button", { type: "button", className: "md-button md-button--primary sd-toy__draw",
      text: "抽一輪" });
    const many = el("button", { type: "button", className: "md-button sd-toy__many", text: "連抽 100 輪" });
    const reset = el("button", { type: "button", className: "md-button sd-toy__reset", text: "歸零" });
    const slider = el("input", { type: "range", min: "0", max: "1", step: "0.05", value: String(alpha),
      id: id + "-alpha", className: "sd-toy__slider", "aria-valuetext": alpha.toFixed(2) });
    const alphaOut = el("output", { for: id + "-alpha", className: "sd-toy__alpha-value",
      text: alpha.toFixed(2) });
    const alphaLabel = el("label", { for: id + "-alpha", className: "sd-toy__alpha-label" },
      ["接受率 α"]);
    const prefix = el("span", { className: "sd-toy__prefix-text" });
    const table = el("table", { className: "sd-toy__table" });
    const output = el("p", { className: "sd-toy__output" });
    const status = el("p", { className: "sd-visually-hidden", role: "status", "aria-live": "polite" });
    const tallyText = el("p", { className: "sd-toy__tally" });
    const bars = el("div", { className: "sd-toy__bars" });
    // what the bars and their marks are (the tally's text says the same in numbers)
    const chart = el("div", { className: "sd-toy__chart", "aria-hidden": "true" }, [bars,
      el("p", { className: "sd-toy__legend" }, [
        el("span", { className: "sd-toy__key sd-toy__key--fill" }), "抽到的比例 ",
        el("span", { className: "sd-toy__key sd-toy__key--theory" }), "公式"])]);

    const group = el("section", { className: "sd-toy__box", "aria-labelledby": id + "-title" }, [
      el("div", { className: "sd-toy__head" }, [
        el("p", { className: "sd-toy__title", id: id + "-title" }, [el("strong", { text: `草稿猜 ${k} 個` })]),
        el("div", { className: "sd-toy__controls" }, [
          draw, many, reset,
          el("span", { className: "sd-toy__alpha" }, [alphaLabel, slider, alphaOut]),
        ]),
      ]),
      el("p", { className: "sd-toy__prefix" }, ["前文：", prefix, "…",
        el("span", { className: "sd-toy__nobr", text: "（草稿接著猜 " + k + " 個字）" })]),
      el("div", { className: "sd-toy__scroll" }, [table]),
      output,
      el("div", { className: "sd-toy__stats" }, [tallyText, chart]),
      status,
    ]);
    root.replaceChildren(group);

    let shownAlpha = alpha;      // the α the round on screen was drawn with

    function renderRound(round, animate) {
      shownAlpha = alpha;
      table.classList.remove("sd-toy--earlier");
      output.classList.remove("sd-toy--earlier");
      prefix.textContent = round.prefix;
      const head = el("tr", {}, [el("th", { scope: "col", text: "位置" })]);
      const drafts = el("tr", {}, [el("th", { scope: "row", text: "草稿" })]);
      const targets = el("tr", {}, [el("th", { scope: "row", text: "大模型" })]);
      const verdicts = el("tr", {}, [el("th", { scope: "row", text: "判定" })]);
      round.positions.forEach((p, i) => {
        const style = `--sd-i:${i}`;
        head.append(el("th", { scope: "col", text: String(i + 1) }));
        drafts.append(el("td", { className: "sd-toy__cell", "data-state": p.state, style, text: p.draft }));
        targets.append(el("td", { className: "sd-toy__cell", "data-state": p.state === "reject" ? "correction" : "",
          style, text: p.target }));
        verdicts.append(el("td", { className: "sd-toy__cell sd-toy__verdict", "data-state": p.state, style },
          verdict(p.state)));
      });
      const bonus = round.extra.kind === "bonus";
      const last = `--sd-i:${k}`;
      head.append(el("th", { scope: "col", text: "＋1" }));
      drafts.append(el("td", { className: "sd-toy__cell", style: last, text: "—" }));
      targets.append(el("td", { className: "sd-toy__cell", "data-state": bonus ? "bonus" : "", style: last,
        text: bonus ? round.extra.token : "—" }));
      verdicts.append(el("td", { className: "sd-toy__cell sd-toy__verdict", "data-state": bonus ? "bonus" : "",
        style: last }, bonus ? verdict("bonus") : ["—"]));
      table.replaceChildren(
        el("caption", { className: "sd-visually-hidden",
          text: "這一輪：草稿猜的字、大模型在同一次前向給的字、判定" }),
        el("thead", {}, [head]), el("tbody", {}, [drafts, targets, verdicts]));
      table.classList.toggle("sd-toy--animate", Boolean(animate));

      const chips = round.positions.slice(0, round.accepted).map((p) =>
        el("span", { className: "sd-toy__token", "data-state": "accept", text: p.target }));
      chips.push(el("span", { className: "sd-toy__token", "data-state": round.extra.kind }, [
        round.extra.token, el("small", { text: bonus ? "bonus" : "修正" })]));
      output.replaceChildren("本輪輸出：", ...chips, " ", el("span", { className: "sd-toy__nobr" }, ["→ ",
        el("strong", { className: "sd-toy__yield", text: `${round.produced} 個字` })]));
    }

    /* the round on screen (drawn before 歸零 or a new α, maybe with another α) is said to be an
       earlier one and dimmed, until the next round is drawn */
    function showRoundAsEarlier() {
      table.classList.add("sd-toy--earlier");
      output.classList.add("sd-toy--earlier");
      output.firstChild.textContent = `上一輪（α = ${shownAlpha.toFixed(2)}）輸出：`;
    }

    function describe(round) {
      const head = `第 ${tally.rounds} 輪：`;
      if (round.extra.kind === "bonus") {
        return `${head}${k} 個草稿全部接受，大模型再送 bonus 字「${round.extra.token}」，這一輪共 ${round.produced} 個字。`;
      }
      return `${head}接受 ${round.accepted} 個，第 ${round.miss + 1} 個被拒、後面丟棄；` +
        `大模型的修正字「${round.extra.token}」免費補上，這一輪共 ${round.produced} 個字。`;
    }

    function record(round) {
      tally.rounds += 1;
      tally.tokens += round.produced;
      tally.counts[round.produced - 1] += 1;
    }

    /* "(1 − α⁶) / (1 − α) = 2.94", kept on one line (a line break inside it reads as two things);
       at α = 1 that is 0 / 0, and every draft is accepted: K + 1 */
    function formulaText(value) {
      return el("span", { className: "sd-toy__expr" }, alpha >= 1 ? ["α = 1，全部接受：K + 1 = ", value]
        : ["(1 − α", el("sup", { text: String(k + 1) }), ") / (1 − α) = ", value]);
    }

    // a count and its unit on one line: a phone ended a line with "= 4.15" and began the next with 個字
    const withUnit = (value, unit) => el("span", { className: "sd-toy__nobr" }, [value, unit]);

    function renderTally() {
      const formula = expectedTokens(alpha, k);
      if (!tally.rounds) {
        tallyText.replaceChildren("還沒抽。公式：每輪期望 ", withUnit(formulaText(formula.toFixed(2)), " 個字。"));
      } else {
        const mean = tally.tokens / tally.rounds;
        tallyText.replaceChildren("已抽 ", withUnit(String(tally.rounds), " 輪"), "、共 ",
          withUnit(String(tally.tokens), " 個字"), "：平均每輪 ",
          withUnit(el("strong", { className: "sd-toy__mean", text: mean.toFixed(2) }), " 個字；"),
          "公式 ", formulaText(el("strong", { className: "sd-toy__formula", text: formula.toFixed(2) })), "。");
      }
      const theory = yieldProbabilities(alpha, k);
      const top = Math.max(...theory, ...tally.counts.map((c) => c / Math.max(1, tally.rounds)));
      bars.replaceChildren(...tally.counts.map((count, i) => {
        const share = tally.rounds ? count / tally.rounds : 0;
        return el("div", { className: "sd-toy__bar" }, [
          el("div", { className: "sd-toy__bar-track" }, [
            el("div", { className: "sd-toy__bar-fill", style: `height:${(100 * share / top).toFixed(1)}%` }),
            el("div", { className: "sd-toy__bar-theory", style: `bottom:${(100 * theory[i] / top).toFixed(1)}%` }),
          ]),
          el("span", { className: "sd-toy__bar-label", text: String(i + 1) }),
        ]);
      }));
    }

    function drawOne() {
      const round = drawRound(alpha, k);
      record(round);
      renderRound(round, true);
      renderTally();
      status.textContent = describe(round);
    }

    draw.addEventListener("click", drawOne);
    many.addEventListener("click", () => {
      let round;
      for (let i = 0; i < 100; i++) {
        round = drawRound(alpha, k);
        record(round);
      }
      renderRound(round, false);
      renderTally();
      status.textContent = `又抽了 100 輪，共 ${tally.rounds} 輪：平均每輪 ` +
        `${(tally.tokens / tally.rounds).toFixed(2)} 個字，公式 ${expectedTokens(alpha, k).toFixed(2)}。`;
    });
    /* 歸零, or a new α: the tally starts again */
    function startOver() {
      tally.rounds = 0; tally.tokens = 0; tally.counts.fill(0);
      renderTally();
      showRoundAsEarlier();
    }

    reset.addEventListener("click", () => {
      startOver();
      status.textContent = "統計歸零。";
    });
    slider.addEventListener("input", () => {
      alpha = parseFloat(slider.value);
      alphaOut.textContent = alpha.toFixed(2);
      slider.setAttribute("aria-valuetext", alpha.toFixed(2));
      startOver();
    });
    slider.addEventListener("change", () => {
      status.textContent = `接受率 α = ${alpha.toFixed(2)}，統計重新開始；` +
        `公式每輪期望 ${expectedTokens(alpha, k).toFixed(2)} 個字。`;
    });

    // a first round to look at (counted, not announced)
    const first = drawRound(alpha, k);
    record(first);
    renderRound(first, false);
    renderTally();
  }

  function mountAll() {
    document.querySelectorAll(".sd-toy:not([data-sd-ready])").forEach(mount);
  }

  // The page puts this script before the theme's bundle, after the lesson: what it mounts is parsed
  // already, so it mounts now rather than after the theme has started (~0.3 s on a cold load).
  // Pages reached by instant navigation come through Material's document$ (its bundle defines it).
  mountAll();
  window.specdecEachPage(mountAll);
})();
