"""Every number in the lessons that specdec_lab can compute is recomputed here and must appear in
the lesson text exactly as written.

Each check formats the package's value the way the lesson prints it and looks for it in its
sentence or table row. Edit a number in the lesson, or change what the package computes, and the
check fails, naming the number and the place. Tables are parsed row by row, so a row an instructor
adds is checked too.
"""
import re

import numpy as np
import pytest

from specdec_lab import (
    DEFAULT_T_FLOP,
    best_k,
    crossover_concurrency,
    expected_tokens,
    knee_k,
    serving_curves,
    speedup,
    verify_sampling,
)
from support import lesson_text
from support.lesson_text import lesson, table

LESSON1 = lesson("index.md")

# the concurrency model's defaults as lesson 1 states them (§5 and challenge 3)
ALPHA, K, COST = 0.8, 5, 0.05


def E(alpha, k):
    return float(expected_tokens(alpha, k))


def says(snippet, text=LESSON1):
    lesson_text.says(snippet, text, "lesson 1")


def between(start, end, text=LESSON1):
    """The part of the lesson from the line containing ``start`` up to ``end``."""
    i = text.index(start)
    j = text.index(end, i + len(start))
    return text[i:j]


# ---------------------------------------------------------------- §2 expected tokens per round

def test_toy_settings_and_expected_tokens():
    toy = re.search(r'<div class="sd-toy" data-k="(\d+)" data-alpha="([0-9.]+)" markdown></div>', LESSON1)
    assert toy, "the toy line must stay as CONVENTIONS.md fixes it"
    k, alpha = int(toy.group(1)), float(toy.group(2))
    says(f"上面玩具的設定是 $\\alpha={alpha:g}$、$K={k}$，平均每輪產出 {E(alpha, k):.2f} 個 token")
    says(f"$\\alpha=0.8$、$K=5$ 時是 {E(0.8, 5):.2f} 個")


# ---------------------------------------------------------------- §3 / §4 rejection sampling example

P_EXAMPLE = np.array([0.5, 0.3, 0.2])  # target: X, F, Y
Q_EXAMPLE = np.array([0.1, 0.6, 0.3])  # draft


def test_three_token_example_accept_probability_and_residual():
    rows = [verify_sampling([1], [Q_EXAMPLE], [P_EXAMPLE, P_EXAMPLE], seed=s) for s in range(40)]
    accept = rows[0].steps[0].accept_prob
    says(f"收下機率是 $\\min(1, 0.3/0.6) = {accept:g}$")
    rejected = [r.steps[0].target_token for r in rows if not r.steps[0].accepted]
    assert rejected and set(rejected) == {0}, "the lesson says a rejected F is always replaced by X"
    says("$\\max(0, p-q) = (0.4, 0, 0)$")
    kept = np.minimum(P_EXAMPLE, Q_EXAMPLE)
    r = 1 - float(kept.sum())            # the probability that the draft's token is rejected
    says(f"$r = 1-({kept[0]:g}+{kept[1]:g}+{kept[2]:g}) = {r:g}$")
    says(f"X 的總機率是 $\\min({P_EXAMPLE[0]:g}, {Q_EXAMPLE[0]:g}) + r\\times 1$，"
         f"也就是 ${kept[0]:g} + {r:g} = {P_EXAMPLE[0]:g}$")
    assert kept[0] + r == pytest.approx(P_EXAMPLE[0])
    says(f"F 是 $\\min({P_EXAMPLE[1]:g}, {Q_EXAMPLE[1]:g}) = {P_EXAMPLE[1]:g}$，"
         f"Y 是 $\\min({P_EXAMPLE[2]:g}, {Q_EXAMPLE[2]:g}) = {P_EXAMPLE[2]:g}$")


# ---------------------------------------------------------------- §5 the concurrency model

