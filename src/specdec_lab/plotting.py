"""The figures of the 實驗場 notebook, with Chinese labels (the only module that imports matplotlib).

Each ``*_figure`` function takes the same numbers as the package's functions, draws one figure and
returns it (a ``matplotlib.figure.Figure``; a notebook shows it when it is a cell's last value).
``explore_*`` put sliders in front of a figure (needs ipywidgets). ``round_table`` shows one
verification round position by position.

Importing this module registers the Traditional Chinese font shipped in ``fonts/`` (a subset of
Noto Sans CJK TC) and puts it first in matplotlib's sans-serif list, so your own plots can use
Chinese too. Figures are sized for a notebook about 500 px wide; colours are from the Okabe–Ito
palette (safe for colour-blind readers) and every series also has its own marker or line style.
"""
from __future__ import annotations

import base64
import contextlib
import io
import logging
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class _QuietFontCache(logging.Filter):
    """Drops matplotlib's "building the font cache" warning.

    Pyodide's matplotlib 3.8.4 ships a font list stamped with a version its own font manager does
    not accept, so it rebuilds the list (a fraction of a second) and prints that warning into the
    first output of every fresh page. Only that message is dropped.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "building the font cache" not in record.getMessage()


logging.getLogger("matplotlib.font_manager").addFilter(_QuietFontCache())

import matplotlib  # noqa: E402  (after the filter: importing font_manager may log the warning)
from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator, PercentFormatter  # noqa: E402

from .closed_form import best_k, knee_k, speedup  # noqa: E402
from .monte_carlo import MonteCarloCheck, monte_carlo_check  # noqa: E402
from .serving import DEFAULT_T_FLOP, crossover_concurrency, serving_curves  # noqa: E402
from .verification import RoundResult  # noqa: E402

FONT_PATH = Path(__file__).with_name("fonts") / "NotoSansCJKtc-Subset.otf"
FONT_FAMILY = "Noto Sans CJK TC Subset"


def register_font() -> str:
    """Register the shipped font with matplotlib and make it the first sans-serif choice."""
    if FONT_FAMILY not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(FONT_PATH))
    rc = matplotlib.rcParams
    rc["font.sans-serif"] = [FONT_FAMILY, *[f for f in rc["font.sans-serif"] if f != FONT_FAMILY]]
    rc["font.family"] = "sans-serif"
    return FONT_FAMILY


register_font()

def _show_figures_in_notebooks() -> None:
    """Let a Figure that ends a notebook cell display as a PNG.

    The figures here are made without pyplot (no global state to clean up), so matplotlib's
    inline backend, which would register this, is never loaded. Only when running under IPython.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour deficiency
BLUE, VERMILLION, GREEN, ORANGE = "#0072B2", "#D55E00", "#009E73", "#E69F00"
SKY, PURPLE, GREY, BLACK = "#56B4E9", "#CC79A7", "#666666", "#000000"
LOSS_FILL, LOSS_HATCH = (0.835, 0.369, 0.0, 0.06), (0.835, 0.369, 0.0, 0.28)  # vermillion, faint

# sizes for a figure about 5 inches wide shown in a ~450 px notebook column
STYLE = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 9.5,
    "legend.framealpha": 0.92,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 2.0,
    "lines.markersize": 6,
    "hatch.linewidth": 1.2,
}
# two panels side by side are shown smaller: larger type keeps them legible
WIDE = {"font.size": 13, "axes.titlesize": 14, "axes.labelsize": 13, "xtick.labelsize": 12.5,
        "ytick.labelsize": 12.5, "legend.fontsize": 12}
DPI = 100


