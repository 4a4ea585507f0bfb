"""Every number in lessons/lossless-lab.md and lessons/your-gpu.md that specdec_lab can compute is
recomputed here, with the notebooks' fixed seeds, and must appear in the lesson as written.

Each check formats the package's value the way the lesson prints it and looks for it in its
sentence or table row; tables are read row by row, so an edited or added row is checked too. The
notebooks print the same objects, so a few checks also find the package's text in the outputs
stored in notebooks/*.ipynb: lesson, notebook and package tell one story.

The lossless lab's runs come from tests/support/lossless_runs.py, shared with test_lossless.py, so
the fast layer computes them once.
"""
import inspect
import json
import math
import re
from pathlib import Path

import numpy as np

from specdec_lab import expected_tokens
from specdec_lab import lossless_experiments as lx
from specdec_lab.chisquare import MIN_EXPECTED
from specdec_lab.corpus import CORPUS
from specdec_lab.lossless import transition_test
from specdec_lab.ngram_lm import CopyingLM
from specdec_lab.positional import (best_tree, expected_tokens_tree, positional_speedups, tree_from_choices,
                                   tree_table)
from specdec_lab.vllm import (
    bench_sweep,
    estimate_alpha,
    estimate_draft_cost,
    measured_crossover,
    parse_metrics,
    read_bench_results,
)
from specdec_lab.vllm.examples import (
    EXAMPLE_BENCH_RESULTS,
    EXAMPLE_REAL_LOG,
    EXAMPLE_REAL_LOG_SOURCE,
    EXAMPLE_METRICS,
    EXAMPLE_TAIL_COLLAPSE,
    EXAMPLE_TREE_ACCURACY,
)
from support.lesson_text import lesson, says, table
from support.lossless_runs import correct_sampling, diluted_runs, greedy, lookup_table, models, sampling

ROOT = Path(__file__).resolve().parents[1]
LOSSLESS = lesson("lossless-lab.md")
YOUR_GPU = lesson("your-gpu.md")


def stored_outputs(notebook):
    """All text the notebook stores as outputs (what the 實驗場 shows before it runs): what it
    printed, and the text form of what it displayed (a table's text, next to its HTML)."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return "".join("".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")) + "\n"
                   for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []))


def cell_source(notebook, tag):
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    return next("".join(c["source"]) for c in nb["cells"] if tag in c.get("metadata", {}).get("tags", []))


def superscript(n: int) -> str:
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def lesson_p(p: float) -> str:
    """A p-value as the lesson's tables print it: 0.51, 1.3 × 10⁻⁴⁸, < 10⁻³⁰⁰."""
    if p < 1e-300:
        return "< 10⁻³⁰⁰"
    if p >= 0.01:
        return f"{p:.2f}"
    mantissa, exponent = f"{p:.1e}".split("e")
    return f"{mantissa} × 10{superscript(int(exponent))}"


def lesson_chi2(x: float) -> str:
    return f"{x:,.0f}" if x >= 1000 else f"{x:.1f}"


# =============================================================================================
# lessons/lossless-lab.md
# =============================================================================================

L = "lossless-lab.md"


def test_the_models_and_the_corpus():
    target, draft = models()
    says(f"**大模型（target）**：字元 {target.order}-gram。它看前 {target.context_length} 個字", LOSSLESS, L)
    says(f"**草稿（draft）**：字元 {draft.order}-gram。它只看前 {draft.context_length} 個字", LOSSLESS, L)
    assert round(len(CORPUS), -3) == 1000
    says("約一千字", LOSSLESS, L)


def test_a_greedy_counts():
    checks = [greedy(k) for k in (1, 4, 8)]
    prompts, n_tokens = checks[0].prompts, checks[0].n_tokens
    slices = inspect.signature(lx.greedy_prompts).parameters
    width, stride = slices["width"].default, slices["stride"].default
    assert len(set(lx.greedy_prompts())) == prompts
    says(f"實驗場從語料每段每隔 {stride} 個字取一段 {width} 個字，去掉重複，得到 {prompts} 個 prompt，"
         f"各寫 {n_tokens} 個字，K 分別取 1、4、8", LOSSLESS, L)
    identical = {c.identical for c in checks}
    assert len(identical) == 1, "the lesson says all three K give the same count"
    says(f"三種 K 都是 **{identical.pop()} / {prompts} 完全相同**", LOSSLESS, L)
    out = stored_outputs("lossless.ipynb")
    for c in checks:
        says(str(c), out, "lossless.ipynb")


