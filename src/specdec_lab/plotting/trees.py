"""Lesson 2's tree figures: the tree attention mask, tokens per round against tree size, and the
best tree size under concurrency (``specdec_lab.trees`` computes every number)."""
from __future__ import annotations

# style first: it mends Pyodide's font list and quiets the font-cache message before
# matplotlib's font manager loads (the package imports this module only when used)
from .style import (BLACK, BLUE, GREEN, GREY, ORANGE, SKY, VERMILLION, course_figure,  # isort: skip
                    notebook_is_narrow)

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .._validate import scalar_int
from ..serving import DEFAULT_T_FLOP
from ..trees import tree_attention_mask, tree_scaling, tree_serving

MAX_MASK_NODES = 40      # beyond this the cells are too small to read


def tree_mask_figure(parents, labels=None) -> Figure:
    """The tree attention mask as a grid: row i (the node that reads) is filled at the columns it
    may see — itself and its ancestors. ``labels`` names the nodes (their tokens, say)."""
    mask = tree_attention_mask(parents)
    n = mask.shape[0]
    if not 1 <= n <= MAX_MASK_NODES:
        raise ValueError(f"parents 有 {n} 個節點，畫圖的有效範圍是 1 到 {MAX_MASK_NODES}")
    names = [str(i) for i in range(n)] if labels is None else [str(s) for s in labels]
    if len(names) != n:
        raise ValueError(f"labels 必須每個節點一個：parents 有 {n} 個節點，labels 有 {len(names)} 個")
    side = min(5.2, max(4.4, 1.6 + 0.32 * n))
    with course_figure(side, side) as (fig, ax):
        ax.imshow(mask, cmap=ListedColormap(["white", BLUE]), vmin=0, vmax=1)
        ax.set_xticks(range(n), names)
        ax.set_yticks(range(n), names)
        ax.set_xticks(np.arange(-0.5, n), minor=True)
        ax.set_yticks(np.arange(-0.5, n), minor=True)
        ax.grid(which="minor", color=GREY, linewidth=0.6)
        ax.grid(which="major", visible=False)
        ax.tick_params(which="minor", length=0)
        for spine in ax.spines.values():      # the course style hides the top and right ones
            spine.set_visible(True)
        ax.xaxis.tick_top()
        ax.set_xlabel("可以看見的節點")
        ax.xaxis.set_label_position("top")
        ax.set_ylabel("正在算的節點")
        ax.set_title("樹狀注意力遮罩：自己與祖先（藍）", pad=12)
    return fig


def tree_scaling_figure(accuracy, max_nodes: int = 64, k: int = 4) -> Figure:
    """Tokens per round against the number of nodes verified: the chain, ``k`` chains and the
    optimal tree (``specdec_lab.trees.tree_scaling``), with the limits the chain and the k chains
    approach (dotted)."""
    s = tree_scaling(accuracy, max_nodes=max_nodes, k=k)
    every = max(1, s.nodes.size // 10)
    with course_figure(5.4, 4.0) as (fig, ax):
        ax.plot(s.nodes, s.optimal, color=GREEN, marker="D", markevery=(0, every), label="最佳樹（動態規劃）")
        ax.plot(s.nodes, s.k_chains, color=VERMILLION, marker="s", linestyle="--", markevery=(every // 3, every),
                label=f"{s.k} 條鏈")
        ax.plot(s.nodes, s.chain, color=BLUE, marker="o", linestyle="-.", markevery=(2 * every // 3, every),
                label="一條鏈")
        for limit, color, text in ((s.chain_limit, BLUE, "鏈的上限"), (s.k_chains_limit, VERMILLION, f"{s.k} 條鏈的上限")):
            if np.isfinite(limit):
                ax.axhline(limit, color=color, linestyle=":", linewidth=1.6, label=f"{text} {limit:.2f}")
        ax.set_xlim(0, s.nodes[-1] + 1)
        top = max(s.optimal.max(), s.k_chains_limit if np.isfinite(s.k_chains_limit) else 0)
        ax.set_ylim(1, top * 1.06)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("一次驗證的節點數")
        ax.set_ylabel("每輪產出（token）")
        ax.set_title("節點一樣多：鏈、多條鏈、最佳樹")
        # under the axes: the curves fill the panel from corner to corner
        fig.legend(loc="outside lower center", ncols=1 if notebook_is_narrow() else 2, fontsize=10)
    return fig


def tree_serving_figure(accuracy, concurrency=(1, 4, 8, 32), max_nodes: int = 32, draft_cost: float = 0.05,
                        t_flop: float = DEFAULT_T_FLOP) -> Figure:
    """Speedup against tree size at a few concurrencies (``specdec_lab.trees.tree_serving``): the
    star marks the best size at each, and it moves left as the GPU gets busier."""
    users = np.atleast_1d(np.asarray(concurrency, dtype=float))
    styles = [(BLUE, "o", "-"), (GREEN, "D", "-."), (ORANGE, "^", "--"), (VERMILLION, "s", ":"), (SKY, "v", "-")]
    if not 1 <= users.size <= len(styles):
        raise ValueError(f"concurrency 必須有 1 到 {len(styles)} 個人數（每個一種顏色與線型），收到 {users.size} 個")
    max_nodes = scalar_int("max_nodes", max_nodes, minimum=1, maximum=256)
    s = tree_serving(accuracy, users, max_nodes=max_nodes, draft_cost=draft_cost, t_flop=t_flop)
    every = max(1, max_nodes // 8)
    with course_figure(5.4, 4.0) as (fig, ax):
        ax.axhline(1.0, color=GREY, linestyle=":", linewidth=1.5)
        for i, (n_users, (color, marker, line)) in enumerate(zip(users, styles)):
            best = int(s.best_nodes[i])
            ax.plot(s.nodes, s.speedup[i], color=color, marker=marker, linestyle=line, markevery=(0, every),
                    label=f"{n_users:g} 人：最佳 {best} 個節點（{s.best_speedup[i]:.2f}×）")
            ax.plot([best], [s.best_speedup[i]], marker="*", markersize=15, color=color, markeredgecolor=BLACK,
                    linestyle="none", zorder=5)
        ax.set_xlim(-0.8, max_nodes + 1.2)      # room for a star at either end
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("樹的節點數（0 = 不用投機解碼）")
        ax.set_ylabel("每人速度的加速比（倍）")
        ax.set_title(f"同時使用的人越多，最佳的樹越小\n草稿成本 {draft_cost:g}，t_flop = {t_flop:g}")
        fig.legend(loc="outside lower center", ncols=1, fontsize=10)
    return fig
