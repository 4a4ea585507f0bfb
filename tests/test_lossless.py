"""The lossless lab: whole-sequence speculative decoding against models with known probabilities.

Fixed seeds; statistical checks use 5σ (or, for χ² p-values, thresholds that a correct decoder
misses with probability 1e-3) and none of them was loosened to pass.
"""
import math
from collections import Counter, defaultdict

import numpy as np
import pytest

from specdec_lab import expected_tokens, verify_sampling
from specdec_lab import lossless_experiments as lx
from specdec_lab import tables
from specdec_lab.corpus import CORPUS
from specdec_lab.lossless import (
    ModelDrafter,
    PromptLookupDrafter,
    _round_moments,
    speculative_decode,
    target_decode,
    transition_test,
    verify_accept_if_draft_confident,
    verify_resample_from_target,
)
from specdec_lab.ngram_lm import JUNK, CharNgramLM, CopyingLM, DilutedDraft, Vocabulary
from support.lossless_runs import correct_sampling, greedy, lookup_table, models, sampling

TARGET, DRAFT = models()
LINES = lx.corpus_lines()
TEMPERATURE = lx.TEMPERATURE


# --- the models -------------------------------------------------------------------------------


def test_witten_bell_matches_a_direct_computation():
    text = "abracadabra abracadabra"
    lm = CharNgramLM(text, 3)
    ids = lm.vocab.encode("abr")
    uni = Counter(text)
    big = defaultdict(Counter)
    tri = defaultdict(Counter)
    for i in range(1, len(text)):
        big[text[i - 1]][text[i]] += 1
    for i in range(2, len(text)):
        tri[text[i - 2:i]][text[i]] += 1

    def p(w):
        p1 = uni[w] / len(text)
        c, u = sum(big["r"].values()), len(big["r"])
        p2 = (big["r"][w] + u * p1) / (c + u)
        c, u = sum(tri["br"].values()), len(tri["br"])
        return (tri["br"][w] + u * p2) / (c + u)

    probs = lm.probs(ids)
    for w in set(text):
        assert probs[lm.vocab.index[w]] == pytest.approx(p(w))
    assert probs.sum() == pytest.approx(1.0)
    assert probs[lm.vocab.index[JUNK]] == 0.0


def test_probabilities_are_distributions_and_temperature_sharpens():
    ids = TARGET.vocab.encode("大模型每")
    p1, p06 = TARGET.probs(ids), TARGET.probs(ids, 0.6)
    assert p1.sum() == pytest.approx(1) and p06.sum() == pytest.approx(1)
    assert p06.max() > p1.max() and np.argmax(p06) == np.argmax(p1)
    assert np.allclose(p06, p1 ** (1 / 0.6) / (p1 ** (1 / 0.6)).sum())
    q = DilutedDraft(TARGET, 0.7).probs(ids)
    assert q.sum() == pytest.approx(1) and q[TARGET.vocab.index[JUNK]] == pytest.approx(0.3)


def test_copying_model_points_at_what_followed():
    copier = CopyingLM(TARGET, copy_weight=0.8, match=3)
    ids = TARGET.vocab.encode("草稿完全不用模型。草稿完")
    assert copier.copied(ids) == TARGET.vocab.index["全"]
    p = copier.probs(ids)
    assert p.sum() == pytest.approx(1) and p[TARGET.vocab.index["全"]] >= 0.8
    assert copier.copied(TARGET.vocab.encode("草稿完全")) is None


def test_prompt_lookup_proposes_the_continuation_of_the_latest_match():
    v = Vocabulary("abcdxyz")
    lookup = PromptLookupDrafter(len(v), min_n=2, max_n=3)
    tokens, rows = lookup.propose(v.encode("abcdxabcyabc"), 3, False, 1.0, None)
    assert v.decode(tokens) == "yab"  # the latest earlier "abc" is followed by "yab"
    assert np.array_equal(np.argmax(rows, axis=1), tokens) and np.all(np.sum(rows, axis=1) == 1)
    assert lookup.propose(v.encode("abcdxyz"), 3, False, 1.0, None) == ([], [])
    tokens, _ = lookup.propose(v.encode("xyzab"), 4, False, 1.0, None)
    assert tokens == []


@pytest.mark.parametrize("ratios", [[0.9, 0.5, 0.2], [1.0, 1.0], [0.3], [0.7, 0.7, 0.7, 0.7]])
def test_round_moments_match_the_enumerated_distribution(ratios):
    survive = np.cumprod(ratios)
    probs = np.append(-np.diff(np.concatenate([[1.0], survive])), survive[-1])  # P(N = 0..m)
    n = np.arange(len(ratios) + 1)
    mean, var = _round_moments(np.array(ratios))
    assert mean == pytest.approx(1 + (n * probs).sum())
    assert var == pytest.approx((n**2 * probs).sum() - (n * probs).sum() ** 2)


# --- (a) greedy: byte-identical --------------------------------------------------------------


