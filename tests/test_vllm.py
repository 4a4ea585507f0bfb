"""specdec_lab.vllm against fixtures in vLLM's exact formats (tests/fixtures/vllm/make_fixtures.py).

The fixture numbers are simulated (no GPU here); the formats are vLLM's: Prometheus text rendered
by prometheus_client from counters registered as vllm/v1/spec_decode/metrics.py registers them,
the log message of SpecDecodingLogging.log, and the keys of vllm bench serve --save-result.
"""
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from specdec_lab import best_k, expected_tokens, expected_tokens_positional, serving_curves, speedup
from specdec_lab.vllm import (
    BenchRun,
    bench_sweep,
    estimate_alpha,
    estimate_draft_cost,
    max_num_seqs_advice,
    measured_crossover,
    on_off_pair,
    parse_metrics,
    read_bench_results,
)

FIXTURES = Path(__file__).parent / "fixtures" / "vllm"
BENCH = sorted((FIXTURES / "bench").glob("*.json"))


def fixture(name):
    return (FIXTURES / name).read_text()


def reference_counts(text):
    """The same counters read with prometheus_client's own parser, summed over label sets."""
    totals, per_pos = {}, {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if not sample.name.startswith("vllm:spec_decode_") or not sample.name.endswith("_total"):
                continue
            name = sample.name[: -len("_total")]
            if name.endswith("_per_pos"):
                pos = int(sample.labels["position"])
                per_pos[pos] = per_pos.get(pos, 0) + int(sample.value)
            else:
                totals[name] = totals.get(name, 0) + int(sample.value)
    return totals, [per_pos[i] for i in range(len(per_pos))]


# --- /metrics -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["metrics_falling_k3.txt", "metrics_iid_k4_two_engines.txt", "metrics_ngram_short_drafts_k5.txt"]
)
def test_counts_match_prometheus_clients_own_parser(name):
    text = fixture(name)
    stats = parse_metrics(text)
    totals, per_pos = reference_counts(text)
    assert stats.num_drafts == totals["vllm:spec_decode_num_drafts"]
    assert stats.num_draft_tokens == totals["vllm:spec_decode_num_draft_tokens"]
    assert stats.num_accepted_tokens == totals["vllm:spec_decode_num_accepted_tokens"]
    assert list(stats.accepted_per_position) == per_pos
    assert stats.source == "metrics" and stats.num_drafts_uncertainty == 0


def test_two_engines_are_summed():
    text = fixture("metrics_iid_k4_two_engines.txt")
    engine0 = "\n".join(line for line in text.splitlines() if 'engine="1"' not in line)
    engine1 = "\n".join(line for line in text.splitlines() if 'engine="0"' not in line)
    both, a, b = parse_metrics(text), parse_metrics(engine0), parse_metrics(engine1)
    assert a.num_drafts > 0 and b.num_drafts > 0
    assert both.num_drafts == a.num_drafts + b.num_drafts
    assert both.num_accepted_tokens == a.num_accepted_tokens + b.num_accepted_tokens
    assert both.accepted_per_position == tuple(x + y for x, y in zip(a.accepted_per_position, b.accepted_per_position))


def test_derived_quantities_follow_vllms_definitions():
    stats = parse_metrics(fixture("metrics_falling_k3.txt"))
    totals, per_pos = reference_counts(fixture("metrics_falling_k3.txt"))
    drafts = totals["vllm:spec_decode_num_drafts"]
    accepted = totals["vllm:spec_decode_num_accepted_tokens"]
    assert stats.mean_acceptance_length == 1 + accepted / drafts
    assert stats.draft_acceptance_rate == accepted / totals["vllm:spec_decode_num_draft_tokens"]
    assert 0 < stats.draft_acceptance_rate < 1  # a fraction, not vLLM's printed percent
    np.testing.assert_allclose(stats.per_position_acceptance, np.array(per_pos) / drafts)
    assert stats.num_speculative_tokens == 3


def test_without_total_suffix_and_without_other_metrics():
    text = fixture("metrics_iid_k4_two_engines.txt")
    bare = re.sub(r"^(vllm:spec_decode_\w+?)_total", r"\1", text, flags=re.M)
    assert "_total{" not in "".join(l for l in bare.splitlines() if l.startswith("vllm:spec"))
    only_spec = "\n".join(l for l in text.splitlines() if l.startswith("vllm:spec_decode_") and "_total" in l)
    assert parse_metrics(bare) == parse_metrics(text) == parse_metrics(only_spec)


def test_colour_codes_and_windows_line_ends_are_tolerated():
    text = fixture("metrics_falling_k3.txt")
    assert parse_metrics(text.replace("\n", "\r\n")) == parse_metrics(text)


@pytest.mark.parametrize(
    "text, words",
    [
        (fixture("metrics_no_spec.txt"), ["vllm:spec_decode_num_drafts", "--speculative-config"]),
        ("", ["vllm:spec_decode_num_drafts", "空字串"]),
        ('{"max_concurrency": 4}', ["read_bench_results"]),
        ("<html>Not Found</html>", ["SpecDecoding metrics:"]),
    ],
)
def test_no_counters_says_what_was_expected(text, words):
    with pytest.raises(ValueError) as err:
        parse_metrics(text)
    for word in words:
        assert word in str(err.value)
    assert "預期" in str(err.value)


def test_not_a_string():
    with pytest.raises(ValueError, match="text 必須是字串"):
        parse_metrics(b"vllm:spec_decode_num_drafts_total 3")


def _drop(text, pattern):
    return "\n".join(l for l in text.splitlines() if not re.search(pattern, l))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: _drop(t, r"^vllm:spec_decode_num_drafts_total"), "缺少 vllm:spec_decode_num_drafts"),
        (lambda t: _drop(t, r"^vllm:spec_decode_num_accepted_tokens_total"), "缺少 vllm:spec_decode_num_accepted_tokens"),
        (lambda t: _drop(t, r'position="1"'), "連續"),
        (lambda t: t + "\n" + re.sub(r"(vllm:spec_decode_num_drafts_total\{[^}]*\}) (\S+)", r"\1 1\2",
                                      next(l for l in t.splitlines() if l.startswith("vllm:spec_decode_num_drafts_total"))),
         "兩次不同時間"),
        (lambda t: re.sub(r"(vllm:spec_decode_num_accepted_tokens_total\{[^}]*\}) \S+", r"\1 999999.0", t), "矛盾"),
        (lambda t: re.sub(r"(vllm:spec_decode_num_drafts_total\{[^}]*\}) \S+", r"\1 12.5", t), "非負整數"),
        (lambda t: re.sub(r"(vllm:spec_decode_num_drafts_total\{[^}]*\}) \S+", r"\1 NaN", t), "非負整數"),
        (lambda t: re.sub(r"(vllm:spec_decode_num_drafts_total\{[^}]*\}) \S+", r"\1 twelve", t), "看不懂"),
        (lambda t: t.replace('position="0"', "position=0"), "標籤看不懂"),
        (lambda t: t.replace('position="2"', 'position="two"'), "position 標籤必須是整數"),
        (lambda t: re.sub(r"(vllm:spec_decode_num_\w+_total\{[^}]*\}) \S+", r"\1 0.0", t), "num_drafts = 0"),
    ],
)
def test_partial_or_malformed_scrapes_are_refused(edit, message):
    with pytest.raises(ValueError, match=message):
        parse_metrics(edit(fixture("metrics_falling_k3.txt")))


