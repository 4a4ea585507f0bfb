"""Figures beyond the formula (issue 5): the lossless lab and your own vLLM numbers.

``transition_figure`` for ``notebooks/lossless.ipynb``; ``positional_figure`` and
``bench_sweep_figure`` for ``notebooks/your_gpu.ipynb``.
"""
from __future__ import annotations

# style first: it mends Pyodide's font list and quiets the font-cache message before
# matplotlib's font manager loads (the package imports this module only when used)
from .style import BLACK, BLUE, GREEN, ORANGE, SKY, VERMILLION, course_figure, notebook_is_narrow

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..chisquare import p_text
from ..positional import positional_speedups
from ..vllm import measured_crossover


def transition_figure(test, index: int = 0, rule: str | None = None) -> Figure:
    """One context of a ``specdec_lab.lossless.transition_test``: how often each next character
    came out (bars) against how often the target's exact probabilities say it should (◆).
    ``rule``, the verification rule the text came from (a ``SamplingCheck``'s name), heads the
    title: two figures side by side otherwise looked the same but for their bars."""
    context, visits, result = test.per_context[index]
    order = np.argsort(-result.expected)
    labels = [str(result.labels[i]) if result.labels[i] != "\n" else "↵" for i in order]
    x = np.arange(len(order))
    with course_figure(5.2, 3.4) as (fig, ax):
        ax.bar(x, result.observed[order], color=SKY, edgecolor=BLACK, linewidth=0.6, label="實際產出次數")
        ax.plot(x, result.expected[order], linestyle="none", marker="D", color=VERMILLION,
                markeredgecolor=BLACK, label="大模型機率 × 次數")
        ax.set_xticks(x, labels)
        ax.set_ylabel("次數")
        title = f"「{context}」後面接什麼字？（{visits} 次，{p_text(result.p_value, mathtext=True)}）"
        ax.set_title(f"{rule}\n{title}" if rule else title)
        ax.legend(loc="upper right")
    return fig


def positional_figure(profiles: dict, draft_cost: float = 0.0) -> Figure:
    """Acceptance that changes with draft position. ``profiles`` maps a name to per-position
    conditional acceptance rates. Left: the rates; right: the tokens per round you get by
    verifying only the first k positions (``expected_tokens_positional``), divided by the round's
    cost 1 + k·draft_cost (``specdec_lab.positional.positional_speedups``)."""
    styles = [(BLUE, "o", "-"), (VERMILLION, "s", "--"), (GREEN, "D", "-."), (ORANGE, "^", ":")]
    if not 1 <= len(profiles) <= len(styles):  # zip would silently leave the fifth one out
        raise ValueError(f"profiles 必須有 1 到 {len(styles)} 組（每組一種顏色與線型），收到 {len(profiles)} 組")
    with course_figure(6.6, 3.8, ncols=2, wide=True) as (fig, (left, right)):
        for (name, rates), (color, marker, line) in zip(profiles.items(), styles):
            rates = np.asarray(rates, dtype=float)
            ks, gain = positional_speedups(np.nan_to_num(rates, nan=0.0), draft_cost)  # nan: never reached
            left.plot(ks, rates, color=color, marker=marker, linestyle=line, label=name)
            right.plot(ks, gain, color=color, marker=marker, linestyle=line, label=name)
            best = int(np.argmax(gain))
            right.plot([ks[best]], [gain[best]], marker="*", markersize=15, color=color,
                       markeredgecolor=BLACK, linestyle="none", zorder=5)
        for ax in (left, right):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        left.set_ylim(0, 1.05)
        left.set_title("第 i 個位置的條件接受率")
        left.set_xlabel("草稿位置 i")
        left.set_ylabel("前面都中時，這格也中的機率")
        right.set_title("只驗前 k 個：每輪產出" + ("" if draft_cost == 0 else " ÷ 成本"))
        right.set_xlabel("驗到第幾個位置 k")
        right.set_ylabel("token / 輪" if draft_cost == 0 else "加速比（倍）")
        # under both panels, never over a point: the learner's own rates can be anywhere in them
        # (inside the left panel it covered the tail collapse's positions 7-9)
        # (one under the other in a narrow notebook: side by side they made the figure wider)
        fig.legend(handles=left.get_lines(), loc="outside lower center",
                   ncols=1 if notebook_is_narrow() else len(profiles), fontsize=10.5)
    return fig


def bench_sweep_figure(sweep) -> Figure:
    """Your ``vllm bench serve`` sweep (``specdec_lab.vllm.bench_sweep``): per-user speed
    (1000 ÷ mean TPOT) and total output throughput against concurrency, speculation on and off,
    with the measured crossover."""
    n = sweep.concurrency
    n_star = measured_crossover(sweep)
    with course_figure(6.6, 3.9, ncols=2, wide=True) as (fig, (left, right)):
        panels = ((left, 1000 / sweep.tpot_on_ms, 1000 / sweep.tpot_off_ms, "每人速度（1000 ÷ TPOT）", "token/s"),
                  (right, sweep.throughput_on, sweep.throughput_off, "總產能（output throughput）", "token/s"))
        for ax, on, off, title, ylabel in panels:
            if 0 < n_star < np.inf:
                ax.axvspan(n_star, n[-1] * 1.3, color=VERMILLION, alpha=0.08, linewidth=0)
                ax.axvline(n_star, color=VERMILLION, linestyle=":", linewidth=2)
            ax.plot(n, on, color=BLUE, marker="o", label="開投機解碼")
            ax.plot(n, off, color=BLACK, marker="s", linestyle="--", markerfacecolor="white", label="關閉")
            ax.set_xscale("log", base=2)
            ax.set_xticks(n, [f"{int(v)}" for v in n])
            ax.set_xlim(n[0] / 1.3, n[-1] * 1.3)
            ax.set_ylim(0, max(on.max(), off.max()) * 1.12)
            ax.set_title(title)
            # in a monospace font, as the flag is typed: the text font joins "--" into one dash
            ax.set_xlabel("--max-concurrency", family="monospace")
            ax.set_ylabel(ylabel)
        left.legend(loc="lower left")
        if n_star == 0:
            verdict = "量到的範圍內，開了總產能都比較少"
        elif np.isinf(n_star):
            verdict = "量到的範圍內，開了總產能一直比較多：再往上量"
        else:
            verdict = f"實測交叉點 ≈ {n_star:.1f} 人：右側開了反而少"
        fig.suptitle(verdict, fontsize=12.5)
    return fig
