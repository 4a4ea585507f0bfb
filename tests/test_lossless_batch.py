"""The batched decoder (specdec_lab.lossless_batch) against the one-sequence one (specdec_lab.lossless):
the same runs, token for token and round record for round record, under the same seeds; and the
batched model rows against ``probs``, bit for bit. The lab's χ² results therefore stay the
one-sequence decoder's (tests/test_lossless.py checks what they show)."""
import math

import numpy as np
import pytest

from specdec_lab import lossless_experiments as lx
from specdec_lab.corpus import CORPUS
from specdec_lab.lossless import (
    PromptLookupDrafter,
    _visits,
    speculative_decode,
    target_decode,
    transition_test,
    verify_accept_if_draft_confident,
    verify_resample_from_target,
)
from specdec_lab.lossless_batch import speculative_decode_batch, target_decode_batch
from specdec_lab.ngram_lm import CharNgramLM, CopyingLM, DilutedDraft, earlier_match_end, earlier_match_ends
from specdec_lab.progress import Progress
from specdec_lab.verification import verify_sampling
from support.lossless_runs import models

TARGET, DRAFT = models()
LINES = lx.corpus_lines()
T = lx.TEMPERATURE
RECORDS = ("drafted", "accepted", "emitted", "expected", "variance")


def assert_same_runs(batched, one_by_one):
    assert len(batched) == len(one_by_one)
    for b, (x, y) in enumerate(zip(batched, one_by_one)):
        assert x.tokens == y.tokens, f"run {b}: tokens differ"
        assert (x.prompt, x.text, x.k) == (y.prompt, y.text, y.k)
        for name in RECORDS:
            u, v = getattr(x, name), getattr(y, name)
            assert u.dtype == v.dtype and np.array_equal(u, v), f"run {b}: {name} differs"


@pytest.mark.parametrize("verify", [verify_sampling, verify_accept_if_draft_confident, verify_resample_from_target])
def test_sampled_runs_equal_the_one_sequence_runs_for_every_verifier(verify):
    prompts = [line[:5] for line in LINES]
    seeds = [7 + 3 * i for i in range(len(prompts))]
    batched = speculative_decode_batch(TARGET, DRAFT, prompts, 150, 4, temperature=T, seeds=seeds, verify=verify)
    alone = [speculative_decode(TARGET, DRAFT, p, 150, 4, temperature=T, seed=s, verify=verify)
             for p, s in zip(prompts, seeds)]
    assert_same_runs(batched, alone)


@pytest.mark.parametrize("k, temperature", [(1, 1.0), (6, 0.6)])
def test_diluted_draft_runs_are_the_same(k, temperature):
    diluted = DilutedDraft(TARGET, 0.6)
    prompts = [line[:5] for line in LINES[:8]]
    batched = speculative_decode_batch(TARGET, diluted, prompts, 120, k, temperature=temperature, seeds=range(8))
    alone = [speculative_decode(TARGET, diluted, p, 120, k, temperature=temperature, seed=s)
             for s, p in enumerate(prompts)]
    assert_same_runs(batched, alone)


@pytest.mark.parametrize("k", [1, 4, 8])
def test_greedy_runs_are_the_same(k):
    prompts = lx.greedy_prompts()[::5]
    batched = speculative_decode_batch(TARGET, DRAFT, prompts, 60, k, greedy=True)
    assert_same_runs(batched, [speculative_decode(TARGET, DRAFT, p, 60, k, greedy=True) for p in prompts])


@pytest.mark.parametrize("greedy", [True, False])
def test_prompt_lookup_on_a_copying_target_is_the_same(greedy):
    """Drafts of any length (none at all, too), and a target without probs_batch (row by row)."""
    copier = CopyingLM(TARGET, copy_weight=0.8)
    lookup = PromptLookupDrafter(len(TARGET.vocab), min_n=2, max_n=4)
    prompts = [line + "\n" + line[:4] for line in LINES[:6]] + [line[:4] for line in LINES[:6]]
    lengths = [len(line) - 4 for line in LINES[:6]] * 2
    batched = speculative_decode_batch(copier, lookup, prompts, lengths, 4, greedy=greedy, temperature=T,
                                       seeds=range(12))
    alone = [speculative_decode(copier, lookup, p, n, 4, greedy=greedy, temperature=T, seed=s)
             for s, (p, n) in enumerate(zip(prompts, lengths))]
    assert_same_runs(batched, alone)
    assert {int(d) for run in batched for d in run.drafted} >= {0, 4}