def test_b_sampling_setup():
    (_, repeats), *_ = lx.VERIFIERS.values()
    lines = len(lx.corpus_lines())
    says(f"用語料 {lines} 段的開頭當 prompt，每個開頭換 {repeats} 個亂數種子，各寫 {lx.N_TOKENS} 個字"
         f"（溫度 {lx.TEMPERATURE:g}、K = {lx.K}），共約一萬六千字", LOSSLESS, L)
    assert round(lines * repeats * lx.N_TOKENS, -3) == 16_000
    min_visits = inspect.signature(transition_test).parameters["min_visits"].default
    says(f"挑出所有出現至少 {min_visits} 次的「前 3 個字」", LOSSLESS, L)
    says(f"期望次數不到 {MIN_EXPECTED:g} 的字併成「其他」", LOSSLESS, L)
    assert lx.VERIFIERS["錯誤：被拒後從 p 重抽"][1] == 2 * repeats  # "給它兩倍的字" in the notebook
    says("第二種錯法的偏差較小，給它兩倍，約三萬二千字", LOSSLESS, L)
    assert round(lines * lx.VERIFIERS["錯誤：被拒後從 p 重抽"][1] * lx.N_TOKENS, -3) == 32_000


def test_b_chi_square_table():
    rows = table(LOSSLESS, "| 驗證規則（檢定字數） |")
    labels = ["正確", "錯誤：q ≥ p 就收", "錯誤：被拒後從 p 重抽"]
    assert len(rows) == len(lx.VERIFIERS) == len(labels)
    for row, name, label in zip(rows, lx.VERIFIERS, labels):
        assert name.startswith(label), "the rows follow VERIFIERS"
        test = sampling(name).test
        expected = [f"{label}（{test.tokens:,} 字）", f"{lesson_chi2(test.statistic)} / {test.dof}",
                    lesson_p(test.p_value)]
        assert row == expected, f"χ² table, {name}: lesson {row}, package {expected}"
    assert correct_sampling().test.p_value > 0.05  # "一個平凡的 p 值"
    out = stored_outputs("lossless.ipynb")
    for name in lx.VERIFIERS:
        says(str(sampling(name)), out, "lossless.ipynb")


def test_b_the_drawn_context_is_one_of_many():
    """The figure draws the correct rule's first context: lesson and notebook say its own p and
    how far its most over-drawn character is from the expected count ("近一倍")."""
    context, visits, result = correct_sampling().test.per_context[0]
    says(f"畫出來的「{context}」那組 p = {result.p_value:.2f}", LOSSLESS, L)
    nb = json.loads((ROOT / "notebooks" / "lossless.ipynb").read_text(encoding="utf-8"))
    markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    says(f"這一組的 p 約 {result.p_value:.2f}", markdown, "lossless.ipynb")
    ratios = {str(label): o / e for label, o, e in zip(result.labels, result.observed, result.expected)
              if str(label) != "其他"}
    top = max(ratios, key=ratios.get)
    assert 1.7 < ratios[top] < 2.0, ratios
    says(f"其中「{top}」比期望多了近一倍", LOSSLESS, L)
    assert result.p_value > 0.01 and correct_sampling().test.p_value > 0.05


def test_c_alpha_table():
    rows = table(LOSSLESS, "| 草稿（量到的 α） |")
    assert len(rows) == 3
    summaries = {"2-gram": lx.acceptance_summary(correct_sampling().runs)}
    for row in rows[1:]:
        label = re.fullmatch(r"(稀釋版，α 設為 ([0-9.]+))（[0-9.]+）", row[0])
        alpha = float(label[2])
        summaries[label[1]] = lx.acceptance_summary(diluted_runs(alpha), formula_alpha=alpha)
    out = stored_outputs("lossless.ipynb")
    for row, (label, s) in zip(rows, summaries.items()):
        expected = [f"{label}（{s.alpha:.3f}）", f"{s.tokens_per_round:.3f} ± {s.std_error:.3f}", f"{s.closed_form:.3f}"]
        assert row == expected, f"α table, {label}: lesson {row}, package {expected}"
        assert s.k == lx.K
        says(str(s), out, "lossless.ipynb")
        # "離公式值都不到一個標準誤" (diluted) and "也和公式很接近" (2-gram)
        assert abs(s.tokens_per_round - s.closed_form) < s.std_error