def test_per_position_counter_is_optional_for_parsing_but_needed_for_alpha():
    stats = parse_metrics(_drop(fixture("metrics_falling_k3.txt"), r"_per_pos"))
    assert stats.num_speculative_tokens == 0 and stats.mean_acceptance_length > 1
    with pytest.raises(ValueError, match="per_pos"):
        estimate_alpha(stats)


# --- the log line ---------------------------------------------------------------------------


def test_log_lines_add_up_to_the_same_run():
    """The log fixture prints the metrics fixture's run in six 10-second intervals."""
    log, scrape = parse_metrics(fixture("log_falling_k3.txt")), parse_metrics(fixture("metrics_falling_k3.txt"))
    assert log.source == "log"
    assert log.num_draft_tokens == scrape.num_draft_tokens  # printed exactly
    assert log.num_accepted_tokens == scrape.num_accepted_tokens
    assert abs(log.num_drafts - scrape.num_drafts) <= log.num_drafts_uncertainty
    # each line's per-position rates are rounded to 3 decimals: counts off by ≤ 0.0005 × drafts
    slack = 6 * (0.0005 * scrape.num_drafts / 6 + 1) + log.num_drafts_uncertainty
    assert np.all(np.abs(np.subtract(log.accepted_per_position, scrape.accepted_per_position)) <= slack)
    assert abs(log.mean_acceptance_length - scrape.mean_acceptance_length) < 0.005


def test_one_small_log_line_is_exact():
    line = ("INFO 11-30 10:42:00 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.37, "
            "Accepted throughput: 12.30 tokens/s, Drafted throughput: 27.00 tokens/s, Accepted: 123 tokens, "
            "Drafted: 270 tokens, Per-position acceptance rate: 0.778, 0.489, 0.100, "
            "Avg Draft acceptance rate: 45.6%")
    stats = parse_metrics(line)
    assert (stats.num_drafts, stats.num_drafts_uncertainty) == (90, 0)
    assert stats.accepted_per_position == (70, 44, 9)


def test_log_line_with_colour_codes_and_older_field_order():
    line = ("\x1b[32mINFO\x1b[0m 05-02 09:00:00 metrics.py:80] SpecDecoding metrics: Draft acceptance rate: 45.6%, "
            "Mean acceptance length: 2.37, Accepted: 123 tokens, Drafted: 270 tokens, "
            "Per-position acceptance rate: 0.778, 0.489, 0.100")
    assert parse_metrics(line).accepted_per_position == (70, 44, 9)


@pytest.mark.parametrize(
    "line, message",
    [
        ("SpecDecoding metrics: Draft acceptance rate: 51.2%, Accepted: 123 tokens, Drafted: 240 tokens",
         "Mean acceptance length"),
        ("SpecDecoding metrics: Mean acceptance length: 2.62, Accepted: 123 tokens, Drafted: 270 tokens, "
         "Per-position acceptance rate: 0.778, 0.900, 0.100", "矛盾"),
        ("SpecDecoding metrics: Mean acceptance length: 3.90, Accepted: 123 tokens, Drafted: 270 tokens, "
         "Per-position acceptance rate: 0.778, 0.489, 0.100", "矛盾"),
        ("SpecDecoding metrics: Mean acceptance length: nan, Accepted: 0 tokens, Drafted: 0 tokens, "
         "Per-position acceptance rate: nan, nan", "Drafted 是 0"),
    ],
)
def test_bad_log_lines(line, message):
    with pytest.raises(ValueError, match=message):
        parse_metrics(line)


def test_log_lines_from_two_different_k_are_refused():
    a = ("SpecDecoding metrics: Mean acceptance length: 2.37, Accepted: 123 tokens, Drafted: 270 tokens, "
         "Per-position acceptance rate: 0.778, 0.489, 0.100")
    b = ("SpecDecoding metrics: Mean acceptance length: 2.00, Accepted: 10 tokens, Drafted: 20 tokens, "
         "Per-position acceptance rate: 0.600, 0.400")
    with pytest.raises(ValueError, match="k"):
        parse_metrics(a + "\n" + b)


# --- estimate_alpha -------------------------------------------------------------------------


def test_falling_acceptance_is_not_iid_and_rates_are_recovered():
    est = estimate_alpha(parse_metrics(fixture("metrics_falling_k3.txt")))
    truth = np.array([0.78, 0.66, 0.55])  # the simulation's conditional rates
    assert np.all(np.abs(est.conditional_rates - truth) < 5 * est.conditional_se)
    assert est.alpha == est.conditional_rates[0]
    assert not est.looks_iid and est.p_value < 1e-6 and est.dof == 2
    # the positional formula reproduces the measured E exactly (full-length drafts)
    assert expected_tokens_positional(est.conditional_rates) == pytest.approx(est.mean_acceptance_length, rel=1e-12)
    assert est.iid_expected_tokens > est.mean_acceptance_length  # Eq. 1 at α overestimates a falling tail


def test_iid_acceptance_is_recognised_and_the_printed_rate_is_not_alpha():
    stats = parse_metrics(fixture("metrics_iid_k4_two_engines.txt"))
    est = estimate_alpha(stats)
    assert est.looks_iid and est.p_value > 0.01
    assert abs(est.alpha - 0.7) < 5 * est.alpha_se
    k = stats.num_speculative_tokens
    # vLLM's rate is (E − 1)/k, far below α
    e = float(expected_tokens(0.7, k))
    se = math.sqrt(stats.num_draft_tokens) ** -1 * 2  # generous: binomial SE of a rate over ≥ drafted/2 trials
    assert abs(stats.draft_acceptance_rate - (e - 1) / k) < 5 * se
    assert est.alpha - stats.draft_acceptance_rate > 0.2
    # said so, the formula kept on one line (no-break spaces: a phone's output area broke it)
    assert f"= {stats.draft_acceptance_rate:.3f} = (E\u00a0−\u00a01)/K，不是 α" in str(est)


def test_iid_check_rejects_at_its_nominal_rate_under_iid_acceptance():
    """Under i.i.d. acceptance the χ² check should reject about `significance` of the time."""
    rng = np.random.default_rng(11)
    trials, drafts, k, alpha = 600, 2000, 4, 0.7
    rejected = 0
    for _ in range(trials):
        accepted = np.minimum(rng.geometric(1 - alpha, size=drafts) - 1, k)
        per_pos = tuple(int((accepted > i).sum()) for i in range(k))
        stats = _stats(drafts, drafts * k, int(accepted.sum()), per_pos)
        rejected += not estimate_alpha(stats, significance=0.05).looks_iid
    rate, se = rejected / trials, math.sqrt(0.05 * 0.95 / trials)
    assert abs(rate - 0.05) < 5 * se


def _stats(drafts, drafted, accepted, per_pos):
    from specdec_lab.vllm import SpecDecodeStats
    return SpecDecodeStats(drafts, drafted, accepted, per_pos)


