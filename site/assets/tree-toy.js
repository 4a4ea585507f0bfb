/* 樹狀驗證 — random verification rounds of a draft tree, against a chain of as many candidates.
 *
 * Mounts on <div class="sd-tree-toy" …> as the build leaves it (site/hooks/tree_toy.py): the tree
 * drawn as an SVG whose nodes carry data-path ("0.1": rank 1, then rank 2), one example round lit,
 * and the settings in data-* (data-accept: the chance that the target's token is the draft's rank-r
 * candidate, at every position, independently). A round draws the target's token for positions
 * 1, 2, … by rank; the tree accepts down its path while the drawn rank is among the node's children,
 * the chain while it is rank 1. Both use the same draws. Each yields accepted + 1 tokens (the target's
 * own token after the last accepted one). No dependencies; mounts as it runs, then through
 * Material's document$ (instant navigation), as toy.js.
 */
(function () {
  "use strict";
  const el = window.specdecEl;   // dom.js, loaded first
  const ROUNDS = 50;
  let counter = 0;

  function drawRank(accept) {
    const u = Math.random();
    let sum = 0;
    for (let r = 0; r < accept.length; r++) {
      sum += accept[r];
      if (u < sum) return r;
    }
    return -1;                                   // none of the candidates
  }

  /* ranks of the target's tokens, the tree's accepted path (keys) and the chain's accepted count */
  function drawRound(tree, accept, words) {
    const draws = [];
    for (let i = 0; i <= tree.size; i++) draws.push(drawRank(accept));
    const path = [];
    let key = "";
    for (;;) {
      const next = (key ? key + "." : "") + draws[path.length];
      if (draws[path.length] < 0 || !tree.has(next)) break;
      path.push(next);
      key = next;
    }
    let chain = 0;
    while (chain < tree.size && draws[chain] === 0) chain++;
    const d = path.length, r = draws[d];
    const free = words[d][r < 0 ? words[d].length - 1 : r];
    return { draws, path, last: key, chain, free };
  }

  const at = (g) => (g.getAttribute("transform").match(/-?[\d.]+/g) || ["0", "0"]).map(Number);

  function mount(root) {
    root.setAttribute("data-sd-ready", "");
    const svg = root.querySelector(".sd-tree-toy__tree");
    if (!svg) return;
    const accept = root.dataset.accept.split(",").map(Number);
    const words = JSON.parse(root.dataset.words);
    const expectedTree = Number(root.dataset.expectedTree), expectedChain = Number(root.dataset.expectedChain);
    const nodes = new Map([...svg.querySelectorAll(".sd-tree-toy__node[data-path]")].map((g) => [g.dataset.path, g]));
    const edges = [...svg.querySelectorAll(".sd-tree-toy__edge")];
    const free = svg.querySelector(".sd-tree-toy__free");
    const tree = new Set([...nodes.keys()].filter((key) => key !== ""));
    const rootBox = nodes.get("");
    const column = at(nodes.get("0"))[0] - at(rootBox)[0];
    const wordOf = (key) => nodes.get(key).textContent;
    const childrenOf = (key) => [...tree].filter((k) => k.lastIndexOf(".") === (key ? key.length : -1) && k.startsWith(key));
    const n = tree.size;
    const tally = { rounds: 0, tree: 0, chain: 0 };

    const draw = el("button", { type: "button", className: "md-button md-button--primary sd-tree-toy__draw", text: "驗證一輪" });
    const many = el("button", { type: "button", className: "md-button sd-tree-toy__many", text: `連跑 ${ROUNDS} 輪` });
    const reset = el("button", { type: "button", className: "md-button sd-tree-toy__reset", text: "歸零" });
    const output = el("p", { className: "sd-tree-toy__output" });
    const chainLine = el("p", { className: "sd-tree-toy__chain" });
    const tallyText = el("p", { className: "sd-tree-toy__tally" });
    const status = el("p", { className: "sd-visually-hidden", role: "status", "aria-live": "polite" });
    const titleId = "sd-tree-toy-" + (++counter);
    const figure = root.querySelector(".sd-tree-toy__figure");
    const model = root.querySelector(".sd-tree-toy__model");
    const prefix = root.querySelector(".sd-tree-toy__prefix");
    root.replaceChildren(el("section", { className: "sd-tree-toy__box", "aria-labelledby": titleId }, [
      el("div", { className: "sd-tree-toy__head" }, [
        el("p", { className: "sd-tree-toy__title", id: titleId }, [el("strong", { text: `樹狀驗證：一次驗 ${n} 個候選` })]),
        el("div", { className: "sd-tree-toy__controls" }, [draw, many, reset]),
      ]),
      model, prefix, figure, output, chainLine, tallyText, status,
    ]));

    const nobr = (children) => el("span", { className: "sd-tree-toy__nobr" }, children);

    function renderRound(round, animate) {
      root.classList.remove("sd-tree-toy--earlier");
      const onPath = new Set(round.path);
      const rejected = new Set(childrenOf(round.last));
      nodes.forEach((g, key) => {
        g.dataset.state = key === "" ? "root" : onPath.has(key) ? "accept" : rejected.has(key) ? "reject" : "";
        g.style.setProperty("--sd-i", String(onPath.has(key) ? key.split(".").length : 0));
      });
      edges.forEach((edge) => { edge.dataset.state = onPath.has(edge.dataset.path) ? "accept" : ""; });
      const leaf = rejected.size === 0;
      // the target's own token goes in the tree after a leaf (the column beside it is free)
      if (leaf) {
        const [x, y] = at(nodes.get(round.last));
        free.setAttribute("transform", `translate(${x + column} ${y})`);
        free.querySelector("text").textContent = round.free;
        free.style.setProperty("--sd-i", String(round.path.length + 1));
        free.removeAttribute("display");
      } else {
        free.setAttribute("display", "none");
      }
      svg.classList.toggle("sd-tree-toy--animate", Boolean(animate));

      const chips = round.path.map((key) => el("span", { className: "sd-tree-toy__token", "data-state": "accept", text: wordOf(key) }));
      chips.push(el("span", { className: "sd-tree-toy__token", "data-state": leaf ? "bonus" : "correction" },
        [round.free, el("small", { text: leaf ? "bonus" : "修正" })]));
      output.replaceChildren("樹這一輪輸出：", ...chips, " ",
        nobr(["→ ", el("strong", { className: "sd-tree-toy__yield", text: `${round.path.length + 1} 個字` })]));
      const links = [];
      for (let i = 0; i < n; i++) {
        const state = i < round.chain ? "accept" : i === round.chain ? "reject" : "discard";
        links.push(el("span", { className: "sd-tree-toy__link", "data-state": state,
          text: { accept: "✓", reject: "✗", discard: "−" }[state] }));
      }
      chainLine.replaceChildren(el("span", { className: "sd-tree-toy__chain-label", text: "同樣的抽籤，鏈：" }),
        el("span", { className: "sd-tree-toy__links", "aria-label": `鏈收下 ${round.chain} 個` }, links), " ",
        nobr(["→ ", el("strong", { className: "sd-tree-toy__chain-yield", text: `${round.chain + 1} 個字` })]));
    }

    function record(round) {
      tally.rounds += 1;
      tally.tree += round.path.length + 1;
      tally.chain += round.chain + 1;
    }

    function renderTally() {
      const formulas = `公式：樹 ${expectedTree.toFixed(2)}、鏈 ${expectedChain.toFixed(2)}`;
      if (!tally.rounds) {
        tallyText.replaceChildren(`還沒驗。公式：每輪期望樹 ${expectedTree.toFixed(2)} 個字、鏈 ${expectedChain.toFixed(2)} 個字。`);
        return;
      }
      tallyText.replaceChildren(`已驗 ${tally.rounds} 輪：每輪平均樹 `,
        el("strong", { className: "sd-tree-toy__tree-mean", text: (tally.tree / tally.rounds).toFixed(2) }),
        " 個字、鏈 ", el("strong", { className: "sd-tree-toy__chain-mean", text: (tally.chain / tally.rounds).toFixed(2) }),
        ` 個字（共 ${tally.tree} 對 ${tally.chain} 個字）；`, nobr([formulas]), "。");
    }

    function describe(round) {
      const words = round.path.map(wordOf);
      const tree = words.length
        ? `樹收下 ${words.length} 個（${words.join("、")}）`
        : "樹的第 1 個位置就沒猜中";
      const extra = rejected(round) ? `，大模型的修正字「${round.free}」免費補上` : `，大模型再送 bonus 字「${round.free}」`;
      return `第 ${tally.rounds} 輪：${tree}${extra}，共 ${round.path.length + 1} 個字；` +
        `同樣的抽籤，鏈收下 ${round.chain} 個，共 ${round.chain + 1} 個字。`;
    }
    const rejected = (round) => childrenOf(round.last).length > 0;

    function drawOne() {
      const round = drawRound(tree, accept, words);
      record(round);
      renderRound(round, true);
      renderTally();
      status.textContent = describe(round);
    }

    draw.addEventListener("click", drawOne);
    many.addEventListener("click", () => {
      let round;
      for (let i = 0; i < ROUNDS; i++) {
        round = drawRound(tree, accept, words);
        record(round);
      }
      renderRound(round, false);
      renderTally();
      status.textContent = `又跑了 ${ROUNDS} 輪，共 ${tally.rounds} 輪：每輪平均樹 ` +
        `${(tally.tree / tally.rounds).toFixed(2)} 個字、鏈 ${(tally.chain / tally.rounds).toFixed(2)} 個字；` +
        `公式：樹 ${expectedTree.toFixed(2)}、鏈 ${expectedChain.toFixed(2)}。`;
    });
    reset.addEventListener("click", () => {
      tally.rounds = 0; tally.tree = 0; tally.chain = 0;
      renderTally();
      root.classList.add("sd-tree-toy--earlier");      // the round on screen is from before 歸零
      output.firstChild.textContent = "上一輪（歸零前）樹的輸出：";
      status.textContent = "統計歸零。";
    });

    // a first round to look at (counted, not announced), as toy.js does
    const first = drawRound(tree, accept, words);
    record(first);
    renderRound(first, false);
    renderTally();
  }

  function mountAll() {
    document.querySelectorAll(".sd-tree-toy:not([data-sd-ready])").forEach(mount);
  }

  // before the theme's bundle (see toy.js): mount now, then follow Material's document$
  mountAll();
  window.specdecEachPage(mountAll);
})();