def _new_figure(width: float, height: float, ncols: int = 1):
    """A Figure outside pyplot (nothing global to close) with the course's style."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(width, height), dpi=DPI, facecolor="white", layout="constrained")
        axes = fig.subplots(1, ncols)
    return fig, axes


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, cropped the way a notebook shows it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight", facecolor="white")
    return buf.getvalue()


_show_figures_in_notebooks()


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"


# 1️⃣ ------------------------------------------------------------------------------------------

def tokens_histogram(check: MonteCarloCheck) -> Figure:
    """Tokens per round: the Monte Carlo's bars, the closed form's probabilities on top.

    The 1-token bar (the first draft token rejected: the round still yields the target's own
    token) is vermillion and hatched; the others are blue.
    """
    with matplotlib.rc_context(STYLE):
        fig, ax = _new_figure(5.2, 3.7)
        tokens, freq = check.tokens, check.frequencies
        colors = [VERMILLION] + [BLUE] * check.k
        bars = ax.bar(tokens, freq, width=0.72, color=colors, edgecolor="white", linewidth=0.8)
        bars[0].set_hatch("//")
        (closed,) = ax.plot(tokens, check.probabilities, linestyle="none", marker="D", markersize=7,
                            markerfacecolor="white", markeredgecolor=BLACK, markeredgewidth=1.6)
        ax.set_xticks(tokens if check.k <= 10 else tokens[::2])
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel("一輪產出幾個 token")
        ax.set_ylabel("佔所有輪的比例")
        ax.set_title(
            f"α = {check.alpha:.2f}，K = {check.k}：平均每輪 {check.mean:.3f} 個\n"
            f"閉式解 {check.closed_form:.3f}，差 {check.z:+.1f} 個標準誤",
            fontsize=11.5,
        )
        handles = [
            Patch(facecolor=BLUE, label=f"模擬 {check.rounds:,} 輪"),
            Patch(facecolor=VERMILLION, hatch="//", edgecolor="white", label="第一格就被拒（仍得 1 個）"),
            closed,
        ]
        closed.set_label("閉式解的機率")
        ax.legend(handles=handles, loc="upper center" if check.alpha >= 0.5 else "upper right")
        ax.set_ylim(0, max(freq.max(), check.probabilities.max()) * 1.32)
        ax.grid(axis="x", visible=False)
    return fig


# 2️⃣ ------------------------------------------------------------------------------------------

def _display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _display_width(text))


@dataclass(frozen=True)
class Table:
    """A small table that prints as aligned text and renders as HTML in a notebook."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""

    def __str__(self) -> str:
        widths = [max(_display_width(c) for c in col) for col in zip(self.headers, *self.rows)]
        lines = [self.caption] if self.caption else []
        for row in (self.headers, *self.rows):
            lines.append("  ".join(_pad(c, w) for c, w in zip(row, widths)).rstrip())
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        from html import escape

        head = "".join(f"<th>{escape(h)}</th>" for h in self.headers)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in self.rows
        )
        caption = f"<caption>{escape(self.caption)}</caption>" if self.caption else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def round_table(result: RoundResult, draft_tokens, vocab=None) -> Table:
    """One verification round, one row per draft position.

    Sampling rounds show p (the target's probability of the draft token), q (the draft's),
    min(1, p/q), the uniform draw u and the verdict; greedy rounds show the target's argmax.
    Positions after the first rejection are listed as discarded. ``vocab`` maps token ids to text.
    """
    name = (lambda t: str(vocab[t])) if vocab is not None else str
    draft_tokens = [int(t) for t in np.asarray(draft_tokens).ravel()]
    greedy = bool(result.steps) and result.steps[0].u is None
    if greedy:
        headers = ("位置", "草稿猜", "大模型的首選", "p(草稿字)", "判定")
    else:
        headers = ("位置", "草稿猜", "p", "q", "min(1, p/q)", "u", "判定")
    rows = []
    for step in result.steps:
        if step.accepted:
            verdict = "✓ 接受"
        elif greedy:
            verdict = f"✗ 拒絕 → 改用「{name(step.target_token)}」"
        else:
            verdict = f"✗ 拒絕 → 重抽得「{name(step.target_token)}」"
        if greedy:
            rows.append((str(step.position), name(step.draft_token), name(step.target_token),
                         f"{step.p:.2f}", verdict))
        else:
            rows.append((str(step.position), name(step.draft_token), f"{step.p:.2f}",
                         f"{step.q:.2f}", f"{step.accept_prob:.2f}", f"{step.u:.2f}", verdict))
    for position in range(len(result.steps) + 1, len(draft_tokens) + 1):
        blank = ("—",) * (len(headers) - 3)
        rows.append((str(position), name(draft_tokens[position - 1]), *blank, "丟掉（前提已錯）"))
    extra = " bonus" if result.bonus else "修正"
    text = "".join(name(t) for t in result.tokens)
    caption = (
        f"這一輪產出 {len(result.tokens)} 個 token：「{text}」"
        f"（接受 {result.n_accepted} 個 ＋ 大模型給的{extra} 1 個）"
    )
    return Table(headers, tuple(rows), caption)


