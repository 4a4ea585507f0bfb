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
    measured_crossover,
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
        (lambda t: t + "\n" + "\n".join(l for l in t.splitlines() if l.startswith("vllm:spec_decode_num_drafts_total")),
         "貼了兩次"),
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
    assert "建議 k" in str(falling) and "不是 α" in str(falling)


def test_short_ngram_drafts_are_flagged():
    est = estimate_alpha(parse_metrics(fixture("metrics_ngram_short_drafts_k5.txt")))
    assert not est.full_length_drafts
    assert "不滿 k 個" in str(est)


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
    with pytest.raises(ValueError, match="找不到結果檔"):
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