def test_serving_table_matches_the_model():
    says(f"$\\alpha={ALPHA:g}$、$K={K}$、草稿成本 $c={COST:g}$、$t_\\text{{FLOP}}={DEFAULT_T_FLOP:g}$")
    rows = table(LESSON1, "| 併發人數 |")
    assert len(rows) >= 3
    for row in rows:
        n = float(row[0])
        c = serving_curves(np.array([n]), ALPHA, K, COST)
        expected = [
            row[0],
            f"{c.per_user_off[0]:.2f}",
            f"{c.per_user_on[0]:.2f}",
            f"{c.throughput_off[0]:.1f}",
            f"{c.throughput_on[0]:.1f}",
            f"{c.gain[0]:.2f}",
        ]
        assert row == expected, f"§5 table row N={row[0]}: lesson {row}, package {expected}"
    # the per-user ratio and the throughput ratio are one column because they are equal
    c = serving_curves(np.array([float(r[0]) for r in rows]), ALPHA, K, COST)
    np.testing.assert_allclose(c.per_user_on / c.per_user_off, c.gain)
    # at 16 users each step verifies (K+1)·16 positions: compute time (t_flop per position) past one T
    assert (K + 1) * 16 * DEFAULT_T_FLOP > 1
    says(f"$(K+1) \\times 16 = {(K + 1) * 16}$ 個位置")


def test_crossover_in_section_5():
    n_star = float(crossover_concurrency(ALPHA, K, COST))
    says(f"過了約 {n_star:.1f} 人，開著反而比關掉產出得少")


# ---------------------------------------------------------------- §6 speedup formula

def test_speedup_example():
    s = float(speedup(ALPHA, K, COST))
    says(f"$c = t_\\text{{draft}}/t_\\text{{target}}$")
    says(f"$\\alpha={ALPHA:g}$、$K={K}$、$c={COST:g}$：${E(ALPHA, K):.2f} / {1 + K * COST:.2f} \\approx {s:.2f}$ 倍")
    # "正是上一節表格裡少人時的數字": the single-user gain of the serving model
    one_user = serving_curves(np.array([1.0]), ALPHA, K, COST)
    assert f"{one_user.gain[0]:.2f}" == f"{s:.2f}"


# ---------------------------------------------------------------- §7 what vLLM prints

def test_vllm_acceptance_table():
    rows = {r[0]: r for r in table(LESSON1, "| vLLM 印出的數字 |")}
    e = E(0.8, 5)
    assert rows["Avg Draft acceptance rate"][3] == f"{(e - 1) / 5:.1%}"
    assert rows["Mean acceptance length"][3] == f"{e:.2f}"
    first = next(v for key, v in rows.items() if key.startswith("第 1 個位置"))
    assert first[3] == f"{E(0.8, 1) - E(0.8, 0):.2f}"  # α itself: what the first draft token adds


def test_per_position_rates():
    # position i is kept in a fraction α^i of the rounds = what the i-th draft token adds to E
    rates = [E(0.8, i) - E(0.8, i - 1) for i in range(1, 6)]
    says("（上例為 " + "、".join(f"{r:.3f}" for r in rates) + "）")


# ---------------------------------------------------------------- 換你動手

def test_challenge_1_table_and_text():
    block = between("**挑戰 1。**", "**挑戰 2。**")
    rows = table(block, "| α |")
    alphas = [float(r[0]) for r in rows]
    assert alphas[0] == 0.40 and alphas[-1] == 0.95, "the challenge sweeps α from 0.40 to 0.95"
    for a, row in zip(alphas, rows):
        assert row[1] == f"{E(a, 5):.2f}", f"challenge 1, α={row[0]}: lesson {row[1]}, package {E(a, 5):.2f}"
    says(f"每輪只從 {E(0.7, 5):.2f} 變成 {E(0.7, 10):.2f}", text=block)
    says(f"把 α 提高到 0.9，卻能到 {E(0.9, 5):.2f}", text=block)
    ceiling = E(0.7, 10_000)  # K → ∞: 1/(1−α)
    says(f"α = 0.7 時這個上限只有 {ceiling:.2f}", text=block)
    gain_high = E(0.95, 5) - E(0.80, 5)
    gain_low = E(0.55, 5) - E(0.40, 5)
    assert gain_high > gain_low, "the text says the curve gets steeper to the right"