def test_recommended_k_iid_uses_eq1_and_positional_uses_measured_rates():
    iid = estimate_alpha(parse_metrics(fixture("metrics_iid_k4_two_engines.txt")), draft_cost=0.05)
    assert iid.method == "iid" and iid.recommended_k == best_k(iid.alpha, 0.05)
    assert iid.expected_speedup == pytest.approx(speedup(iid.alpha, iid.recommended_k, 0.05))
    falling = estimate_alpha(parse_metrics(fixture("metrics_falling_k3.txt")), draft_cost=0.3)
    rates = falling.conditional_rates
    brute = [expected_tokens_positional(rates[:k]) / (1 + k * 0.3) for k in (1, 2, 3)]
    assert falling.method == "positional" and falling.recommended_k == 1 + int(np.argmax(brute))
    assert falling.expected_speedup == pytest.approx(max(brute))
    assert falling.knee_k <= falling.recommended_k
    ks, s = falling.speedups()
    assert list(ks) == [1, 2, 3] and s.max() == pytest.approx(max(brute))
    assert "建議 K" in str(falling) and "不是 α" in str(falling)


def test_the_knee_is_said_only_where_it_is_below_the_recommended_k():
    """your_gpu read "建議 K = 3 …；曲線在 K = 3 已達最高點的 95%", which a reviewer read as a second,
    different advice: the knee is named only when a smaller K already gives 95 % of the best."""
    from specdec_lab.vllm.examples import EXAMPLE_METRICS, EXAMPLE_REAL_LOG
    same = estimate_alpha(parse_metrics(EXAMPLE_METRICS), draft_cost=0.05)
    assert same.knee_k == same.recommended_k == 3
    assert str(same).splitlines()[-1].endswith("實測各位置接受率）")
    below = estimate_alpha(parse_metrics(EXAMPLE_REAL_LOG), draft_cost=0.05)
    assert (below.knee_k, below.recommended_k) == (3, 4)
    assert str(below).splitlines()[-1].endswith("；K = 3 就已有最高加速的 95%，再往上每多猜一個只多一點")


def test_short_ngram_drafts_are_flagged():
    est = estimate_alpha(parse_metrics(fixture("metrics_ngram_short_drafts_k5.txt")))
    assert not est.full_length_drafts
    assert "不滿 K 個" in str(est)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"draft_cost": -0.1}, "draft_cost"), ({"draft_cost": float("nan")}, "draft_cost"),
     ({"significance": 1.5}, "significance"), ({"k_max": 0}, "k_max")],
)
def test_estimate_alpha_bad_input(kwargs, message):
    stats = parse_metrics(fixture("metrics_falling_k3.txt"))
    with pytest.raises(ValueError, match=message):
        estimate_alpha(stats, **kwargs)
    with pytest.raises(ValueError, match="parse_metrics"):
        estimate_alpha({"num_drafts": 3})


# --- vllm bench serve --save-result ----------------------------------------------------------


def test_bench_files_are_read_with_percent_converted():
    runs = read_bench_results(BENCH)
    assert len(runs) == 16
    on = [r for r in runs if r.speculative]
    assert len(on) == 8
    for r in on:
        raw = json.loads(Path(FIXTURES / "bench" / r.source).read_text())
        assert r.spec_decode_acceptance_rate == raw["spec_decode_acceptance_rate"] / 100
        assert r.spec_decode_acceptance_rate == pytest.approx(
            raw["spec_decode_accepted_tokens"] / raw["spec_decode_draft_tokens"])
        assert r.per_user_tokens_per_s == pytest.approx(1000 / raw["mean_tpot_ms"])


def test_sweep_and_measured_crossover_on_the_fixture():
    sweep = bench_sweep(runs=read_bench_results(BENCH))
    assert list(sweep.concurrency) == [1, 2, 4, 8, 16, 32, 64, 128]
    n_star = measured_crossover(sweep)
    ratio = sweep.throughput_ratio
    j = int(np.flatnonzero(ratio < 1)[0])
    assert sweep.concurrency[j - 1] <= n_star <= sweep.concurrency[j]
    # the fixture was simulated from the course's serving model, whose crossover is ≈ 31.2 users
    assert 16 < n_star < 64
    assert measured_crossover(sweep, "per_user") > 16


def test_crossover_interpolates_in_log_concurrency():
    def run(n, thr, on):
        return BenchRun(n, thr, 10.0, 50.0, 10, 0, on, source=f"{n}{on}")
    on = [run(1, 150, True), run(2, 240, True), run(4, 320, True), run(8, 500, True)]
    off = [run(1, 100, False), run(2, 200, False), run(4, 400, False), run(8, 600, False)]
    sweep = bench_sweep(on=on, off=off)
    # ratios 1.5, 1.2, 0.8: the crossing sits halfway between log2 1 and log2 2 … i.e. at 2^1.5
    assert measured_crossover(sweep) == pytest.approx(2 ** 1.5)
    never = bench_sweep(on=[run(1, 200, True), run(2, 400, True)], off=[run(1, 100, False), run(2, 200, False)])
    assert measured_crossover(never) == math.inf
    always = bench_sweep(on=[run(1, 90, True), run(2, 150, True)], off=[run(1, 100, False), run(2, 200, False)])
    assert measured_crossover(always) == 0.0


def test_max_num_seqs_advice_takes_the_highest_concurrency_below_the_crossover():
    def run(n, thr, on):
        return BenchRun(n, thr, 10.0, 50.0, 10, 0, on, source=f"{n}{on}")

    def sweep(*ratios):
        n = [2 ** i for i in range(len(ratios))]
        return bench_sweep(on=[run(c, 100 * r, True) for c, r in zip(n, ratios)],
                           off=[run(c, 100, False) for c in n])

    advice = max_num_seqs_advice(sweep(1.5, 1.2, 0.8))            # crossover between 2 and 4
    assert (advice.value, advice.ratio, advice.with_margin, advice.beyond_sweep) == (2, pytest.approx(1.2), None, False)
    assert str(advice) == "開著投機解碼時，--max-num-seqs 可設為 2（那裡總產能開 ÷ 關 = 1.20×）"
    near = max_num_seqs_advice(sweep(1.5, 1.02, 0.8))             # break-even at 2: one step lower too
    assert (near.value, near.with_margin, near.margin_ratio) == (2, 1, pytest.approx(1.5))
    assert "幾乎就在交叉點上" in str(near) and "再低一格的 1，那裡是 1.50×" in str(near)
    beyond = max_num_seqs_advice(sweep(1.5, 1.2))                 # never crossed: the top, and say so
    assert (beyond.value, beyond.beyond_sweep) == (2, True) and "再往上量" in str(beyond)
    never = max_num_seqs_advice(sweep(0.9, 0.8))
    assert never.value is None and str(never) == "量到的最低併發就已經不划算：建議關掉投機解碼"
    with pytest.raises(ValueError, match="bench_sweep"):
        max_num_seqs_advice([1, 2])


