"""Draft sources on the n-gram models (specdec_lab.draft_sources): what each stand-in proposes,
that verification leaves the target's text unchanged, and the per-position bookkeeping."""
import numpy as np
import pytest

from specdec_lab.draft_sources import (
    BlockDraft,
    ConfidenceScheduled,
    EagleChain,
    MedusaHeads,
    confidence_sweep,
    draft_sources_table,
    measure,
)
from specdec_lab.lossless import target_decode
from specdec_lab.lossless_experiments import corpus_lines
from specdec_lab.ngram_lm import course_models

TARGET, DRAFT = course_models()
VOCAB = TARGET.vocab
PROMPTS = [line[:5] for line in corpus_lines()[:12]]


def test_medusa_heads_ignore_each_others_guesses():
    heads = MedusaHeads(VOCAB, 4)
    history = VOCAB.encode("草稿模型")
    guesses, _ = heads.propose(history, 4)
    # head 2 alone: the most frequent character two places after the last one, counted by hand
    ids, last = VOCAB.encode(__import__("specdec_lab.corpus", fromlist=["CORPUS"]).CORPUS), history[-1]
    after = np.bincount([ids[t + 1] for t in range(len(ids) - 1) if ids[t - 1] == last and t >= 1], minlength=len(VOCAB))
    assert guesses[1] == int(np.argmax(after))


def test_eagle_chain_goes_on_from_its_own_guesses():
    chain = EagleChain(VOCAB)
    tokens, conf = chain.propose(VOCAB.encode("模型"), 3)
    assert tokens[1] == int(np.argmax(DRAFT.probs([tokens[0]])))  # the course draft is the same order-2 model
    assert conf[0] == pytest.approx(DRAFT.probs(VOCAB.encode("型")).max())


def test_block_is_a_run_the_corpus_has():
    block, _ = BlockDraft(VOCAB, 6).propose(VOCAB.encode("模型"), 6)
    from specdec_lab.corpus import CORPUS
    assert VOCAB.decode(block) in CORPUS and len(block) == 6


def test_confidence_schedule_stops_below_threshold():
    chain = EagleChain(VOCAB)
    history = VOCAB.encode("模型")
    tokens, conf = chain.propose(history, 8)
    for threshold in (0.0, 0.3, 0.6, 1.0):
        got, _ = ConfidenceScheduled(chain, threshold).propose(history, 8)
        low = [i for i, c in enumerate(conf) if c < threshold]
        assert len(got) == (max(1, low[0]) if low else 8)


@pytest.mark.parametrize("make", [lambda: MedusaHeads(VOCAB, 4), lambda: EagleChain(VOCAB),
                                  lambda: BlockDraft(VOCAB, 4), lambda: ConfidenceScheduled(EagleChain(VOCAB), 0.5)])
def test_greedy_verification_writes_the_targets_greedy_text(make):
    stats = measure(TARGET, make(), PROMPTS[:4], 80, 4)
    assert [list(t) for t in stats.tokens] == [target_decode(TARGET, p, 80) for p in PROMPTS[:4]]
    assert np.all(stats.accepted <= stats.verified) and stats.tokens_per_round > 1


@pytest.mark.parametrize("make", [lambda: MedusaHeads(VOCAB, 3), lambda: BlockDraft(VOCAB, 3)])
def test_sampled_verification_keeps_the_first_character_within_5_sigma(make):
    prompt, n = "草稿模型", 4000  # n one-character runs: the first character must follow p
    stats = measure(TARGET, make(), [prompt] * n, 1, 3, temperature=1.0, seed=5)
    p = TARGET.probs(VOCAB.encode(prompt), 1.0)
    counts = np.bincount([t[0] for t in stats.tokens], minlength=p.size)
    assert np.all(np.abs(counts - n * p) <= 5 * np.sqrt(n * p * (1 - p)))


def test_reach_and_tokens_per_round_agree():
    stats = measure(TARGET, MedusaHeads(VOCAB, 5), PROMPTS, 60, 5, temperature=0.6, seed=2)
    assert stats.tokens_per_round == pytest.approx(1 + stats.position_reach().sum())
    acc = stats.position_acceptance()
    assert stats.position_reach()[1] == pytest.approx(acc[0] * acc[1])  # Medusa verifies every guess


def test_cost_model():
    stats = measure(TARGET, EagleChain(VOCAB), PROMPTS[:3], 30, 4)
    assert stats.speedup(0.0) == pytest.approx(stats.tokens_per_round)
    assert stats.speedup(0.1) == pytest.approx(stats.tokens_per_round / 1.4)  # 4 draft steps each round
    blocks = measure(TARGET, BlockDraft(VOCAB, 15), PROMPTS[:3], 30, 15)
    assert blocks.speedup(0.1) == pytest.approx(blocks.tokens_per_round / 1.1)  # one pass
    assert blocks.speedup(0.1, 0.02) == pytest.approx(blocks.tokens_per_round / (1.1 + 0.02 * 15))  # 15 verified


def test_confidence_schedule_verifies_fewer_as_the_threshold_rises():
    chain = EagleChain(VOCAB)
    verified = [measure(TARGET, ConfidenceScheduled(chain, t), PROMPTS, 40, 8, temperature=0.6).verified.mean()
                for t in (0.0, 0.2, 0.5)]
    assert verified[0] == 8 and verified[0] > verified[1] > verified[2] >= 1


def test_table_lists_the_four_sources_with_sources_quoted():
    table = draft_sources_table(TARGET, PROMPTS[:4], n_tokens=40)
    assert [row[0][:2] for row in table.rows] == ["Me", "EA", "DF", "DS"]
    assert "2.40" in table.rows[0][5] and "3.79" in table.rows[1][5]


@pytest.mark.parametrize("call, name", [
    (lambda: MedusaHeads(VOCAB, 0), "k"),
    (lambda: BlockDraft(VOCAB, 40), "k"),
    (lambda: EagleChain(VOCAB, context=-1), "context"),
    (lambda: ConfidenceScheduled(EagleChain(VOCAB), 1.5), "threshold"),
    (lambda: ConfidenceScheduled(EagleChain(VOCAB), -0.1), "threshold"),
    (lambda: ConfidenceScheduled(MedusaHeads(VOCAB, 2), 0.5), "chain"),
    (lambda: measure(TARGET, EagleChain(VOCAB), ["模型"], 0, 3), "n_tokens"),
    (lambda: measure(TARGET, EagleChain(VOCAB), ["模型"], 5, 3).speedup(-1), "draft_cost"),
    (lambda: measure(TARGET, EagleChain(VOCAB), ["模型"], 5, 3).speedup(0.1, float("nan")), "verify_cost"),
    (lambda: confidence_sweep(TARGET, ["模型"], thresholds=[0.2, 2.0]), "thresholds"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