def test_greedy_prompts_are_many_distinct_corpus_windows():
    prompts = lx.greedy_prompts()
    assert len(prompts) >= 100 and len(set(prompts)) == len(prompts)
    assert all(len(p) == 4 and p in CORPUS for p in prompts)


@pytest.mark.parametrize("k", [1, 4, 8])
def test_greedy_speculative_output_is_the_targets_own_greedy_output(k):
    check = greedy(k)
    assert check.prompts == len(lx.greedy_prompts()) and check.n_tokens == 60
    assert check.identical == check.prompts


def test_greedy_with_prompt_lookup_and_a_copying_target_is_identical_too():
    copier = CopyingLM(TARGET)
    lookup = PromptLookupDrafter(len(TARGET.vocab))
    for line in LINES:
        prompt = line + "\n" + line[:4]
        run = speculative_decode(copier, lookup, prompt, 40, 5, greedy=True)
        assert run.tokens == target_decode(copier, prompt, 40)


# --- (b) sampling: the target's distribution, and two broken verifiers -------------------------


def test_sampled_tokens_follow_the_targets_exact_probabilities():
    test = correct_sampling().test
    assert test.tokens > 3000 and len(test.per_context) > 50
    assert test.p_value > 1e-3


def test_a_transition_figure_says_which_rule_made_the_text():
    """The lossless lab shows two of these side by side (the correct rule, q ≥ p): both were titled
    「一個字」後面接什麼字？ and told apart only by the Markdown above them."""
    from specdec_lab import plotting

    check = correct_sampling()
    title = plotting.transition_figure(check.test, rule=check.name).axes[0].get_title()
    assert title.startswith(check.name + "\n「") and "後面接什麼字" in title
    assert plotting.transition_figure(check.test).axes[0].get_title().startswith("「")


def test_the_test_itself_accepts_the_target_sampling_alone():
    runs = [(TARGET.vocab.encode(line[:5]),
             target_decode(TARGET, line[:5], 300, greedy=False, temperature=TEMPERATURE, seed=100 + i))
            for i, line in enumerate(LINES * 3)]
    assert transition_test(TARGET, runs, temperature=TEMPERATURE).p_value > 1e-3


def test_the_lab_uses_the_correct_verifier_first_and_both_broken_ones():
    verifiers = [verify for verify, _ in lx.VERIFIERS.values()]
    assert verifiers == [verify_sampling, verify_accept_if_draft_confident, verify_resample_from_target]


@pytest.mark.parametrize("name", list(lx.VERIFIERS)[1:])
def test_broken_verifiers_are_visibly_biased(name):
    # forgetting the residual is the subtler mistake: the lab gives it twice the text
    assert sampling(name).test.p_value < 1e-6


# --- (c) measured α and tokens per round vs the closed form -----------------------------------


@pytest.mark.parametrize("alpha, k", [(0.3, 3), (0.7, 4), (0.9, 6)])
def test_diluted_draft_has_iid_acceptance_and_matches_eq1(alpha, k):
    runs = lx.sampled_runs(TARGET, DilutedDraft(TARGET, alpha), k=k, n_tokens=400, repeats=1)
    accepted = sum(r.accepted.sum() for r in runs)
    trials = sum(r.acceptance_trials for r in runs)
    assert abs(accepted / trials - alpha) < 5 * math.sqrt(alpha * (1 - alpha) / trials)
    emitted = np.concatenate([r.emitted[:-1] for r in runs])  # the last round of a run may be cut short
    e = float(expected_tokens(alpha, k))
    dist = np.append([alpha**i * (1 - alpha) for i in range(k)], alpha**k)
    sd = math.sqrt((np.arange(1, k + 2) ** 2 * dist).sum() - e**2)
    assert abs(emitted.mean() - e) < 5 * sd / math.sqrt(emitted.size)


def test_tokens_per_round_match_the_exact_acceptance_probabilities():
    """Each round accepts position i with probability min(1, p/q) if all earlier were accepted:
    the total over all rounds must match the sum of those exact expectations within 5σ."""
    runs = correct_sampling().runs
    emitted = np.concatenate([r.emitted[:-1] for r in runs])
    expected = np.concatenate([r.expected[:-1] for r in runs])
    variance = np.concatenate([r.variance[:-1] for r in runs])
    assert abs(emitted.sum() - expected.sum()) < 5 * math.sqrt(variance.sum())


def test_broken_verifier_fails_the_acceptance_check():
    runs = sampling("錯誤：q ≥ p 就收").runs
    emitted = np.concatenate([r.emitted[:-1] for r in runs])
    expected = np.concatenate([r.expected[:-1] for r in runs])
    variance = np.concatenate([r.variance[:-1] for r in runs])
    assert abs(emitted.sum() - expected.sum()) > 5 * math.sqrt(variance.sum())


# --- prompt lookup: rewriting vs open generation ---------------------------------------------------