def test_max_num_seqs_advice_on_the_fixture_agrees_with_the_crossover():
    sweep = bench_sweep(runs=read_bench_results(BENCH))
    advice = max_num_seqs_advice(sweep)
    n_star = measured_crossover(sweep)
    assert advice.value <= n_star < 2 * advice.value and advice.ratio >= 1.0
    lower = sweep.concurrency[sweep.concurrency < advice.value]
    assert (advice.with_margin is not None) == (advice.ratio < 1.05)
    if advice.with_margin is not None:
        assert advice.with_margin == lower.max()


def test_on_off_pair_finds_both_sides_or_says_which_is_missing():
    runs = read_bench_results(BENCH)
    on, off = on_off_pair(runs)
    assert on.speculative and not off.speculative and on.max_concurrency == off.max_concurrency == 1
    assert on_off_pair(runs, concurrency=8)[0].max_concurrency == 8
    only_on = [r for r in runs if r.speculative]
    with pytest.raises(ValueError, match=r"沒有投機解碼關、max_concurrency = 1 的結果（關的有：\[\]）"):
        on_off_pair(only_on)
    with pytest.raises(ValueError, match=r"max_concurrency = 3 .*--max-concurrency 3"):
        on_off_pair(runs, concurrency=3)
    with pytest.raises(ValueError, match="concurrency"):
        on_off_pair(runs, concurrency=0)


def test_draft_cost_is_recovered_from_a_noise_free_pair():
    alpha, k, cost, t = 0.7, 4, 0.06, 0.012
    curves = serving_curves(np.array([1.0]), alpha, k, cost)
    on = BenchRun(1, curves.throughput_on[0] / t, 1000 * t / curves.per_user_on[0], 40.0, 10, 0, True,
                  spec_decode_acceptance_rate=0.5, spec_decode_acceptance_length=float(expected_tokens(alpha, k)),
                  spec_decode_per_position_acceptance_rates=(0.7, 0.49, 0.34, 0.24))
    off = BenchRun(1, curves.throughput_off[0] / t, 1000 * t / curves.per_user_off[0], 40.0, 10, 0, False)
    assert estimate_draft_cost(on, off) == pytest.approx(cost, rel=1e-9)
    with pytest.raises(ValueError, match="負的草稿成本"):
        estimate_draft_cost(on, BenchRun(1, 1.0, on.mean_tpot_ms * 3, 40.0, 10, 0, False))
    with pytest.raises(ValueError, match="max_concurrency"):
        estimate_draft_cost(on, BenchRun(2, 1.0, 5.0, 40.0, 10, 0, False))


def test_appended_results_are_separate_runs(tmp_path):
    a, b = (json.loads(p.read_text()) for p in BENCH[:2])
    path = tmp_path / "appended.json"
    path.write_text(json.dumps(a) + "\n" + json.dumps(b))
    runs = read_bench_results(path)
    assert [r.max_concurrency for r in runs] == [a["max_concurrency"], b["max_concurrency"]]
    from dataclasses import replace
    same = [replace(r, source="") for r in runs]
    assert same == [replace(r, source="") for r in read_bench_results(json.dumps(a), b)]


def chosen_with_the_upload_button(files: dict[str, bytes]):
    """An ipywidgets FileUpload's value once these files are chosen in the browser: the state its
    front end sends (each file's bytes as a memoryview buffer), taken in as the widget takes it."""
    from ipywidgets import FileUpload
    button = FileUpload(accept=".json", multiple=True)
    button.set_state({"value": [{"name": name, "type": "application/json", "size": len(data),
                                 "content": memoryview(data), "last_modified": 1764500000000}
                                for name, data in files.items()]})
    return button.value


def test_files_chosen_with_the_notebooks_upload_button_read_as_the_files_do():
    """your_gpu.ipynb §3: read_bench_results(bench_files.value) (the learner's upload) gives what the
    same files read from disk give, each run named by its file."""
    value = chosen_with_the_upload_button({p.name: p.read_bytes() for p in BENCH})
    assert len(value) == len(BENCH) and not isinstance(value[0]["content"], (str, bytes))
    assert read_bench_results(value) == read_bench_results(BENCH)
    assert sorted({r.source for r in read_bench_results(value)}) == sorted(p.name for p in BENCH)


def test_a_bad_upload_is_named_in_its_error():
    with pytest.raises(ValueError, match="上傳的 'latin1.json' 不是 UTF-8"):
        read_bench_results(chosen_with_the_upload_button({"latin1.json": "{\"label\": \"caf\xe9\"}".encode("latin-1")}))
    with pytest.raises(ValueError, match="cut.json 不是完整的 JSON"):
        read_bench_results(chosen_with_the_upload_button({"cut.json": BENCH[0].read_bytes()[:200]}))


def _edited(change):
    obj = json.loads(next(p for p in BENCH if "spec-on" in p.name).read_text())
    change(obj)
    return obj


@pytest.mark.parametrize(
    "obj, message",
    [
        (_edited(lambda o: o.update(max_concurrency=None)), "--max-concurrency"),
        (_edited(lambda o: o.pop("mean_tpot_ms")), "mean_tpot_ms"),
        (_edited(lambda o: o.pop("output_throughput")), "output_throughput"),
        (_edited(lambda o: o.update(completed=0)), "completed = 0"),
        (_edited(lambda o: o.update(spec_decode_acceptance_rate=o["spec_decode_acceptance_rate"] / 100)), "百分比"),
        (_edited(lambda o: o.update(spec_decode_acceptance_rate=140.0)), "百分比"),
        (_edited(lambda o: o.update(mean_tpot_ms=float("nan"))), "有限的數字"),
        (_edited(lambda o: o.update(mean_tpot_ms="5.1")), "有限的數字"),
        (_edited(lambda o: o.update(max_concurrency=2.5)), "整數"),
        (_edited(lambda o: o.update(spec_decode_acceptance_length=0.5)), "≥ 1"),
        (_edited(lambda o: o.pop("spec_decode_acceptance_length")), "spec_decode_acceptance_length"),
    ],
)
def test_bad_bench_results(obj, message):
    with pytest.raises(ValueError, match=message):
        read_bench_results(obj)


