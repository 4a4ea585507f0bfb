"""The lesson-1 figures of the 實驗場 notebook (sections 1️⃣, 3️⃣ and 4️⃣), with Chinese labels.

Each function takes the same numbers as the package's functions, draws one figure and returns it
(a ``matplotlib.figure.Figure``; a notebook shows it when it is a cell's last value). Colours are
from the Okabe–Ito palette (safe for colour-blind readers) and every series also has its own
marker or line style.
"""
from __future__ import annotations

# style first: it mends Pyodide's font list and quiets the font-cache message before
# matplotlib's font manager loads (the package imports this module only when used)
from .style import (BLACK, BLUE, GREEN, GREY, LOSS_FILL, LOSS_HATCH, ORANGE, VERMILLION,
                    course_figure, course_style)

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import AutoLocator, MaxNLocator, PercentFormatter

from .._validate import scalar, scalar_int
from ..closed_form import best_k, knee_k, speedup
from ..monte_carlo import MonteCarloCheck
from ..serving import DEFAULT_T_FLOP, crossover_concurrency, serving_curves

MAX_K = 10_000  # as best_k
MAX_USERS = 10_000


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"


# 1️⃣ ------------------------------------------------------------------------------------------

def tokens_histogram(check: MonteCarloCheck) -> Figure:
    """Tokens per round: the Monte Carlo's bars, the closed form's probabilities on top.

    The 1-token bar (the first draft token rejected: the round still yields the target's own
    token) is vermillion and hatched; the others are blue.
    """
    return TokensPlot(check.k, check.rounds).update(check)


class TokensPlot:
    """``tokens_histogram``'s figure for one K and number of rounds, kept to be drawn again:
    ``update(check)`` moves its bars, diamonds, title and legend to another Monte Carlo check
    (same K and rounds) and returns the figure (a slider panel redraws it instead of a new one)."""

    def __init__(self, k: int, rounds: int):
        self.k, self.rounds = k, rounds
        tokens = np.arange(1, k + 2)
        with course_figure(5.2, 3.7) as (fig, ax):
            colors = [VERMILLION] + [BLUE] * k
            self.bars = ax.bar(tokens, np.zeros(k + 1), width=0.72, color=colors, edgecolor="white",
                               linewidth=0.8)
            self.bars[0].set_hatch("//")
            (self.closed,) = ax.plot(tokens, np.zeros(k + 1), linestyle="none", marker="D", markersize=7,
                                     markerfacecolor="white", markeredgecolor=BLACK, markeredgewidth=1.6)
            ax.set_xticks(tokens if k <= 10 else tokens[::2])
            ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
            ax.set_xlabel("一輪產出幾個 token")
            ax.set_ylabel("佔所有輪的比例")
            handles = [
                Patch(facecolor=BLUE, label=f"模擬 {rounds:,} 輪"),
                Patch(facecolor=VERMILLION, hatch="//", edgecolor="white", label="第一格就被拒（仍得 1 個）"),
                self.closed,
            ]
            self.closed.set_label("閉式解的機率")
            self.legend = ax.legend(handles=handles, loc="upper center")
            ax.grid(axis="x", visible=False)
        self.fig, self.ax = fig, ax

    def update(self, check: MonteCarloCheck) -> Figure:
        if (check.k, check.rounds) != (self.k, self.rounds):
            raise ValueError(f"這張圖畫的是 K = {self.k}、{self.rounds:,} 輪；收到 K = {check.k}、{check.rounds:,} 輪")
        freq = check.frequencies
        with course_style():
            for bar, height in zip(self.bars, freq):
                bar.set_height(height)
            self.closed.set_ydata(check.probabilities)
            self.ax.set_title(
                f"α = {check.alpha:.2f}，K = {check.k}：平均每輪 {check.mean:.3f} 個\n"
                f"閉式解 {check.closed_form:.3f}，差 {check.z:+.1f} 個標準誤",
                fontsize=11.5,
            )
            self.legend.set_loc("upper center" if check.alpha >= 0.5 else "upper right")
            top = max(freq.max(), check.probabilities.max()) * 1.32
            self.ax.set_ylim(0, top)
            # the room above the tallest bar is the legend's: no share of the rounds is over 100 %,
            # and at α = 1 the axis had a 120 % tick
            self.ax.yaxis.set_major_locator(AutoLocator())
            self.ax.set_yticks([t for t in self.ax.get_yticks() if 0 <= t <= min(1, top) + 1e-9])
            self.ax.set_ylim(0, top)
        return self.fig