def test_prompt_lookup_pays_off_when_the_output_copies_the_prompt():
    rewrite, open_ = lookup_table()
    assert (rewrite.task, open_.task) == ("改寫", "自由發揮")
    assert rewrite.tokens_per_round - open_.tokens_per_round > 5 * math.hypot(rewrite.std_error, open_.std_error)
    assert rewrite.proposed > 3 * open_.proposed


def test_the_prompt_lookup_result_shows_as_a_table_of_its_rows():
    rows = lookup_table()
    table = rows.table
    assert [r[0] for r in table.rows] == [r.task for r in rows] == list(lx.TASKS)
    assert [r[1:] for r in table.rows] == [(str(r.rounds), f"{r.proposed:.1%}", f"{r.first_accepted:.2f}",
                                             f"{r.tokens_per_round:.2f}") for r in rows]
    assert str(rows) == str(table) and rows._repr_html_() == table._repr_html_()
    assert len({tables.display_width(line) for line in str(rows).splitlines()}) == 1  # numbers end together


def test_acceptance_summary_counts_judged_tokens():
    """α = accepted ÷ (accepted + first rejections), recomputed from the rounds by hand."""
    runs = correct_sampling().runs
    s = lx.acceptance_summary(runs)
    accepted = sum(int(a) for r in runs for a in r.accepted)
    judged = sum(int(a) + (a < d) for r in runs for a, d in zip(r.accepted, r.drafted))
    assert s.alpha == accepted / judged and s.formula_alpha == s.alpha
    assert s.closed_form == pytest.approx(float(expected_tokens(s.alpha, 4)))
    assert s.rounds == sum(r.rounds - 1 for r in runs)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: speculative_decode(TARGET, DRAFT, "大模型每", 0, 4), "n_tokens"),
        (lambda: speculative_decode(TARGET, DRAFT, "大模型每", 10, 0), "k"),
        (lambda: speculative_decode(TARGET, DRAFT, "大模", 10, 4), "prompt 至少"),
        (lambda: speculative_decode(TARGET, DRAFT, "GPU 很快", 10, 4), "詞表外"),
        (lambda: speculative_decode(TARGET, DRAFT, "大模型每", 10, 4, temperature=0.0), "temperature"),
        (lambda: speculative_decode(TARGET, DRAFT, "大模型每", 10, 4, seed=-1), "seed"),
        (lambda: CharNgramLM(CORPUS, 0), "order"),
        (lambda: DilutedDraft(TARGET, 1.5), "alpha"),
        (lambda: CopyingLM(TARGET, copy_weight=-0.1), "copy_weight"),
        (lambda: PromptLookupDrafter(10, min_n=3, max_n=2), "min_n"),
        (lambda: transition_test(TARGET, [([1, 2, 3], [4])]), "min_visits"),
        (lambda: lx.sampling_check(TARGET, DRAFT, "正確"), "name"),
        (lambda: lx.acceptance_summary([]), "runs"),
        # each names the parameter, the value and the valid range (all ran or misled before)
        (lambda: speculative_decode(TARGET, DRAFT, [-1, 1, 2, 3], 10, 4), r"prompt.*\[0, \d+\].*-1"),
        (lambda: target_decode(TARGET, [99999, 1, 2, 3], 5), r"prompt.*\[0, \d+\].*99999"),
        (lambda: transition_test(TARGET, [], contexts=-1), r"contexts.*≥ 1.*-1"),
        (lambda: transition_test(TARGET, [], min_visits=0), r"min_visits.*≥ 1.*0"),
        (lambda: transition_test(TARGET, [(list(range(3)), [5] * 40)], temperature=20.0), "無法檢定"),
        (lambda: PromptLookupDrafter(0), r"vocab_size.*≥ 1.*0"),
        (lambda: DilutedDraft(TARGET, True), r"alpha.*\[0, 1\].*True"),
        (lambda: CopyingLM(TARGET, copy_weight=math.nan), r"copy_weight.*\[0, 1\].*nan"),
        (lambda: lx.greedy_prompts(stride=0), r"stride.*≥ 1.*0"),
        (lambda: lx.greedy_check(TARGET, DRAFT, 4, prompts=[]), "prompts 不可以是空的"),
        (lambda: lx.sampled_runs(TARGET, DRAFT, repeats=0), r"repeats.*\[1, 100\].*0"),
        (lambda: lx.sampled_runs(TARGET, DRAFT, seed=None), r"seed.*≥ 0.*None"),
        (lambda: lx.prompt_lookup_table(TARGET, repeats=0), r"repeats.*\[1, 100\].*0"),
        (lambda: lx.acceptance_summary(correct_sampling().runs, formula_alpha=1.5), r"formula_alpha.*\[0, 1\].*1.5"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_model_drafter_wraps_a_bare_model():
    a = speculative_decode(TARGET, DRAFT, "大模型每", 30, 3, temperature=TEMPERATURE, seed=5)
    b = speculative_decode(TARGET, ModelDrafter(DRAFT), "大模型每", 30, 3, temperature=TEMPERATURE, seed=5)
    assert a.tokens == b.tokens and len(a.tokens) == 30