def test_the_target_alone_is_the_same():
    prompts = [line[:5] for line in LINES]
    assert target_decode_batch(TARGET, prompts, 80) == [target_decode(TARGET, p, 80) for p in prompts]
    seeds = [100 + i for i in range(len(prompts))]
    assert target_decode_batch(TARGET, prompts, 80, greedy=False, temperature=T, seeds=seeds) == [
        target_decode(TARGET, p, 80, greedy=False, temperature=T, seed=s) for p, s in zip(prompts, seeds)]


def test_a_batch_of_one_and_seeds_as_generators_are_not_mixed_up():
    (run,) = speculative_decode_batch(TARGET, DRAFT, ["大模型每"], 60, 4, temperature=T, seeds=[1])
    assert run.tokens == speculative_decode(TARGET, DRAFT, "大模型每", 60, k=4, temperature=T, seed=1).tokens
    with pytest.raises(ValueError, match="seeds"):
        speculative_decode_batch(TARGET, DRAFT, ["大模型每"], 60, 4, seeds=[np.random.default_rng(1)])


def test_the_lab_experiments_use_the_batched_decoder_and_give_the_one_sequence_results():
    """B's correct-verifier runs as sampled_runs makes them (batched) are the one-sequence runs."""
    runs = lx.sampled_runs(TARGET, DRAFT, n_tokens=100)
    alone = [speculative_decode(TARGET, DRAFT, line[:5], 100, lx.K, temperature=T, seed=i)
             for i, line in enumerate(LINES * 3)]
    assert_same_runs(runs, alone)


def test_three_verifiers_in_one_batch_give_each_verifiers_own_runs():
    """sampling_checks runs the three verifiers' sequences together (one verifier per sequence):
    each verifier's runs are the ones it gives alone, one sequence at a time."""
    prompts = [line[:5] for line in LINES[:6]] * 3
    verifiers = [v for v, _ in lx.VERIFIERS.values() for _ in range(6)]
    batched = speculative_decode_batch(TARGET, DRAFT, prompts, 100, 4, temperature=T, seeds=[i % 6 for i in range(18)],
                                       verify=verifiers)
    alone = [speculative_decode(TARGET, DRAFT, p, 100, 4, temperature=T, seed=i % 6, verify=v)
             for i, (p, v) in enumerate(zip(prompts, verifiers))]
    assert_same_runs(batched, alone)
    checks = lx.sampling_checks(TARGET, DRAFT)
    assert list(checks) == list(lx.VERIFIERS)
    assert_same_runs(checks["錯誤：q ≥ p 就收"].runs, lx.sampled_runs(TARGET, DRAFT, verify=verify_accept_if_draft_confident))


# --- the models' batched rows --------------------------------------------------------------------


def windows_to_test(order, count=1500, seed=0):
    rng = np.random.default_rng(seed)
    ids = np.array(TARGET.vocab.encode(CORPUS))
    m = order - 1
    seen = np.stack([ids[i:i + m] for i in range(len(ids) - m)])
    unseen = rng.integers(0, len(TARGET.vocab), (count, m))
    mixed = unseen.copy()
    mixed[:, 1:] = seen[rng.integers(0, len(seen), count), 1:]  # a seen shorter context, an unseen longer one
    return np.concatenate([seen, unseen, mixed])


@pytest.mark.parametrize("temperature", [1.0, 0.6, 0.05, 7.0])
def test_batched_rows_are_probs_bit_for_bit(temperature):
    windows = windows_to_test(TARGET.order)
    for model in (TARGET, DRAFT, DilutedDraft(TARGET, 0.3), CharNgramLM(CORPUS, 1, vocab=TARGET.vocab)):
        got = model.probs_batch(windows, temperature)
        for w, row in zip(windows, got):
            assert np.array_equal(row, model.probs(w.tolist(), temperature)), (type(model).__name__, w)
    index, table = TARGET.row_index(windows, temperature)
    assert np.array_equal(table.with_cdf().cdf[index], np.cumsum(table.rows[index], axis=1))
    index, table = TARGET.row_index(windows_to_test(TARGET.order, seed=1), temperature)  # kept after with_cdf
    assert np.array_equal(table.cdf[index], np.cumsum(table.rows[index], axis=1))
    assert np.array_equal(table.best[index], table.rows[index].argmax(axis=1))