# 3️⃣ ------------------------------------------------------------------------------------------

def speedup_figure(alpha: float, draft_cost: float, k_max: int = 20) -> Figure:
    """Speedup against K for one α and draft cost: the best K (star), where the curve flattens
    (the knee, 95 % of the best; diamond) and the region where a larger K only loses (shaded)."""
    return SpeedupPlot(k_max).update(alpha, draft_cost)


class SpeedupPlot:
    """``speedup_figure``'s axes for one k_max, kept to be drawn again: ``update(alpha,
    draft_cost)`` replaces the curves, marks, shading, title and legend and returns the figure."""

    def __init__(self, k_max: int = 20):
        self.k_max = k_max = scalar_int("k_max", k_max, minimum=1, maximum=MAX_K)
        self.ks = np.arange(1, k_max + 1)
        with course_figure(5.2, 3.8) as (fig, ax):
            # named in the legend: a label beside the line sat in the hatched region (K > best K
            # reaches the right edge), its strokes through the text
            self.no_gain = ax.axhline(1.0, color=GREY, linestyle=":", linewidth=1.5, label="1×（不加速）")
            ax.set_xlim(0.4, k_max + 0.6)
            ax.set_xticks([1, *range(5, k_max + 1, 5)] if k_max >= 10 else self.ks)
            ax.set_xlabel("每輪猜幾個 token（K）")
            ax.set_ylabel("加速比（倍）")
        self.fig, self.ax = fig, ax
        self._drawn = []          # the artists of the current α and draft cost

    def update(self, alpha: float, draft_cost: float) -> Figure:
        scalar("alpha", alpha)
        scalar("draft_cost", draft_cost)
        ax, ks, k_max = self.ax, self.ks, self.k_max
        s = np.asarray(speedup(alpha, ks, draft_cost))
        best = int(best_k(alpha, draft_cost, k_max=k_max))
        knee = int(knee_k(alpha, draft_cost, k_max=k_max))
        for artist in self._drawn:
            artist.remove()
        with course_style():
            handles = []
            if best < k_max:
                handles.append(ax.axvspan(best + 0.5, k_max + 0.6, facecolor=LOSS_FILL, hatch="\\\\",
                                          edgecolor=LOSS_HATCH, linewidth=0, label="K 再加反而變慢"))
            up, down = ks <= best, ks >= best
            if best > 1:
                handles += ax.plot(ks[up], s[up], color=BLUE, marker="o", label="K 加大還在賺")
            if best < k_max:
                handles += ax.plot(ks[down], s[down], color=VERMILLION, marker="s", linestyle="--",
                                   label="K 加大開始虧")
            handles += ax.plot([best], [s[best - 1]], linestyle="none", marker="*", markersize=17,
                               color=ORANGE, markeredgecolor=BLACK, zorder=5,
                               label=f"最佳 K = {best}（{s[best - 1]:.2f}×）")
            if knee != best:
                handles += ax.plot([knee], [s[knee - 1]], linestyle="none", marker="D", markersize=9,
                                   color=GREEN, markeredgecolor=BLACK, zorder=5,
                                   label=f"開始變平 K = {knee}（{s[knee - 1]:.2f}×）")
            self._drawn = handles
            low, high = min(s.min(), 1.0), max(s.max(), 1.0)
            span = high - low + 0.1
            ax.set_ylim(low - 0.08 * span, high + 0.5 * span)
            ax.set_title(f"加速比 vs K（α = {alpha:.2f}，草稿成本 {_pct(draft_cost)}）")
            ax.legend(handles=[*handles, self.no_gain], loc="upper center", ncols=2, fontsize=9)
        return self.fig


# 4️⃣ ------------------------------------------------------------------------------------------

def serving_figure(alpha: float = 0.8, k: int = 5, draft_cost: float = 0.05,
                   t_flop: float = DEFAULT_T_FLOP, max_users: int = 128) -> Figure:
    """The concurrency model: per-user speed (left) and total throughput (right), speculation on
    and off, with the crossover N* above which speculation lowers the total marked and shaded."""
    return ServingPlot(max_users).update(alpha, k, draft_cost, t_flop)