def test_d_prompt_lookup_table():
    table_rows = lookup_table()
    assert LOSSLESS.count("| | " + " | ".join(r.task for r in table_rows) + " |") == 1, "tasks are the columns"
    rows = table(LOSSLESS, "| | " + table_rows[0].task)
    expected = [
        ["有猜的輪", *(f"{r.proposed:.1%}" for r in table_rows)],
        ["第 1 格接受率", *(f"{r.first_accepted:.2f}" for r in table_rows)],
        ["每輪前進", *(f"{r.tokens_per_round:.2f}" for r in table_rows)],
    ]
    assert rows == expected, f"prompt lookup table: lesson {rows}, package {expected}"
    says(str(table_rows), stored_outputs("lossless.ipynb"), "lossless.ipynb")  # the notebook shows the same table
    rewrite = table_rows[0]
    assert 0.4 < rewrite.proposed < 0.5  # "將近一半的輪"
    assert round(rewrite.first_accepted, 1) == 0.9  # "約九成第一格就中"
    says("改寫時將近一半的輪都有現成的猜測，而且約九成第一格就中", LOSSLESS, L)
    copy_weight = inspect.signature(lx.prompt_lookup_table).parameters["copy_weight"].default
    match = inspect.signature(CopyingLM).parameters["match"].default
    says(f"最後 {match} 個字在前文出現過時，把 {copy_weight:.0%} 的機率放在當時接在後面的字上", LOSSLESS, L)


# =============================================================================================
# lessons/your-gpu.md
# =============================================================================================

G = "your-gpu.md"
STATS = parse_metrics(EXAMPLE_METRICS)
DRAFT_COST = 0.05  # step 4: "範例在草稿成本 0.05 時"
VERIFY_COST = 0.03  # "每多驗一格要多花 3% 的時間"


def test_printed_rate_is_not_alpha():
    e = float(expected_tokens(0.8, 5))
    says(f"α = 0.8、K = 5 時它只有 {(e - 1) / 5:.2f}", YOUR_GPU, G)


def test_worked_example_table():
    est = estimate_alpha(STATS, draft_cost=DRAFT_COST)
    rows = {r[0]: r[1] for r in table(YOUR_GPU, "| 數字 | 範例的值 |")}
    expected = {
        "驗證輪數 num_drafts": f"{STATS.num_drafts:,}",
        "平均每輪產出 mean_acceptance_length": f"{STATS.mean_acceptance_length:.3f}",
        "vLLM 的 draft acceptance rate": f"{STATS.draft_acceptance_rate:.3f}",
        "α（第 1 個位置的接受率）": f"{est.alpha:.3f} ± {est.alpha_se:.3f}",
        f"條件接受率（第 {'、'.join(str(i) for i in range(1, STATS.num_speculative_tokens + 1))} 格）":
            "、".join(f"{r:.3f}" for r in est.conditional_rates),
        f"公式 1 在 α = {est.alpha:.3f}、K = {est.k_measured}": f"{est.iid_expected_tokens:.3f}",
        "各位置一樣嗎（χ² 檢定）": f"{'一樣' if est.looks_iid else '不一樣'}：χ² = {est.chi2:,.0f}，自由度 {est.dof}",
    }
    assert rows == expected
    says(f"實驗場的範例（K = {STATS.num_speculative_tokens}，一個 engine）", YOUR_GPU, G)
    assert len({'engine="0"' in line for line in EXAMPLE_METRICS.splitlines() if line.startswith("vllm:spec")}) == 1
    # "把 0.529 當成 α，比真正的 0.783 低了約三分之一"
    assert abs((1 - STATS.draft_acceptance_rate / est.alpha) - 1 / 3) < 0.02
    says(f"把 {STATS.draft_acceptance_rate:.3f} 當成 α，比真正的 {est.alpha:.3f} 低了約三分之一", YOUR_GPU, G)
    assert est.iid_expected_tokens > est.mean_acceptance_length
    says(f"把 {est.alpha:.3f} 代進公式 1 得到 {est.iid_expected_tokens:.3f}，又比實測的 "
         f"{est.mean_acceptance_length:.3f} 高", YOUR_GPU, G)
    out = stored_outputs("your_gpu.ipynb")
    says(str(STATS), out, "your_gpu.ipynb")
    says(str(est), out, "your_gpu.ipynb")
    assert f"draft_cost={DRAFT_COST:g}" in cell_source("your_gpu.ipynb", "alpha")


