"""Rejection sampling is lossless; greedy verification is target argmax decoding."""
import numpy as np
import pytest
from scipy import stats

from specdec_lab import verify_greedy, verify_sampling

TRIALS = 20_000


def random_round(rng, k, vocab):
    target = rng.dirichlet(np.full(vocab, 0.7), size=k + 1)
    draft = rng.dirichlet(np.full(vocab, 0.7), size=k)
    tokens = [int(rng.choice(vocab, p=row)) for row in draft]
    return tokens, draft, target


def emitted_counts(k, vocab, seed, verify, positions=2):
    """Counts of the tokens emitted at the first ``positions`` positions over many rounds.

    The target rows do not depend on context here, so the token at position i (when the round
    gets that far) must follow target row i exactly.
    """
    rng = np.random.default_rng(seed)
    _, draft, target = random_round(rng, k, vocab)
    cdfs = np.cumsum(draft, axis=1)
    drafts = (rng.random((TRIALS, k, 1)) * cdfs[:, -1:] >= cdfs).sum(axis=2)  # inverse CDF
    drafts = np.minimum(drafts, vocab - 1)
    seen = [[] for _ in range(positions)]
    for tokens in drafts.tolist():
        out = verify(tokens, draft, target, rng)
        for i in range(min(positions, len(out))):
            seen[i].append(out[i])
    return [(np.bincount(s, minlength=vocab), target[i]) for i, s in enumerate(seen)]


def chisquare_pvalue(counts, probs):
    """Pearson's chi-square p-value. The rarest bins are pooled until the pool expects at least
    5 counts (the usual validity condition of the chi-square approximation)."""
    expected = counts.sum() * probs
    order = np.argsort(expected)
    pooled = np.searchsorted(np.cumsum(expected[order]), 5.0) + 1  # smallest pool reaching 5
    if pooled > 1:
        rare, rest = order[:pooled], order[pooled:]
        counts = np.append(counts[rest], counts[rare].sum())
        expected = np.append(expected[rest], expected[rare].sum())
    return stats.chisquare(counts, expected).pvalue


def lossless(tokens, draft, target, rng):
    return verify_sampling(tokens, draft, target, seed=rng).tokens


def accept_everything(tokens, draft, target, rng):
    """A broken verifier: the draft's guesses go out unchecked."""
    return list(tokens)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_emitted_tokens_follow_the_target(seed):
    for counts, p in emitted_counts(k=3, vocab=6, seed=seed, verify=lossless):
        assert counts.sum() > 1_000
        assert chisquare_pvalue(counts, p) > 1e-3, (counts, p)


def test_the_chi_square_catches_a_broken_verifier():
    (counts, p), _ = emitted_counts(k=3, vocab=6, seed=1, verify=accept_everything)
    assert chisquare_pvalue(counts, p) < 1e-6


def test_all_accepted_when_draft_equals_target():
    rng = np.random.default_rng(5)
    _, _, target = random_round(rng, 4, 8)
    for _ in range(200):
        tokens = [int(rng.choice(8, p=row)) for row in target[:4]]
        out = verify_sampling(tokens, target[:4], target, seed=rng)
        assert out.bonus and out.n_accepted == 4 and out.tokens[:4] == tokens
        assert all(step.accept_prob == 1.0 for step in out.steps)


def test_round_structure_and_reproducibility():
    rng = np.random.default_rng(9)
    tokens, draft, target = random_round(rng, 5, 10)
    a = verify_sampling(tokens, draft, target, seed=42)
    b = verify_sampling(tokens, draft, target, seed=42)
    assert a == b
    assert len(a.tokens) == a.n_accepted + 1 and len(a.steps) == min(a.n_accepted + 1, 5)
    assert a.tokens[: a.n_accepted] == tokens[: a.n_accepted]
    for step in a.steps:
        assert step.accept_prob == pytest.approx(min(1.0, step.p / step.q))
        assert step.accepted == (step.u < step.accept_prob)
    if not a.bonus:
        assert a.correction == a.steps[-1].target_token


def test_a_rejected_token_is_never_the_correction_when_p_is_below_q():
    # the residual max(0, p − q) is zero where p ≤ q, so the rejected token cannot come back
    target = np.array([[0.1, 0.6, 0.3], [1 / 3, 1 / 3, 1 / 3]])
    draft = np.array([[0.8, 0.1, 0.1]])
    for seed in range(300):
        out = verify_sampling([0], draft, target, seed=seed)
        if not out.bonus:
            assert out.tokens == [out.correction] and out.correction != 0


def test_no_draft_tokens_gives_one_target_token():
    out = verify_sampling([], None, [[0.0, 1.0]], seed=0)
    assert out.tokens == [1] and out.bonus and out.n_accepted == 0
    assert verify_greedy([], [[0.2, 0.8]]).tokens == [1]


# --- greedy: speculative decoding with verify_greedy is the target's own argmax decoding -------

VOCAB = 12


def toy_model(context, sharpness, salt):
    """A deterministic next-token distribution over a 12-token vocabulary from the last 2 tokens."""
    key = (hash((tuple(context[-2:]), salt)) & 0xFFFFFFFF)
    logits = np.random.default_rng(key).normal(size=VOCAB) * sharpness
    e = np.exp(logits - logits.max())
    return e / e.sum()


def target(context):
    return toy_model(context, 2.0, "target")


def draft(context):
    # a weaker guesser: the target blurred with noise of its own
    mix = 0.6 * target(context) + 0.4 * toy_model(context, 1.0, "draft")
    return mix / mix.sum()


def greedy_decode(prompt, n):
    seq = list(prompt)
    while len(seq) < len(prompt) + n:
        seq.append(int(np.argmax(target(seq))))
    return seq


def speculative_greedy_decode(prompt, n, k):
    seq = list(prompt)
    rounds = 0
    while len(seq) < len(prompt) + n:
        guesses = []
        for _ in range(k):
            guesses.append(int(np.argmax(draft(seq + guesses))))
        rows = np.array([target(seq + guesses[:i]) for i in range(k + 1)])
        seq += verify_greedy(guesses, rows).tokens
        rounds += 1
    return seq[: len(prompt) + n], rounds


@pytest.mark.parametrize("k", [1, 3, 5])
def test_greedy_speculation_reproduces_target_argmax_decoding(k):
    total_rounds = 0
    for p in range(40):
        prompt = [p % VOCAB, (7 * p) % VOCAB]
        fast, rounds = speculative_greedy_decode(prompt, 60, k)
        assert fast == greedy_decode(prompt, 60)
        total_rounds += rounds
    assert total_rounds < 40 * 60  # more than one token per round on average


def test_greedy_round_details():
    probs = np.array([[0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.5, 0.25, 0.25]])
    out = verify_greedy([1, 0], probs)
    assert out.tokens == [1, 2] and out.n_accepted == 1 and not out.bonus and out.correction == 2
    assert [s.accepted for s in out.steps] == [True, False]
    out = verify_greedy([1, 2], probs)
    assert out.tokens == [1, 2, 0] and out.bonus and out.correction is None