# 3️⃣ ------------------------------------------------------------------------------------------

def speedup_figure(alpha: float, draft_cost: float, k_max: int = 20) -> Figure:
    """Speedup against K for one α and draft cost: the best K (star), where the curve flattens
    (the knee, 95 % of the best; diamond) and the region where a larger K only loses (shaded)."""
    ks = np.arange(1, k_max + 1)
    s = np.asarray(speedup(alpha, ks, draft_cost))
    best = int(best_k(alpha, draft_cost, k_max=k_max))
    knee = int(knee_k(alpha, draft_cost, k_max=k_max))
    with matplotlib.rc_context(STYLE):
        fig, ax = _new_figure(5.2, 3.8)
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
        ax.axhline(1.0, color=GREY, linestyle=":", linewidth=1.5)
        ax.annotate("1×（不加速）", (k_max + 0.5, 1.0), xytext=(0, -3), textcoords="offset points",
                    ha="right", va="top", color=GREY, fontsize=9.5)
        handles += ax.plot([best], [s[best - 1]], linestyle="none", marker="*", markersize=17,
                           color=ORANGE, markeredgecolor=BLACK, zorder=5,
                           label=f"最佳 K = {best}（{s[best - 1]:.2f}×）")
        if knee != best:
            handles += ax.plot([knee], [s[knee - 1]], linestyle="none", marker="D", markersize=9,
                               color=GREEN, markeredgecolor=BLACK, zorder=5,
                               label=f"開始變平 K = {knee}（{s[knee - 1]:.2f}×）")
        ax.set_xlim(0.4, k_max + 0.6)
        ax.set_xticks([1, *range(5, k_max + 1, 5)] if k_max >= 10 else ks)
        low, high = min(s.min(), 1.0), max(s.max(), 1.0)
        span = high - low + 0.1
        ax.set_ylim(low - 0.08 * span, high + 0.5 * span)
        ax.set_xlabel("每輪猜幾個 token（K）")
        ax.set_ylabel("加速比（倍）")
        ax.set_title(f"加速比 vs K（α = {alpha:.2f}，草稿成本 {_pct(draft_cost)}）")
        ax.legend(handles=handles, loc="upper center", ncols=2, fontsize=9)
    return fig


# 4️⃣ ------------------------------------------------------------------------------------------