def test_batched_rows_check_their_input():
    with pytest.raises(ValueError, match="windows"):
        TARGET.probs_batch(np.zeros((3, 2), dtype=int))
    with pytest.raises(ValueError, match="temperature"):
        TARGET.probs_batch(np.zeros((3, 3), dtype=int), 0.0)


def longest_context_suffix(model, window):
    """The longest suffix of ``window`` that the model's text has as a context (the empty one at least),
    read from the model's own count tables."""
    window = tuple(window)
    for start in range(len(window)):
        if window[start:] in model._tables[len(window) - start - 1]:
            return window[start:]
    return ()


@pytest.mark.parametrize("order", [4, 2, 3])
def test_a_window_s_state_is_its_longest_suffix_the_text_contains(order):
    """row_index walks the model's automaton (state × token → state): the state it ends in is the
    window's longest suffix among the text's contexts, and the state after any state and token is
    that of the state's context plus the token."""
    model = {4: TARGET, 2: DRAFT}.get(order) or CharNgramLM(CORPUS, order, vocab=TARGET.vocab)
    histories, follow = model.automaton()
    contexts = [tuple(h) for block in histories for h in block.tolist()]
    assert len(set(contexts)) == len(contexts) == follow.shape[0]
    assert contexts[0] == () and follow.shape[1] == len(TARGET.vocab)
    windows = windows_to_test(order, count=600)
    index, _ = model.row_index(windows)
    for w, state in zip(windows.tolist(), index.tolist()):
        assert contexts[state] == longest_context_suffix(model, w[len(w) - model.context_length:]), w
    rng = np.random.default_rng(3)
    for state, token in zip(rng.integers(0, len(contexts), 3000).tolist(), rng.integers(0, len(TARGET.vocab), 3000).tolist()):
        grown = (contexts[state] + (token,))[-model.context_length:]
        assert contexts[follow[state, token]] == longest_context_suffix(model, grown), (contexts[state], token)


def test_batched_runs_never_ask_probs_row_by_row(monkeypatch):
    """The equality tests above go through the batched paths: kept rows (the automaton) for the
    n-gram models, whole histories at once for prompt lookup on a copying target."""
    def refuse(*args, **kwargs):
        raise AssertionError("probs called row by row")
    prompts = [line[:5] for line in LINES[:4]]
    copier = CopyingLM(TARGET, copy_weight=0.8)
    lookup = PromptLookupDrafter(len(TARGET.vocab), min_n=2, max_n=4)
    for greedy in (True, False):
        for model in (TARGET, DRAFT):
            monkeypatch.setattr(model, "probs", refuse)
        speculative_decode_batch(TARGET, DRAFT, prompts, 40, 4, greedy=greedy, temperature=T, seeds=range(4))
        speculative_decode_batch(TARGET, DilutedDraft(TARGET, 0.5), prompts, 40, 4, greedy=greedy, seeds=range(4))
        speculative_decode_batch(copier, lookup, [p + p for p in prompts], 40, 4, greedy=greedy, seeds=range(4))
        monkeypatch.undo()


# --- whole histories at once: prompt lookup, the copy head -----------------------------------------