def test_truncated_missing_and_empty_files(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text(BENCH[0].read_text()[:200])
    with pytest.raises(ValueError, match="截斷"):
        read_bench_results(cut)
    with pytest.raises(ValueError, match="找不到 bench 結果檔"):
        read_bench_results(tmp_path / "nope.json")
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(ValueError, match="空的"):
        read_bench_results(empty)
    with pytest.raises(ValueError, match="至少一個"):
        read_bench_results()
    with pytest.raises(ValueError, match="JSON 物件"):
        read_bench_results(json.dumps(json.loads(BENCH[0].read_text())) + "\n[1]")


def test_sweep_needs_pairs_and_no_duplicates():
    runs = read_bench_results(BENCH)
    on = [r for r in runs if r.speculative]
    off = [r for r in runs if not r.speculative]
    with pytest.raises(ValueError, match="兩筆 max_concurrency"):
        bench_sweep(on=on + on[:1], off=off)
    with pytest.raises(ValueError, match="至少兩個相同"):
        bench_sweep(on=on[:1], off=off)
    with pytest.raises(ValueError, match="開.*關"):
        bench_sweep(runs=on)
    with pytest.raises(ValueError, match="二選一"):
        bench_sweep(on=on, off=off, runs=runs)
    with pytest.raises(ValueError, match="metric"):
        measured_crossover(bench_sweep(runs=runs), "latency")


# --- real samples other people posted (tests/fixtures/vllm/real, README there) ------------------
# Every expected number below is worked out by hand from the posted text, with the arithmetic
# written out; none is copied from the parser's output.

REAL = FIXTURES / "real"


def real(name):
    """(source URL, text as posted): the first line of each file is '# <url>' and is stripped."""
    first, _, text = (REAL / name).read_text(encoding="utf-8").partition("\n")
    assert first.startswith("# https://"), f"{name}: the first line must be '# <source URL>'"
    return first[2:], text


def test_the_real_samples_are_many_and_each_names_its_source():
    files = sorted(p.name for p in REAL.iterdir() if p.name != "README.md")
    assert len(files) >= 15
    urls = {real(name)[0] for name in files}
    assert all(url.startswith("https://github.com/") for url in urls)
    assert len(urls) >= 12  # from at least a dozen different threads and files


@pytest.mark.parametrize(
    "name, k, draft, emitted, v0_accepted",
    [
        ("v0_k3_issue9539.txt", 3, 13311, 10616, 8547),
        ("v0_k4_issue7301.txt", 4, 53716, 34244, 32594),
        ("v0_k5_cumulative_issue7301.txt", 5, 15, 3, 1),  # the last of two cumulative lines
        ("v0_medusa_k16_issue6768.txt", 16, 51056, 3191, 0),  # "draft tokens tokens", last line
    ],
)
def test_v0_lines_rounds_are_draft_over_k_and_the_prefix_is_emitted_minus_rounds(name, k, draft, emitted, v0_accepted):
    _, text = real(name)
    stats = parse_metrics(text)
    rounds = draft // k  # every V0 round drafts k tokens
    assert draft == rounds * k
    assert stats.source == "log-v0" and stats.num_speculative_tokens == k
    assert (stats.num_drafts, stats.num_draft_tokens) == (rounds, draft)
    assert stats.num_accepted_tokens == emitted - rounds  # accepted prefix, not V0's "accepted"
    assert stats.num_drafts_range is None and stats.accepted_per_position == ()
    assert stats.mean_acceptance_length == pytest.approx(emitted / rounds)
    assert emitted - rounds <= v0_accepted  # V0's count also has tokens matched after a rejection
    if emitted - rounds != v0_accepted:
        assert any(f"{v0_accepted:,}" in note for note in stats.notes)


def test_v0_cumulative_lines_are_never_added_up():
    _, text = real("v0_k5_cumulative_issue7301.txt")
    stats = parse_metrics(text)
    assert stats.num_draft_tokens == 15 and stats.num_draft_tokens != 5 + 15
    assert any("累計" in note and "不相加" in note for note in stats.notes)
    lines = [line for line in text.splitlines() if "Speculative metrics" in line]
    with pytest.raises(ValueError, match="累計值.*不會變小"):
        parse_metrics("\n".join(reversed(lines)))  # later counts smaller: a restart in between


def test_v0_alpha_is_refused_with_the_iid_inference_from_e():
    from specdec_lab.vllm import alpha_from_length

    _, text = real("v0_k3_issue9539.txt")
    stats = parse_metrics(text)
    e = 10616 / 4437  # emitted ÷ rounds
    guess = alpha_from_length(e, 3)
    assert float(expected_tokens(guess, 3)) == pytest.approx(e, abs=1e-9)
    with pytest.raises(ValueError) as err:
        estimate_alpha(stats)
    message = str(err.value)
    assert f"E = {e:.3f}" in message and f"α ≈ {guess:.3f}" in message and "假設" in message


@pytest.mark.parametrize(
    "line, message",
    [
        ("Speculative metrics: Draft acceptance rate: 60.7, System efficiency: 0.510, Number of speculative tokens: 4, "
         "Number of accepted tokens: 32594, Number of draft tokens: 53716, Number of emitted tokens: 34244.", "百分比"),
        ("Speculative metrics: Draft acceptance rate: 0.607, System efficiency: 0.510, Number of speculative tokens: 4, "
         "Number of accepted tokens: 32594, Number of draft tokens: 53717, Number of emitted tokens: 34244.", "倍數"),
        ("Speculative metrics: Draft acceptance rate: 0.607, System efficiency: 0.610, Number of speculative tokens: 4, "
         "Number of accepted tokens: 32594, Number of draft tokens: 53716, Number of emitted tokens: 34244.", "System efficiency"),
        ("Speculative metrics: Draft acceptance rate: 0.607, System efficiency: 0.510, Number of speculative tokens: 4, "
         "Number of accepted tokens: 32594, Number of draft tokens: 53716.", "Number of emitted tokens"),
    ],
)
def test_bad_v0_lines(line, message):
    with pytest.raises(ValueError, match=message):
        parse_metrics(line)


@pytest.mark.parametrize(
    "name, shown, unit",
    [("v1_early_percent_pr15902.txt", "100.0%", "百分比"), ("v1_early_fraction_pr15902.txt", "1.000", "分數，不是百分比")],
)
def test_early_v1_lines_say_what_they_carry_and_what_is_missing(name, shown, unit):
    _, text = real(name)
    with pytest.raises(ValueError) as err:
        parse_metrics(text)
    message = str(err.value)
    assert f"{66 / 66:.3f}" in message and shown in message and unit in message  # accepted 66 ÷ drafted 66
    assert "驗證輪數" in message and "α" in message and "/metrics" in message and "0.8.5" in message


@pytest.mark.parametrize(
    "name, lines",
    [
        # (accepted, drafted, k, per-position rates as printed) for each SpecDecoding line
        ("v1_ngram_k5_pr24127.txt", [(262, 295, 5, [0.983, 0.949, 0.915, 0.881, 0.712])]),
        ("v1_dflash_k15_aeon6.txt", [(89, 975, 15, [0.600, 0.385, 0.215, 0.108, 0.062] + [0.0] * 10)]),
        ("v1_dspark_k7_ascend13640.txt", [(44, 161, 7, [0.739, 0.478, 0.261, 0.174, 0.130, 0.087, 0.043]),
                                          (106, 385, 7, [0.691, 0.418, 0.382, 0.182, 0.127, 0.073, 0.055])]),
        ("v1_mtp_k6_club3090_105.txt", [(489, 1572, 6, [0.740, 0.473, 0.309, 0.187, 0.099, 0.057]),
                                        (455, 1590, 6, [0.728, 0.445, 0.275, 0.151, 0.075, 0.042])]),
        ("v1_mtp_k3_club3090_613.txt", [(598, 951, 3, [0.814, 0.615, 0.457]), (805, 1434, 3, [0.801, 0.546, 0.337])]),
    ],
)
def test_v1_lines_by_hand(name, lines):
    """Each model drafts k tokens every round, so rounds = drafted ÷ k; position i's count is
    rate × rounds rounded; the lines cover separate intervals and add up."""
    _, text = real(name)
    stats = parse_metrics(text)
    rounds = [drafted // k for _, drafted, k, _ in lines]
    assert all(d * k == drafted for d, (_, drafted, k, _) in zip(rounds, lines))
    counts = [[round(r * d) for r in rates] for d, (_, _, _, rates) in zip(rounds, lines)]
    assert all(sum(c) == accepted for c, (accepted, *_) in zip(counts, lines))  # the per-position counts add up
    assert stats.num_drafts == sum(rounds)
    assert stats.num_drafts_range[0] == sum(rounds)  # never below drafted ÷ k
    assert stats.num_draft_tokens == sum(drafted for _, drafted, _, _ in lines)
    assert stats.num_accepted_tokens == sum(accepted for accepted, *_ in lines)
    assert list(stats.accepted_per_position) == [sum(col) for col in zip(*counts)]


def test_the_aeon_line_by_hand():
    """The k = 15 DFlash line, worked out: 975 ÷ 15 = 65 rounds; 1 + 89/65 = 2.369 prints as 2.37;
    0.600 × 65 = 39, 0.385 × 65 = 25.0, 0.215 × 65 = 14.0, 0.108 × 65 = 7.0, 0.062 × 65 = 4.0."""
    stats = parse_metrics(real("v1_dflash_k15_aeon6.txt")[1])
    assert stats.num_drafts == 65 and stats.num_drafts_range == (65, 65)
    assert stats.accepted_per_position == (39, 25, 14, 7, 4) + (0,) * 10
    assert estimate_alpha(stats).alpha == 39 / 65


def test_rounds_range_respects_the_lower_bound_and_is_not_a_symmetric_plus_minus():
    # k = 3, 300 tokens drafted: at least 300 ÷ 3 = 100 rounds and, one token a round at least,
    # at most 300. 1 + 3/D prints 1.01 only for 200 < D ≤ 600, and position 1 = 3/D prints
    # 0.010 only for 286 ≤ D ≤ 315: D runs from 286 to 300.
    line = ("SpecDecoding metrics: Mean acceptance length: 1.01, Accepted: 3 tokens, Drafted: 300 tokens, "
            "Per-position acceptance rate: 0.010, 0.000, 0.000, Avg Draft acceptance rate: 1.0%")
    stats = parse_metrics(line)
    assert stats.num_drafts_range == (286, 300)
    low, high = stats.num_drafts_range
    assert low >= 300 // 3 and low <= stats.num_drafts <= high
    shown = str(stats)
    assert "可能範圍 286 到 300" in shown and "±" not in shown


def test_a_log_line_or_a_scrape_pasted_twice_is_counted_once_with_a_note():
    _, text = real("v1_dspark_k7_ascend13640.txt")
    once = parse_metrics(text)
    twice = parse_metrics(text + "\n" + text)
    assert (twice.num_drafts, twice.accepted_per_position) == (once.num_drafts, once.accepted_per_position)
    assert any("只算一次" in note for note in twice.notes)
    scrape = fixture("metrics_falling_k3.txt")
    both = parse_metrics(scrape + "\n" + scrape)
    assert both.num_drafts == parse_metrics(scrape).num_drafts
    assert any("只算一次" in note for note in both.notes)
    assert "只算一次" in str(both)


def _named_missing(message):
    """The counters a refusal lists after 「缺少」 (up to the parenthesis or full stop that ends the list)."""
    return re.search(r"缺少 (.*?)[（。；]", message)[1].split("、")


# vllm#24049 posts its Prometheus UI table of all spec-decode counters for 8 engines (ngram, k = 5,
# -dp 8) and, above it, the server log of the same run. The stored copy of that thread shows only
# runs of its lines (tests/fixtures/vllm/real/README.md); three runs are fixtures, and they agree.


def test_prometheus_ui_table_real_fragment_is_refused_with_what_it_read():
    """The fragment holds only the num_drafts rows of eight engines: 22 + 15 + 29 + 20 + 25 +
    24 + 27 + 26 = 188; its _created row is a timestamp and is skipped. Missing: draft tokens and
    accepted tokens (named as missing), and the per-position rows (named as absent, needed for α)."""
    _, text = real("prometheus_ui_drafts_only_pr24049.txt")
    assert 22 + 15 + 29 + 20 + 25 + 24 + 27 + 26 == 188
    with pytest.raises(ValueError) as err:
        parse_metrics(text)
    message = str(err.value)
    assert "Prometheus 網頁表格" in message and "188" in message and "8 組標籤" in message
    assert _named_missing(message) == ["vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_accepted_tokens"]
    assert "也沒有 vllm:spec_decode_num_accepted_tokens_per_pos" in message


def test_prometheus_ui_per_position_fragment_is_refused_naming_every_gap():
    """Eight per-position rows: position 3 of engines 6, 7 (24, 6) and position 4 of engines 0–5
    (2, 4, 13, 6, 22, 17). No drafts, draft-token or accepted-token rows, no position 0, 1, 2."""
    _, text = real("prometheus_ui_per_pos_fragment_pr24049.txt")
    with pytest.raises(ValueError) as err:
        parse_metrics(text)
    message = str(err.value)
    assert _named_missing(message) == [
        "vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens", "vllm:spec_decode_num_accepted_tokens"]
    assert "per_pos 的 position 3、4，但沒有 position 0、1、2" in message
    assert "也沒有 vllm:spec_decode_num_accepted_tokens_per_pos" not in message


def test_data_parallel_log_by_hand_agrees_with_the_table_rows():
    """Engine 000: 110 drafted ÷ k 5 = 22 rounds (1 + 17/22 = 1.773 prints 1.77); 0.318 × 22 = 7.0,
    0.182 × 22 = 4.0, 0.091 × 22 = 2.0 three times: 7 + 4 + 2 + 2 + 2 = 17 accepted.
    Engine 001: 75 ÷ 5 = 15 rounds (1 + 27/15 = 2.80); 0.533 × 15 = 8.0, 0.333 × 15 = 5.0 three
    times, 0.267 × 15 = 4.0: 8 + 5 + 5 + 5 + 4 = 27. One line per engine, added up."""
    _, text = real("v1_ngram_k5_dp_engines_pr24049.txt")
    stats = parse_metrics(text)
    assert stats.source == "log"
    assert (stats.num_drafts, stats.num_drafts_range) == (22 + 15, (37, 37))
    assert (stats.num_draft_tokens, stats.num_accepted_tokens) == (110 + 75, 17 + 27)
    assert stats.accepted_per_position == (7 + 8, 4 + 5, 2 + 5, 2 + 5, 2 + 4)
    # the same engines in the thread's Prometheus table: num_drafts 22 and 15, position 4 rows 2 and 4
    table = real("prometheus_ui_drafts_only_pr24049.txt")[1] + real("prometheus_ui_per_pos_fragment_pr24049.txt")[1]
    for engine, drafts, pos4 in [(0, 22, 2), (1, 15, 4)]:
        assert f'num_drafts_total{{engine="{engine}", ' in table and re.search(
            rf'num_drafts_total\{{engine="{engine}",[^}}]*\}} \| {drafts}$', table, re.M)
        assert re.search(rf'per_pos_total\{{engine="{engine}",[^}}]*position="4"\}} \| {pos4}$', table, re.M)


def test_real_scrape_with_its_last_position_trimmed_is_refused_naming_it():
    """ventus-dspark's scrape (DSpark, k = 5 by its README), trimmed by its author after position 3.
    Values in prometheus_client's exponent form: 2.04363e+06 = 2,043,630 drafts, 1.0218118e+07 =
    10,218,118 draft tokens, 7.268642e+06 = 7,268,642 accepted. 4 × 2,043,630 = 8,174,520 <
    10,218,118 ≤ 5 × 2,043,630 = 10,218,150: k ≥ 5. Positions 0–3: 1,883,866 + 1,732,372 +
    1,489,894 + 1,204,113 = 6,310,245, short of the accepted tokens by 958,397."""
    _, text = real("metrics_dspark_k5_trimmed_ventus.txt")
    assert 4 * 2043630 < 10218118 <= 5 * 2043630
    assert 1883866 + 1732372 + 1489894 + 1204113 == 6310245 and 7268642 - 6310245 == 958397
    with pytest.raises(ValueError) as err:
        parse_metrics(text)
    message = str(err.value)
    assert "position 0 到 3（4 個位置）" in message and "k 至少是 5" in message and "缺少 position 4 起的行" in message
    assert "10,218,118 ÷ 2,043,630" in message and "6,310,245" in message and "958,397" in message
    assert f"α ≈ 1,883,866 ÷ 2,043,630 ≈ {1883866 / 2043630:.3f}" in message and "0.922" in message
    assert "矛盾" not in message  # not "counters contradict each other, re-scrape when idle"
    # the rest of the scrape is read right: with a position-4 row holding the remainder it reads
    row = 'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="/models/v4-flash-0731",position="4"} 958397.0'
    stats = parse_metrics(text + row + "\n")
    assert (stats.num_drafts, stats.num_draft_tokens, stats.num_accepted_tokens) == (2043630, 10218118, 7268642)
    assert stats.accepted_per_position == (1883866, 1732372, 1489894, 1204113, 958397)
    assert not stats.full_length_drafts  # 32 draft tokens fewer than 5 × 2,043,630


def test_prometheus_ui_table_reads_like_the_scrape():
    scrape = fixture("metrics_iid_k4_two_engines.txt")
    rows = []
    for line in scrape.splitlines():
        m = re.match(r"^(vllm:spec_decode_\w+)(\{[^}]*\}) (\S+)$", line)
        if m:  # the way the UI shows a sample: labels with a space after each comma, " | value"
            rows.append(f"{m[1]}{m[2].replace(',', ', ')} | {float(m[3]):g}")
    rows.insert(1, "-- | --")
    table, text = parse_metrics("\n".join(rows)), parse_metrics(scrape)
    assert table.source == "prometheus-ui"
    assert (table.num_drafts, table.num_draft_tokens, table.num_accepted_tokens, table.accepted_per_position) == \
        (text.num_drafts, text.num_draft_tokens, text.num_accepted_tokens, text.accepted_per_position)


def test_a_single_real_metrics_line_is_refused_as_partial():
    _, text = real("metrics_per_pos_line_miaai91.txt")
    with pytest.raises(ValueError, match="缺少 vllm:spec_decode_num_drafts"):
        parse_metrics(text)


def test_bench_spec_section_k1_by_hand():
    """MTP 1: 26407 drafts, 26407 draft tokens (k = 1), 22021 accepted; with one position its
    count is the accepted tokens, 22021, and 22021 / 26407 = 83.39 %."""
    stats = parse_metrics(real("bench_spec_section_mtp1_pr48892.txt")[1])
    assert stats.source == "bench"
    assert (stats.num_drafts, stats.num_draft_tokens, stats.num_accepted_tokens) == (26407, 26407, 22021)
    assert stats.accepted_per_position == (22021,) and stats.per_position_slack == (0,)
    assert round(100 * 22021 / 26407, 2) == 83.39 and round(1 + 22021 / 26407, 2) == 1.83


def test_bench_spec_section_k8_by_hand():
    """MTP 8: 88344 = 8 × 11043 draft tokens; each position's count is its printed percent ×
    11043 within the rounding (± 0.005 % × 11043 ≈ 0.55), and the eight sum to 38611."""
    printed = [76.17, 61.58, 51.25, 42.43, 36.40, 30.94, 27.22, 23.65]
    stats = parse_metrics(real("bench_spec_section_mtp8_pr48892.txt")[1])
    assert 88344 == 8 * 11043
    assert (stats.num_drafts, stats.num_speculative_tokens, stats.num_accepted_tokens) == (11043, 8, 38611)
    assert sum(stats.accepted_per_position) == 38611
    for count, pct in zip(stats.accepted_per_position, printed):
        assert abs(count - pct / 100 * 11043) <= 0.00005 * 11043
    assert abs(estimate_alpha(stats).alpha - 0.7617) <= 0.00005


def test_bench_spec_section_alone_is_no_bench_run():
    with pytest.raises(ValueError, match="Successful requests.*parse_metrics"):
        read_bench_results(real("bench_spec_section_mtp8_pr48892.txt")[1])


def test_bench_block_without_spec_is_read_as_an_off_run_and_refused_for_alpha():
    _, text = real("bench_block_no_spec_pr35714.txt")
    (run,) = read_bench_results(text)
    assert (run.max_concurrency, run.completed, run.failed, run.speculative) == (1, 16, 0, False)
    assert (run.output_throughput, run.mean_tpot_ms, run.mean_ttft_ms) == (39.96, 21.80, 330.66)
    assert run.per_user_tokens_per_s == pytest.approx(1000 / 21.80)
    with pytest.raises(ValueError, match="Speculative Decoding"):
        parse_metrics(text)


def test_a_printed_sweep_is_several_runs_and_needs_max_concurrency():
    _, text = real("bench_block_no_spec_pr35714.txt")
    runs = read_bench_results(text + "\n" + text.replace("Maximum request concurrency:             1",
                                                          "Maximum request concurrency:             2"))
    assert [r.max_concurrency for r in runs] == [1, 2]
    with pytest.raises(ValueError, match="--max-concurrency"):
        read_bench_results("\n".join(l for l in text.splitlines() if "Maximum request concurrency" not in l))


@pytest.mark.parametrize("name", ["per_request_docs_acceptance_metrics.json", "per_request_sparse_histogram_aiperf1167.json"])
def test_per_request_histogram_by_hand(name):
    """acceptance_histogram [39, 1, 0, 3] ({"0": 39, "1": 1, "3": 3}): 39 + 1 + 0 + 3 = 43 steps,
    1·1 + 2·0 + 3·3 = 10 accepted; position 1 was accepted in the steps that accepted ≥ 1 token:
    1 + 0 + 3 = 4, position 2 in 0 + 3 = 3, position 3 in 3."""
    stats = parse_metrics(real(name)[1])
    assert stats.source == "request"
    assert (stats.num_drafts, stats.num_draft_tokens, stats.num_accepted_tokens) == (43, 129, 10)
    assert stats.accepted_per_position == (4, 3, 3)
    assert estimate_alpha(stats).alpha == 4 / 43


def test_per_request_json_in_its_wrappings_and_duplicates():
    _, text = real("per_request_docs_acceptance_metrics.json")
    start = text.index('{', text.index('"speculative_decoding"'))
    obj = json.JSONDecoder().raw_decode(text, start)[0]
    response = {"id": "chatcmpl-1", "choices": [], "metrics": {"speculative_decoding": obj}}
    other = dict(response, id="chatcmpl-2")
    sse = "data: " + json.dumps(response) + "\n\ndata: [DONE]\n"
    assert parse_metrics(sse).accepted_per_position == (4, 3, 3)
    assert parse_metrics(response).num_drafts == 43  # an already-loaded dict
    two = parse_metrics([response, other])
    assert (two.num_drafts, two.accepted_per_position) == (43 + 43, (8, 6, 6))
    same = parse_metrics([response, response])
    assert same.num_drafts == 43 and any("只算一次" in note for note in same.notes)
    with pytest.raises(ValueError, match="百分比"):
        parse_metrics({"metrics": {"speculative_decoding": dict(obj, draft_acceptance_rate=7.75)}})
    with pytest.raises(ValueError, match="histogram"):
        parse_metrics({"metrics": {"speculative_decoding": dict(obj, acceptance_histogram=[39, 2, 0, 3])}})
    with pytest.raises(ValueError, match="null"):
        parse_metrics({"metrics": {"speculative_decoding": None}})


def test_bench_json_with_spec_fields_gives_exact_counts():
    on = next(p for p in BENCH if "spec-on" in p.name)
    raw = json.loads(on.read_text())
    stats = parse_metrics(on.read_text())
    drafts = raw["spec_decode_num_drafts"]
    assert stats.num_drafts == drafts and stats.num_accepted_tokens == raw["spec_decode_accepted_tokens"]
    assert list(stats.accepted_per_position) == [round(r * drafts) for r in raw["spec_decode_per_position_acceptance_rates"]]
    as_percent = dict(raw, spec_decode_per_position_acceptance_rates=[100 * r for r in raw["spec_decode_per_position_acceptance_rates"]])
    with pytest.raises(ValueError, match="百分比"):
        read_bench_results(as_percent)


def test_text_or_path_is_decided_safely(tmp_path):
    _, block = real("bench_block_no_spec_pr35714.txt")
    with pytest.raises(ValueError):  # not a raw OSError ("File name too long")
        read_bench_results("x" * 5000)
    with pytest.raises(ValueError, match="找不到 bench 結果檔"):
        read_bench_results("results/on/missing.json")
    saved = tmp_path / "bench.log"
    saved.write_text(block)
    assert read_bench_results(str(saved))[0].max_concurrency == 1  # an existing file: read as a file
    pair = json.dumps([json.loads(p.read_text()) for p in BENCH[:2]])  # a JSON array is text, not a path
    assert len(read_bench_results(pair)) == 2
    with pytest.raises(ValueError, match="看不懂"):
        read_bench_results("hello there")


def test_diffusion_counters_are_named():
    with pytest.raises(ValueError, match="擴散"):
        parse_metrics('vllm:diffusion_num_denoising_steps_total{engine="0"} 10.0\n')


def test_the_notebooks_real_example_is_the_fixture():
    from specdec_lab.vllm.examples import EXAMPLE_REAL_LOG, EXAMPLE_REAL_LOG_SOURCE

    url, text = real("v1_mtp_k6_club3090_105.txt")
    assert (EXAMPLE_REAL_LOG_SOURCE, EXAMPLE_REAL_LOG) == (url, text)


def test_offline_example_block_by_hand():
    """vllm#26498, SpecBench, EAGLE-3, K = 10: 204,680 = 10 × 20,468 draft tokens (every round
    full); 1 + 48,266 ÷ 20,468 = 3.358 prints 3.36. The counts are exact; each position's count is
    its 2-decimal rate × 20,468 within ± 0.005 × 20,468 = 102.34, non-increasing, summing to
    48,266 (the printed rates × 20,468 sum to 2.37 × 20,468 = 48,509, inside the ± 1,023 they allow)."""
    printed = [0.71, 0.50, 0.36, 0.26, 0.18, 0.13, 0.10, 0.07, 0.04, 0.02]
    _, text = real("offline_spec_decode_k10_pr26498.txt")
    stats = parse_metrics(text)
    assert stats.source == "offline" and stats.num_drafts_range is None
    assert (stats.num_drafts, stats.num_draft_tokens, stats.num_accepted_tokens) == (20468, 204680, 48266)
    assert 204680 == 10 * 20468 and stats.full_length_drafts and round(1 + 48266 / 20468, 2) == 3.36
    counts = stats.accepted_per_position
    assert len(counts) == 10 and sum(counts) == 48266 and list(counts) == sorted(counts, reverse=True)
    assert abs(sum(printed) * 20468 - 48266) <= 10 * 0.005 * 20468
    for count, rate in zip(counts, printed):
        assert abs(count - rate * 20468) <= 0.005 * 20468 + 1e-9
    assert abs(estimate_alpha(stats).alpha - 0.71) <= 0.005
    assert any("小數 2 位" in note for note in stats.notes)


def test_offline_example_block_with_its_log_lines_pasted_twice_or_edited():
    _, text = real("offline_spec_decode_k10_pr26498.txt")
    once = parse_metrics(text)
    # the script's run also logs SpecDecoding lines: pasted along, they are not added on top
    _, log = real("v1_ngram_k5_dp_engines_pr24049.txt")
    both = parse_metrics(log + "\n" + text)
    assert (both.num_drafts, both.accepted_per_position) == (once.num_drafts, once.accepted_per_position)
    assert any("log 行不另外相加" in note for note in both.notes)
    twice = parse_metrics(text + text)
    assert twice.num_drafts == 20468 and any("只算一次" in note for note in twice.notes)
    with pytest.raises(ValueError, match="2 段"):
        parse_metrics(text + text.replace("num_drafts: 20468", "num_drafts: 20469"))
    with pytest.raises(ValueError, match="mean acceptance length 印的是 3.46"):
        parse_metrics(text.replace("mean acceptance length: 3.36", "mean acceptance length: 3.46"))
    with pytest.raises(ValueError, match="對不上"):
        parse_metrics(text.replace("acceptance at token 0: 0.71", "acceptance at token 0: 0.91"))
    with pytest.raises(ValueError, match="缺少 「num_draft_tokens:」 那幾行"):
        parse_metrics("\n".join(l for l in text.splitlines() if not l.startswith("num_draft_tokens")))
    with pytest.raises(ValueError, match="連續"):
        parse_metrics("\n".join(l for l in text.splitlines() if "token 3:" not in l))
    no_rates = parse_metrics("\n".join(l for l in text.splitlines() if "acceptance at token" not in l))
    assert no_rates.accepted_per_position == () and no_rates.mean_acceptance_length == 1 + 48266 / 20468
    with pytest.raises(ValueError, match="per_pos"):
        estimate_alpha(no_rates)