def serving_figure(alpha: float = 0.8, k: int = 5, draft_cost: float = 0.05,
                   t_flop: float = DEFAULT_T_FLOP, max_users: int = 128) -> Figure:
    """The concurrency model: per-user speed (left) and total throughput (right), speculation on
    and off, with the crossover N* above which speculation lowers the total marked and shaded."""
    n = np.arange(1, max_users + 1, dtype=float)
    curves = serving_curves(n, alpha, k, draft_cost, t_flop=t_flop)
    n_star = float(crossover_concurrency(alpha, k, draft_cost, t_flop=t_flop))
    every = max(1, max_users // 12)
    with matplotlib.rc_context({**STYLE, **WIDE}):
        fig, (left, right) = _new_figure(6.4, 3.9, ncols=2)
        panels = (
            (left, curves.per_user_on, curves.per_user_off, "每人速度（體感）", "token / T"),
            (right, curves.throughput_on, curves.throughput_off, "總產能（吞吐）", "token / T"),
        )
        for ax, on, off, title, ylabel in panels:
            if 0 < n_star < max_users:
                ax.axvspan(n_star, max_users, color=VERMILLION, alpha=0.08, linewidth=0)
                ax.axvline(n_star, color=VERMILLION, linestyle=":", linewidth=2)
            ax.plot(n, on, color=BLUE, marker="o", markevery=(every // 2, every), label="開投機解碼")
            ax.plot(n, off, color=BLACK, linestyle="--", marker="s", markevery=(0, every),
                    markerfacecolor="white", label="關閉")
            ax.set_title(title)
            ax.set_xlabel("同時使用的人數 N")
            ax.set_ylabel(ylabel)
            ax.set_xlim(0, max_users)
            ax.set_ylim(0, max(on.max(), off.max()) * 1.12)
            ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        left.legend(loc="upper right")
        if n_star == 0:
            verdict = "這組設定下開了從不划算"
        elif np.isinf(n_star) or n_star >= max_users:
            verdict = f"交叉點 N* = {n_star:.1f} 人（超出圖外）" if np.isfinite(n_star) else "這組設定下開了一直划算"
        else:
            verdict = f"交叉點 N* ≈ {n_star:.1f} 人：右側開了反而少"
            right.annotate(f"N* ≈ {n_star:.1f}", (n_star, 0.04), xycoords=("data", "axes fraction"),
                           xytext=(4, 0), textcoords="offset points", color=VERMILLION,
                           fontsize=12.5, ha="left", va="bottom")
        fig.suptitle(
            f"α = {alpha:.2f}，K = {k}，草稿成本 {_pct(draft_cost)}，t_flop = {t_flop:g}\n{verdict}",
            fontsize=13.5,
        )
    return fig


# sliders ---------------------------------------------------------------------------------------

class LiveFigure:
    """Sliders and the figure they redraw (when a slider is released).

    Shown in a notebook it is an ipywidgets box: the sliders, then an Output widget whose
    contents are set directly (no output capturing, so it behaves the same in ipykernel, in
    Pyodide and under nbclient). The display also carries the current figure as a plain PNG, so
    a notebook stored with its outputs (widget views stripped, see ``notebooks/execute.py``)
    shows the figure before any kernel runs. Text that ``draw`` prints appears above the figure.
    """

    def __init__(self, draw, **sliders):
        import ipywidgets

        self._draw = draw
        self.sliders = sliders
        self.output = ipywidgets.Output()
        self.widget = ipywidgets.VBox([*sliders.values(), self.output])
        self._png = b""
        for slider in sliders.values():
            slider.observe(self._redraw, names="value")
        self._redraw()

    @property
    def values(self) -> dict:
        return {name: slider.value for name, slider in self.sliders.items()}

    @property
    def png(self) -> bytes:
        """The figure currently shown, as PNG bytes."""
        return self._png

    def _redraw(self, change=None) -> None:
        printed = io.StringIO()
        outputs = []
        try:
            with contextlib.redirect_stdout(printed):
                fig = self._draw(**self.values)
            self._png = figure_png(fig)
        except Exception as error:  # shown where the figure would be, not lost in a kernel log
            outputs.append({"output_type": "stream", "name": "stderr",
                            "text": f"{type(error).__name__}: {error}\n"})
        else:
            png = base64.b64encode(self._png).decode("ascii")
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"image/png": png, "text/plain": "<圖>"}})
        if printed.getvalue():
            outputs.insert(0, {"output_type": "stream", "name": "stdout", "text": printed.getvalue()})
        self.output.outputs = tuple(outputs)

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
        data["image/png"] = base64.b64encode(self._png).decode("ascii")
        return data


def _slider(kind: str, value, low, high, step, description: str, fmt: str | None = None):
    import ipywidgets

    cls = ipywidgets.IntSlider if kind == "int" else ipywidgets.FloatSlider
    options = {"readout_format": fmt} if fmt else {}
    return cls(value=value, min=low, max=high, step=step, description=description,
               continuous_update=False, style={"description_width": "7em"},
               layout=ipywidgets.Layout(width="min(100%, 26rem)"), **options)


def explore_tokens(alpha: float = 0.8, k: int = 5, rounds: int = 30_000, seed: int = 1) -> LiveFigure:
    """1️⃣ α and K sliders → the Monte Carlo against the closed form, and the histogram."""

    def draw(alpha, k):
        check = monte_carlo_check(alpha, k, rounds=rounds, seed=seed)
        print(check)
        return tokens_histogram(check)

    return LiveFigure(draw,
                      alpha=_slider("float", alpha, 0.0, 1.0, 0.01, "接受率 α", ".2f"),
                      k=_slider("int", k, 1, 16, 1, "每輪猜 K 個"))