def test_challenge_2_best_and_knee():
    block = between("**挑戰 2。**", "**挑戰 3。**")
    best, knee = best_k(0.85, 0.06), knee_k(0.85, 0.06)
    s_best, s_knee = float(speedup(0.85, best, 0.06)), float(speedup(0.85, knee, 0.06))
    says(f"最高點在 **K = {best}**（約 {s_best:.2f} 倍）", text=block)
    says(f"從 **K = {knee}** 起，加速比就已經達到最高點的 95%", text=block)
    says(f"從 {knee} 加到 {best}，只多換來約 {round((s_best / s_knee - 1) * 100)}% 的速度", text=block)

    def wasted(k):
        return k - (E(0.85, k) - 1)

    says(f"從約 {wasted(knee):.2f} 個增加到約 {wasted(best):.2f} 個", text=block)
    rows = table(block, "| K |")
    ks = [int(r[0]) for r in rows]
    assert best in ks and knee in ks
    for k, row in zip(ks, rows):
        assert row[1] == f"{float(speedup(0.85, k, 0.06)):.2f}", f"challenge 2, K={k}: speedup"
        assert row[2] == f"{wasted(k):.2f}", f"challenge 2, K={k}: wasted draft tokens"


def test_challenge_3_crossover_moves_right():
    block = between("**挑戰 3。**", "## 情境測驗")
    slow = float(crossover_concurrency(ALPHA, K, COST, t_flop=0.02))
    fast = float(crossover_concurrency(ALPHA, K, COST, t_flop=0.01))
    assert fast > slow
    says(f"往右移：交叉點從約 {slow:.1f} 人移到約 {fast:.1f} 人", text=block)
    says(f"t_flop=0.02))  # 約 {slow:.1f}", text=block)
    says(f"t_flop=0.01))  # 約 {fast:.1f}", text=block)
    # the closed form the solution quotes, N* = (E − K·c) / (t_flop·(K+1)), and "halve t_flop, double N*"
    for t, n_star in ((0.02, slow), (0.01, fast)):
        assert n_star == pytest.approx((E(ALPHA, K) - K * COST) / (t * (K + 1)))
    assert fast == pytest.approx(2 * slow)


# ---------------------------------------------------------------- 情境測驗

def quiz(n):
    return between(f"/// quiz | Q{n}", "\n///\n")


def test_q3_low_alpha_yield():
    says(f"α 只有 0.2 時，K = 5 每輪也只產出 {E(0.2, 5):.2f} 個 token", text=quiz(3))


def test_q4_numerator_saturates_denominator_grows():
    block = quiz(4)
    shown = repr(np.round(speedup(0.6, [1, 5, 12], 0.3), 2))
    says(shown, text=block)
    says(
        f"第 5 個草稿 token 只讓每輪期望產出多 {E(0.6, 5) - E(0.6, 4):.3f} 個，"
        f"第 12 個只多 {E(0.6, 12) - E(0.6, 11):.3f} 個",
        text=block,
    )
    says(f"分子早就停在 {E(0.6, 10_000):.1f} 附近", text=block)
    says(f"K = 5 時 {E(0.6, 5):.2f}、K = 12 時 {E(0.6, 12):.2f}", text=block)
    denominator = {k: E(0.6, k) / float(speedup(0.6, k, 0.3)) for k in (5, 12)}
    says(f"分母卻從 {denominator[5]:.1f} 一路長到 {denominator[12]:.1f}", text=block)
    says(f"本例的最佳 K 是 {best_k(0.6, 0.3)}", text=block)
    assert float(speedup(0.6, 5, 0.3)) < 1, "the text says K = 5 is already slower than no speculation"


# ---------------------------------------------------------------- §6 DFlash's block

def test_dflash_b16_drafts_15_tokens():
    """A b16 block's first slot holds the last verified token, so it drafts 15: the vLLM launch line
    of z-lab/dflash's README sets num_speculative_tokens to 15 (the lesson once said 16)."""
    says("16 格的 b16 模型每輪提出 15 個草稿 token")
    says("把 `num_speculative_tokens` 設成 15")
    assert "一整塊 16 個 token" not in LESSON1