class ServingPlot:
    """``serving_figure``'s two panels for one max_users, kept to be drawn again:
    ``update(alpha, k, draft_cost, t_flop)`` replaces the curves, the crossover, the legend and
    the title and returns the figure."""

    TITLES = (("每人速度（體感）", "token / $t_0$"), ("總產能（吞吐）", "token / $t_0$"))

    def __init__(self, max_users: int = 128):
        self.max_users = max_users = scalar_int("max_users", max_users, minimum=1, maximum=MAX_USERS)
        self.n = np.arange(1, max_users + 1, dtype=float)
        with course_figure(6.4, 3.9, ncols=2, wide=True) as (fig, axes):
            for ax, (title, ylabel) in zip(axes, self.TITLES):
                ax.set_title(title)
                ax.set_xlabel("同時使用的人數 N")
                ax.set_ylabel(ylabel)
                ax.set_xlim(0, max_users)
                ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
            # made once: fig.suptitle() again would put it back where the layout had moved it from
            self.title = fig.suptitle("", fontsize=13.5)
            # under both panels, never over a curve (in the left panel it covered them when the
            # curves were flat near the top: t_flop = 0, or speculation never worth it)
            fig.legend(handles=[Line2D([], [], color=BLUE, marker="o", label="開投機解碼"),
                                Line2D([], [], color=BLACK, linestyle="--", marker="s",
                                       markerfacecolor="white", label="關閉")],
                       loc="outside lower center", ncols=2)
        self.fig, self.axes = fig, axes
        self._drawn = []          # the artists of the current numbers

    def update(self, alpha: float = 0.8, k: int = 5, draft_cost: float = 0.05,
               t_flop: float = DEFAULT_T_FLOP) -> Figure:
        n, max_users, (left, right) = self.n, self.max_users, self.axes
        curves = serving_curves(n, alpha, k, draft_cost, t_flop=t_flop)
        n_star = float(crossover_concurrency(alpha, k, draft_cost, t_flop=t_flop))
        every = max(1, max_users // 12)
        for artist in self._drawn:
            artist.remove()
        drawn = []
        with course_style(wide=True):
            panels = ((left, curves.per_user_on, curves.per_user_off),
                      (right, curves.throughput_on, curves.throughput_off))
            for ax, on, off in panels:
                if 0 < n_star < max_users:
                    drawn.append(ax.axvspan(n_star, max_users, color=VERMILLION, alpha=0.08, linewidth=0))
                    drawn.append(ax.axvline(n_star, color=VERMILLION, linestyle=":", linewidth=2))
                drawn += ax.plot(n, on, color=BLUE, marker="o", markevery=(every // 2, every), label="開投機解碼")
                drawn += ax.plot(n, off, color=BLACK, linestyle="--", marker="s", markevery=(0, every),
                                 markerfacecolor="white", label="關閉")
                ax.set_ylim(0, max(on.max(), off.max()) * 1.12)
            if n_star == 0:
                verdict = "這組設定下開了從不划算"
            elif np.isinf(n_star) or n_star >= max_users:
                verdict = f"交叉點 N* = {n_star:.1f} 人（超出圖外）" if np.isfinite(n_star) else "這組設定下開了一直划算"
            else:
                verdict = f"交叉點 N* ≈ {n_star:.1f} 人：右側開了反而少"
                # beside the line, on the side with room: inside the axes, so it moves no layout
                left_of_line = n_star > 0.6 * max_users
                mark = right.annotate(f"N* ≈ {n_star:.1f}", (n_star, 0.04), xycoords=("data", "axes fraction"),
                                      xytext=(-4 if left_of_line else 4, 0), textcoords="offset points",
                                      color=VERMILLION, fontsize=12.5, ha="right" if left_of_line else "left",
                                      va="bottom")
                mark.set_in_layout(False)
                drawn.append(mark)
            self.title.set_text(f"α = {alpha:.2f}，K = {k}，草稿成本 {_pct(draft_cost)}，t_flop = {t_flop:g}\n{verdict}")
        self._drawn = drawn
        return self.fig