def explore_speedup(alpha: float = 0.8, draft_cost: float = 0.05, k_max: int = 20) -> LiveFigure:
    """3️⃣ α and draft-cost sliders → speedup vs K, best K and the knee."""
    return LiveFigure(lambda alpha, draft_cost: speedup_figure(alpha, draft_cost, k_max=k_max),
                      alpha=_slider("float", alpha, 0.0, 1.0, 0.01, "接受率 α", ".2f"),
                      draft_cost=_slider("float", draft_cost, 0.0, 0.5, 0.01, "草稿成本", ".0%"))


def explore_serving(alpha: float = 0.8, k: int = 5, draft_cost: float = 0.05,
                    t_flop: float = DEFAULT_T_FLOP, max_users: int = 128) -> LiveFigure:
    """4️⃣ α, K, draft cost and t_flop sliders → per-user speed and total throughput."""

    def draw(alpha, k, draft_cost, t_flop):
        return serving_figure(alpha, k, draft_cost, t_flop, max_users=max_users)

    return LiveFigure(draw,
                      alpha=_slider("float", alpha, 0.0, 1.0, 0.01, "接受率 α", ".2f"),
                      k=_slider("int", k, 1, 16, 1, "每輪猜 K 個"),
                      draft_cost=_slider("float", draft_cost, 0.0, 0.5, 0.01, "草稿成本", ".0%"),
                      t_flop=_slider("float", t_flop, 0.002, 0.05, 0.001, "t_flop", ".3f"))


# ===============================================================================================
# Beyond the formula (issue 5): the lossless lab and your own vLLM numbers.
# Owned by the "beyond" engineer; appended here so every figure lives in the plotting module.
# ===============================================================================================

def transition_figure(test, index: int = 0) -> Figure:
    """One context of a ``specdec_lab.lossless.transition_test``: how often each next character
    came out (bars) against how often the target's exact probabilities say it should (◇)."""
    from .chisquare import p_text

    context, visits, result = test.per_context[index]
    order = np.argsort(-result.expected)
    labels = [str(result.labels[i]) if result.labels[i] != "\n" else "↵" for i in order]
    x = np.arange(len(order))
    with matplotlib.rc_context(STYLE):
        fig, ax = _new_figure(5.2, 3.4)
        ax.bar(x, result.observed[order], color=SKY, edgecolor=BLACK, linewidth=0.6, label="實際產出次數")
        ax.plot(x, result.expected[order], linestyle="none", marker="D", color=VERMILLION,
                markeredgecolor=BLACK, label="大模型機率 × 次數")
        ax.set_xticks(x, labels)
        ax.set_ylabel("次數")
        ax.set_title(f"「{context}」後面接什麼字？（{visits} 次，{p_text(result.p_value)}）")
        ax.legend(loc="upper right")
    return fig


def positional_figure(profiles: dict, draft_cost: float = 0.0) -> Figure:
    """Acceptance that changes with draft position. ``profiles`` maps a name to per-position
    conditional acceptance rates. Left: the rates; right: the tokens per round you get by
    verifying only the first k positions (``expected_tokens_positional``), divided by the round's
    cost 1 + k·draft_cost (``specdec_lab.positional.positional_speedups``)."""
    from .positional import positional_speedups

    styles = [(BLUE, "o", "-"), (VERMILLION, "s", "--"), (GREEN, "D", "-."), (ORANGE, "^", ":")]
    with matplotlib.rc_context({**STYLE, **WIDE}):
        fig, (left, right) = _new_figure(6.6, 3.8, ncols=2)
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
        left.legend(loc="lower left", fontsize=9.5)
    return fig


def bench_sweep_figure(sweep) -> Figure:
    """Your ``vllm bench serve`` sweep (``specdec_lab.vllm.bench_sweep``): per-user speed
    (1000 ÷ mean TPOT) and total output throughput against concurrency, speculation on and off,
    with the measured crossover."""
    from .vllm import measured_crossover

    n = sweep.concurrency
    n_star = measured_crossover(sweep)
    with matplotlib.rc_context({**STYLE, **WIDE}):
        fig, (left, right) = _new_figure(6.6, 3.9, ncols=2)
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
            ax.set_xlabel("--max-concurrency")
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