def sequences_to_test(count=400, width=14, alphabet=3, seed=0):
    """Short sequences over a few tokens (many earlier matches of every length), of every length."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, alphabet, (count, width)), rng.integers(0, width + 1, count)


def test_earlier_matches_at_once_are_earlier_match_end():
    tokens, lengths = sequences_to_test()
    for sizes in ([1], [3], [2, 3, 4], [5]):
        got = earlier_match_ends(tokens, lengths, sizes)
        assert sorted(got) == sorted(sizes)
        for n in sizes:
            want = [earlier_match_end(t[:L].tolist(), n) for t, L in zip(tokens, lengths)]
            assert got[n].tolist() == [-1 if w is None else w for w in want], n
    rows = np.repeat(np.arange(50), 3)  # several sequences from one row of tokens
    lengths = np.minimum(lengths[rows] + np.tile([0, 1, 2], 50), tokens.shape[1])
    got = earlier_match_ends(tokens, lengths, [3], rows=rows)[3]
    assert got.tolist() == [-1 if w is None else w for w in
                            (earlier_match_end(tokens[r, :L].tolist(), 3) for r, L in zip(rows, lengths))]
    assert (got >= 0).sum() > 10 and (got < 0).sum() > 10  # both kinds were checked


@pytest.mark.parametrize("min_n, max_n, k", [(2, 4, 4), (1, 2, 1), (3, 3, 6)])
def test_prompt_lookup_proposes_the_same_at_once(min_n, max_n, k):
    tokens, lengths = sequences_to_test(alphabet=4, width=20, seed=1)
    lengths = np.maximum(lengths, 1)
    lookup = PromptLookupDrafter(4, min_n=min_n, max_n=max_n)
    proposed, counts = lookup.propose_batch(tokens, lengths, k)
    for t, L, row, c in zip(tokens, lengths, proposed.tolist(), counts.tolist()):
        want, _ = lookup.propose(t[:L].tolist(), k, False, 1.0, None)
        assert row[:c] == want and c == len(want) and row[c:] == [0] * (k - c)
    assert {0, k} <= set(counts.tolist())


@pytest.mark.parametrize("temperature", [1.0, 0.6])
def test_copying_rows_at_once_are_probs_bit_for_bit(temperature):
    ids = np.array(TARGET.vocab.encode(CORPUS))
    rng = np.random.default_rng(2)
    starts = rng.integers(0, ids.size - 40, 60)
    tokens = np.stack([ids[s:s + 40] for s in starts])
    tokens[::3, 20:] = tokens[::3, :20]  # a repeated stretch: the copy head fires
    tokens[1::3, 30:] = rng.integers(0, len(TARGET.vocab), (20, 10))
    lengths = rng.integers(3, 41, (60, 4))
    copier = CopyingLM(TARGET, copy_weight=0.7)
    rows = copier.probs_after(tokens, lengths, temperature)
    copied = 0
    for b in range(60):
        for j in range(4):
            history = tokens[b, :lengths[b, j]].tolist()
            assert np.array_equal(rows[b, j], copier.probs(history, temperature)), (b, j)
            copied += copier.copied(history) is not None
    assert 30 < copied < 230
    need = rng.random((60, 4)) < 0.5
    index, kept = copier.rows_after(tokens, lengths, temperature, need=need)
    assert kept.shape[0] == need.sum() and np.array_equal(kept[index[need]], rows[need])
    known = earlier_match_ends(tokens, lengths[:, 0], [2, 3])  # as prompt lookup finds them at j = 0
    index, kept = copier.rows_after(tokens, lengths, temperature, need=need, known=known)
    assert np.array_equal(kept[index[need]], rows[need])


def test_prompt_lookup_table_runs_both_tasks_as_each_alone():
    """D's two tasks in one batch give the rows each task's own one-sequence runs give."""
    copier = CopyingLM(TARGET, copy_weight=0.8)
    lookup = PromptLookupDrafter(len(TARGET.vocab), min_n=2, max_n=4)
    table = lx.prompt_lookup_table(TARGET, repeats=1, seed=5)
    for row, (task, make) in zip(table, lx.TASKS.items()):
        runs = [speculative_decode(copier, lookup, make(line), len(line) - 4, lx.K, temperature=T, seed=5 + i)
                for i, line in enumerate(LINES)]
        drafted = np.concatenate([r.drafted for r in runs])
        accepted = np.concatenate([r.accepted for r in runs])
        emitted = np.concatenate([r.emitted for r in runs])
        proposed = drafted > 0
        assert row == lx.LookupRow(task, int(drafted.size), float(proposed.mean()), float((accepted[proposed] > 0).mean()),
                                   float(emitted.mean()), float(emitted.std() / np.sqrt(emitted.size)))


# --- the χ² count ----------------------------------------------------------------------------------


class OneByOne:
    """The target with its n-gram shortcut hidden: transition_test counts token by token."""

    def __init__(self, target):
        self.target, self.vocab = target, target.vocab

    def state(self, ids):
        return self.target.state(ids)

    def probs(self, ids, temperature=1.0):
        return self.target.probs(ids, temperature)


@pytest.mark.parametrize("name", list(lx.VERIFIERS))
def test_states_counted_at_once_equal_the_token_by_token_count(name):
    runs = lx.sampled_runs(TARGET, DRAFT, verify=lx.VERIFIERS[name][0], n_tokens=200)
    fast, slow = _visits(TARGET, runs), _visits(OneByOne(TARGET), runs)
    assert [(s, t.tolist()) for s, t in fast] == [(s, t.tolist()) for s, t in slow]
    for options in ({}, {"contexts": 25}, {"min_visits": 4}):
        a = transition_test(TARGET, runs, temperature=T, **options)
        b = transition_test(OneByOne(TARGET), runs, temperature=T, **options)
        assert str(a) == str(b) and [c[:2] for c in a.per_context] == [c[:2] for c in b.per_context]


# --- progress ----------------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_says_how_far_and_how_long_then_clears():
    clock, lines = Clock(), []
    with Progress("取樣", 1000, sequences=10, delay=1.0, every=0.5, clock=clock, show=lines.append) as bar:
        clock.now = 0.5
        bar.update(100, 0)          # before the delay: nothing
        clock.now = 2.0
        bar.update(400, 3)
        clock.now = 2.2
        bar.update(450, 3)          # too soon after the last line
        clock.now = 3.0
        bar.update(600, 5)
    assert lines == ["取樣：已寫 400 / 1,000 字（40%），10 段中 3 段寫完，約剩 3 秒",
                     "取樣：已寫 600 / 1,000 字（60%），10 段中 5 段寫完，約剩 2 秒", None]


def test_a_quick_job_shows_no_progress_and_none_outside_a_notebook():
    lines = []
    with Progress("取樣", 10, show=lines.append) as bar:
        bar.update(10, 1)
    assert lines == []
    bar = Progress("取樣", 10, delay=0, every=0)  # a script: no IPython kernel, so no display
    bar.update(5)
    bar.close()
    assert not bar.shown


def test_the_decoder_reports_every_round_up_to_the_total():
    seen = []

    class Recorder:
        def update(self, done, finished):
            seen.append((done, finished))

    speculative_decode_batch(TARGET, DRAFT, [line[:5] for line in LINES[:4]], 50, 4, temperature=T,
                             seeds=range(4), progress=Recorder())
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[-1] == 200 and seen[-1][1] == 4 and len(seen) > 10


@pytest.mark.parametrize("call, message", [
    (lambda: speculative_decode_batch(TARGET, DRAFT, [], 10, 4), "prompts 不可以是空的"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模型每"] * 2, [10], 4), "n_tokens"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模型每"], 0, 4), r"n_tokens.*0"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模型每"], 10, 0), r"k.*0"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模型每"] * 2, 10, 4, seeds=[1]), "seeds 必須每個"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模型每"], 10, 4, seeds=[-1]), r"seeds.*-1"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模型每"], 10, 4, verify=lambda *a, **k: None), "verify"),
    (lambda: speculative_decode_batch(TARGET, object(), ["大模型每"], 10, 4), "drafter"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模型每"] * 2, 10, 4, verify=[verify_sampling]), "verify 必須是一個"),
    (lambda: lx.sampling_checks(TARGET, DRAFT, ["正確"]), "name"),
    (lambda: speculative_decode_batch(TARGET, DRAFT, ["大模"], 10, 4), "prompt 至少"),
    (lambda: target_decode_batch(TARGET, [], 10), "prompts 不可以是空的"),
    (lambda: target_decode_batch(TARGET, ["大模型每"], 0), r"n_tokens.*0"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_round_records_keep_their_meaning():
    """Not only equal to the one-sequence records: they add up as a run's records must."""
    runs = speculative_decode_batch(TARGET, DRAFT, [line[:5] for line in LINES], 300, 4, temperature=T,
                                    seeds=range(len(LINES)))
    for run in runs:
        assert len(run.tokens) == 300 and run.emitted.sum() >= 300 > run.emitted[:-1].sum()
        assert np.all(run.emitted == run.accepted + 1) and np.all(run.accepted <= run.drafted)
        assert np.all(run.variance >= -1e-12) and np.all((1 <= run.expected) & (run.expected <= 5))
    assert math.isclose(sum(r.emitted.sum() for r in runs) / sum(r.rounds for r in runs),
                        np.mean(np.concatenate([r.emitted for r in runs])))