def test_real_log_table():
    """The real log of step 3: the package's reading of EXAMPLE_REAL_LOG, as the lesson prints it."""
    real = parse_metrics(EXAMPLE_REAL_LOG)
    est = estimate_alpha(real, draft_cost=DRAFT_COST)
    k = real.num_speculative_tokens
    says(f"K = {k}）", YOUR_GPU, G)
    says(f"兩行相加是 {real.num_drafts:,} 輪、{real.num_accepted_tokens:,} 個被收下的草稿字", YOUR_GPU, G)
    rows = {r[0]: r[1] for r in table(YOUR_GPU, "| 數字 | 這份 log 的值 |")}
    assert rows == {
        "vLLM 的 draft acceptance rate": f"{real.draft_acceptance_rate:.3f}",
        "α（第 1 個位置的接受率）": f"{est.alpha:.3f} ± {est.alpha_se:.3f}",
        f"條件接受率（第 1 到 {k} 格）": "、".join(f"{r:.3f}" for r in est.conditional_rates),
        "實測平均每輪產出": f"{real.mean_acceptance_length:.3f}",
        f"公式 1 在 α = {est.alpha:.3f}、K = {k}": f"{est.iid_expected_tokens:.3f}",
    }
    assert real.draft_acceptance_rate < est.alpha / 2  # "不到 α 的一半"
    assert est.iid_expected_tokens - real.mean_acceptance_length > 0.5  # "多算了半個字以上"
    later = est.conditional_rates[1:]
    assert later.min() >= 0.5 and later.max() <= 0.65 and later.max() < est.alpha  # "大致停在 0.5 到 0.65 之間"
    out = stored_outputs("your_gpu.ipynb")
    says(EXAMPLE_REAL_LOG_SOURCE, out, "your_gpu.ipynb")
    says(str(real), out, "your_gpu.ipynb")
    says(str(est), out, "your_gpu.ipynb")
    assert f"draft_cost={DRAFT_COST:g}" in cell_source("your_gpu.ipynb", "real-alpha")


def test_recommended_k():
    est = estimate_alpha(STATS, draft_cost=DRAFT_COST)
    assert est.method == "positional" and est.recommended_k == est.k_measured  # "最多就是 3"
    says(f"範例在草稿成本 {DRAFT_COST:g} 時建議 K = {est.recommended_k}，預估加速約 {est.expected_speedup:.2f} 倍。"
         f"範例只量了 {est.k_measured} 個位置，而且各位置明顯不同", YOUR_GPU, G)


def test_tail_collapse():
    rates = ", ".join(f"{r:g}" for r in EXAMPLE_TAIL_COLLAPSE[:4]).replace(", ", "、")
    after = "、".join(f"{r:g}" for r in EXAMPLE_TAIL_COLLAPSE[4:7])
    first_drop = int(np.argmax(np.diff(EXAMPLE_TAIL_COLLAPSE) < -0.1)) + 2  # position where it falls
    says(f"從第 {first_drop} 格開始崩塌的並行草稿（條件接受率 {rates}，接著掉到 {after}……）", YOUR_GPU, G)
    says(f"每多驗一格要多花 {VERIFY_COST:.0%} 的時間", YOUR_GPU, G)
    ks, s = positional_speedups(EXAMPLE_TAIL_COLLAPSE, VERIFY_COST)
    best = int(np.argmax(s))
    says(f"崩塌那條線在驗到第 {ks[best]} 格時最划算，約 {s[best]:.2f} 倍", YOUR_GPU, G)
    says(f"驗滿 {ks[-1]} 格只剩約 {s[-1]:.2f} 倍", YOUR_GPU, G)
    alpha = estimate_alpha(STATS).alpha
    iid_ks, iid = positional_speedups([alpha] * len(EXAMPLE_TAIL_COLLAPSE), VERIFY_COST)
    says(f"同樣 α = {alpha:.2f} 的 i.i.d. 草稿則一路划算到第 {iid_ks[np.argmax(iid)]} 格", YOUR_GPU, G)
    assert f"draft_cost={VERIFY_COST:g}" in cell_source("your_gpu.ipynb", "positional")
    assert "EXAMPLE_TAIL_COLLAPSE" in cell_source("your_gpu.ipynb", "positional")


def test_tree_table():
    acc = EXAMPLE_TREE_ACCURACY
    says(f"第 1 格的第 1 名猜中 {acc[0][0]:g}、第 2 名 {acc[0][1]:g}", YOUR_GPU, G)
    rows = table(YOUR_GPU, "| 形狀 | 每輪產出 |")
    chain_row, *tree_rows = rows
    depth = len(acc)
    chain = expected_tokens_tree(list(range(-1, depth - 1)), [row[0] for row in acc])
    assert chain_row == [f"鏈，{depth} 個候選", f"{chain:.2f}", f"{(chain - 1) / depth:.3f}"]
    says("表中的「鏈」每格只送第 1 名，「樹」是同樣候選數裡最划算的樹", YOUR_GPU, G)
    trees = {}
    for row in tree_rows:
        n = int(re.fullmatch(r"樹，(\d+) 個候選", row[0])[1])
        trees[n] = expected_tokens_tree(*tree_from_choices(best_tree(acc, n), acc))
        assert row == [row[0], f"{trees[n]:.2f}", f"{(trees[n] - 1) / n:.3f}"], f"tree table, {n} nodes"
    # "它把鏈的第 4 格 … 換成第 1 格的第 2 名"
    chain_nodes = [(0,) * d for d in range(1, depth + 1)]
    assert best_tree(acc, depth) == chain_nodes[:-1] + [(1,)]
    last = math.prod(row[0] for row in acc)
    says(f"它把鏈的第 {depth} 格（路徑機率 {' × '.join(f'{row[0]:.2f}' for row in acc)} ≈ {last:.3f}）"
         f"換成第 1 格的第 2 名（{acc[0][1]:g}）", YOUR_GPU, G)
    shown = tree_table(acc, sizes=list(trees))  # the notebook's table: the lesson's rows, word for word
    assert [list(r) for r in shown.rows] == rows and shown.headers == ("形狀", "每輪產出", "每個候選換到")
    says(str(shown), stored_outputs("your_gpu.ipynb"), "your_gpu.ipynb")
    assert f"sizes={tuple(trees)}" in cell_source("your_gpu.ipynb", "tree")
    small, big = min(trees), max(trees)
    says(f"從 {small} 個加到 {big} 個，每輪只從 {trees[small]:.2f} 變成 {trees[big]:.2f}", YOUR_GPU, G)
    out = stored_outputs("your_gpu.ipynb")
    says(f"最划算的 {depth} 個節點：{best_tree(acc, depth)}", out, "your_gpu.ipynb")


def test_crossover_and_max_num_seqs():
    runs = read_bench_results(EXAMPLE_BENCH_RESULTS)
    sweep = bench_sweep(runs=runs)
    n_star = measured_crossover(sweep)
    says(f"範例資料的交叉點約在 {round(n_star)} 人", YOUR_GPU, G)
    max_num_seqs = int(sweep.concurrency[sweep.concurrency <= n_star].max())
    says(f"（範例是 {max_num_seqs}。", YOUR_GPU, G)
    at = list(sweep.concurrency).index(max_num_seqs)
    says(f"開和關的總產能比是 {sweep.throughput_on[at] / sweep.throughput_off[at]:.2f}×", YOUR_GPU, G)
    lower = int(sweep.concurrency[sweep.concurrency < max_num_seqs].max())
    says(f"就取再低一格的 {lower}）", YOUR_GPU, G)
    says(f"實測交叉點 ≈ {n_star:.1f}", stored_outputs("your_gpu.ipynb"), "your_gpu.ipynb")
    on1 = next(r for r in runs if r.speculative and r.max_concurrency == 1)
    off1 = next(r for r in runs if not r.speculative and r.max_concurrency == 1)
    cost = estimate_draft_cost(on1, off1)
    assert cost > DRAFT_COST  # "比步驟 4 先填的 0.05 高一點"
    est = estimate_alpha(STATS, draft_cost=cost)
    says(f"用併發 1 那一對量出的草稿成本約 {cost:.3f}，比步驟 4 先填的 {DRAFT_COST:g} 高一點，"
         f"放回去後建議的 K 仍是 {est.recommended_k}，預估加速降為約 {est.expected_speedup:.2f} 倍", YOUR_GPU, G)
    assert est.expected_speedup < estimate_alpha(STATS, draft_cost=DRAFT_COST).expected_speedup
