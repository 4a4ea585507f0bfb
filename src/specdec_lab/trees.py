"""Token trees: how one forward pass checks them, what they yield, and the best one for a budget.

A tree is given as in ``positional.expected_tokens_tree``: ``parents[i]`` is node i's parent (−1:
the last token already written), parents before children; ``acceptance[i]`` is P(node i is the
target's token | its parent was). Children of one node are different tokens for the same
position, so at most one of them is right.

* ``tree_attention_mask(parents)`` — the mask that lets one forward pass score every node: node i
  sees itself and its ancestors (and the text before the tree), never a sibling's branch.
* ``simulate_tree_rounds`` / ``tree_monte_carlo_check`` — rounds of verification walked down the
  tree by simulation, against ``expected_tokens_tree`` (Medusa §2.3.3, Sequoia Prop. 3.4).
* ``optimal_tree`` — the best tree for a node budget under the positional (rank) acceptance
  model, by Sequoia's dynamic programme (Chen et al. 2024, Alg. 1; depth limit as in its Alg. 4),
  next to ``best_tree``'s best-first.
* ``chain_limit``, ``k_chains_limit``, ``full_tree_limit`` and ``tree_scaling`` — how far each
  shape can go as it grows.
* ``tree_serving`` — trees and concurrency: the best tree size shrinks as the GPU gets busy.

**The rank model.** The draft ranks its candidates for every position; ``accuracy[r]`` is P(the
rank-r candidate is the target's token), the same at every depth (a 1-D ``accuracy``), or
``accuracy[d][r]`` at depth d+1 (2-D, as ``best_tree`` takes it). Ranks of one position add up to
at most 1. A node's children are the candidates of ranks 0, 1, …, m−1: contiguous, because
candidates *sampled* from the draft (as SpecInfer and Sequoia do) come in the order they are
drawn — there is no second draw without a first.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .positional import _checked_tree, best_tree, expected_tokens_tree, tree_from_choices  # noqa: F401 (best_tree: the doctests)
from .progress import Progress
from .serving import DEFAULT_T_FLOP, _step

__all__ = [
    "TreeCheck",
    "TreeScaling",
    "TreeServing",
    "chain_choices",
    "chain_limit",
    "full_tree_choices",
    "full_tree_limit",
    "k_chains_choices",
    "k_chains_limit",
    "optimal_tree",
    "optimal_tree_tokens",
    "rank_tree",
    "simulate_tree_rounds",
    "tree_attention_mask",
    "tree_monte_carlo_check",
    "tree_scaling",
    "tree_serving",
]

MAX_NODES = 4096          # trees the course builds: a few hundred nodes at most
MAX_DP_NODES = 256        # the dynamic programme costs ~ depth · width · nodes² steps
_CHUNK_CELLS = 2_000_000  # a simulation holds at most this many (round, child) cells at a time
MAX_ROUNDS = 10_000_000
_SLACK = 1e-9


# --- a. one forward pass checks a whole tree ---------------------------------------------------


def tree_attention_mask(parents) -> np.ndarray:
    """``mask[i, j]`` is True when node i may attend to node j: j is i itself or an ancestor.

    In the verification pass the tree's nodes are laid out one after another after the text,
    and this mask (together with every node seeing all of the text) makes each node's output the
    target's prediction for *its own* path: a sibling's branch stays invisible. So one forward
    pass over n nodes checks the whole tree, as one over a chain of n tokens would.

    >>> tree_attention_mask([-1, -1, 0, 0, 2]).astype(int)
    array([[1, 0, 0, 0, 0],
           [0, 1, 0, 0, 0],
           [1, 0, 1, 0, 0],
           [1, 0, 0, 1, 0],
           [1, 0, 1, 0, 1]])
    """
    ids = _checked_parents(parents)
    n = ids.size
    mask = np.eye(n, dtype=bool)
    for i, p in enumerate(ids):
        if p >= 0:
            mask[i] |= mask[p]          # parents come first: the parent's row is complete
    return mask


# --- b. tokens per round, simulated -------------------------------------------------------------


def simulate_tree_rounds(parents, acceptance, rounds=30_000, seed=None) -> np.ndarray:
    """Tokens written in each of ``rounds`` simulated rounds: 1 + the length of the accepted path.

    Each round starts at the root; at a node, the target's next token is child c with
    probability ``acceptance[c]`` (siblings exclude each other) or none of the children with what
    is left, and the walk stops there. All rounds step down together, one depth at a time.

    >>> simulate_tree_rounds([-1, -1, 0], [0.5, 0.25, 0.5], rounds=8, seed=1)
    array([2, 1, 3, 1, 2, 2, 1, 3])
    """
    parents, acc = _checked_tree("parents", parents, "acceptance", acceptance)
    if len(parents) > MAX_NODES:
        raise ValueError(f"parents 有 {len(parents)} 個節點，有效範圍 0 到 {MAX_NODES}")
    rounds = check.scalar_int("rounds", rounds, minimum=1, maximum=MAX_ROUNDS)
    rng = check.seed_or_generator(seed)
    n = len(parents)
    # children of each node (root = row n) in a padded table, with cumulative acceptances
    owner = np.array([p if p >= 0 else n for p in parents], dtype=np.intp)
    counts = np.bincount(owner, minlength=n + 1)
    width = max(int(counts.max(initial=0)), 1)
    kids = np.full((n + 1, width), -1, dtype=np.intp)
    cum = np.full((n + 1, width), np.inf)
    filled = np.zeros(n + 1, dtype=np.intp)
    for i, o in enumerate(owner):
        kids[o, filled[o]] = i
        filled[o] += 1
    for o in range(n + 1):
        m = filled[o]
        cum[o, :m] = np.cumsum(acc[kids[o, :m]])
    tokens = np.empty(rounds, dtype=np.int64)
    chunk = max(1, _CHUNK_CELLS // width)
    with Progress("樹的模擬", rounds, unit="輪") as progress:
        for start in range(0, rounds, chunk):
            stop = min(rounds, start + chunk)
            tokens[start:stop] = _walk(kids, cum, filled, n, stop - start, rng)
            progress.update(stop)
    return tokens


def _walk(kids, cum, filled, root, rounds, rng) -> np.ndarray:
    """Tokens of ``rounds`` rounds walked down the padded child table together."""
    width = kids.shape[1]
    here = np.full(rounds, root, dtype=np.intp)
    tokens = np.ones(rounds, dtype=np.int64)
    walking = np.ones(rounds, dtype=bool)
    while walking.any():
        idx = np.flatnonzero(walking)
        u = rng.random(idx.size)
        pick = (u[:, None] >= cum[here[idx]]).sum(axis=1)     # which child's slice u falls in
        nxt = kids[here[idx], np.minimum(pick, width - 1)]
        moved = (pick < filled[here[idx]]) & (nxt >= 0)
        here[idx[moved]] = nxt[moved]
        tokens[idx[moved]] += 1
        walking[idx[~moved]] = False
    return tokens


@dataclass(frozen=True)
class TreeCheck:
    """Simulated tree rounds against ``expected_tokens_tree``; ``z`` = (mean − closed form) ÷ SE."""

    rounds: int
    mean: float
    std_error: float
    closed_form: float
    z: float
    counts: np.ndarray        # counts[j]: rounds that wrote j + 1 tokens

    def __str__(self) -> str:
        return (f"模擬 {self.rounds:,} 輪平均 {self.mean:.4f}，公式 {self.closed_form:.4f}，"
                f"標準誤 {self.std_error:.4f}，z = {self.z:+.2f}")


def tree_monte_carlo_check(parents, acceptance, rounds=30_000, seed=None) -> TreeCheck:
    """``simulate_tree_rounds`` against ``expected_tokens_tree`` (|z| ≤ 5 is agreement).

    >>> c = tree_monte_carlo_check([-1, 0, 1], [0.5, 0.5, 0.5], rounds=40_000, seed=7)
    >>> c.closed_form, abs(c.z) < 5
    (1.875, True)
    """
    sample = simulate_tree_rounds(parents, acceptance, rounds=rounds, seed=seed)
    closed = expected_tokens_tree(parents, acceptance)
    mean = float(sample.mean())
    se = float(sample.std(ddof=1) / np.sqrt(sample.size)) if sample.size > 1 else 0.0
    if se > 0:
        z = (mean - closed) / se
    else:
        z = 0.0 if abs(mean - closed) <= 1e-12 else float("inf")
    counts = np.bincount((sample - 1).astype(np.intp))
    return TreeCheck(int(sample.size), mean, se, closed, float(z), counts)


# --- d. the best tree for a node budget ---------------------------------------------------------


def optimal_tree(accuracy, nodes, max_depth=None) -> list[tuple[int, ...]]:
    """The ``nodes``-node tree with the most tokens per round, by Sequoia's dynamic programme.

    ``accuracy`` is 1-D (rank r's acceptance, the same at every depth) or 2-D (``accuracy[d][r]``
    at depth d+1, as for ``best_tree``; the tree is then no deeper than its rows).
    ``max_depth`` limits the depth further (Sequoia Alg. 4). Every node's children are ranks
    0..m−1 (see the module text). Returns ``best_tree``'s format: rank tuples, best path
    probability first (a parent before its children; ties: the smaller tuple first).

    When acceptance falls with rank, the best-first of ``best_tree`` is contiguous anyway and
    both give the same tree. When it does not (say rank 1 is likelier than rank 0), best-first
    takes rank 1 without rank 0: fine for a draft that sends any chosen ranks of its top list
    (greedy top-k), but not realisable with *sampled* candidates, whose second draw needs a
    first — there this contiguous optimum is the one to use. (Trees of equal value can come
    out differently from the two: with a 1-D ``accuracy``, (0, 1) and (1, 0) always tie.)

    >>> optimal_tree([0.6, 0.2], 4)
    [(0,), (0, 0), (0, 0, 0), (1,)]
    >>> optimal_tree([0.6, 0.2], 2, max_depth=1)
    [(0,), (1,)]
    >>> optimal_tree([0.3, 0.5], 1), best_tree([[0.3, 0.5]], 1)     # best-first skips rank 0
    ([(0,)], [(1,)])
    """
    acc, nodes, depth = _rank_table("nodes", accuracy, nodes, max_depth)
    _, choice = _programme(acc, nodes, depth)
    tree: list[tuple[tuple[int, ...], float]] = []

    def build(prefix: tuple[int, ...], reach: float, n: int, d: int, r: int) -> None:
        while n > 0:                       # spend n nodes on ranks r, r+1, … under prefix
            m = int(choice[d][r][n])       # this rank's subtree takes m nodes
            node = prefix + (r,)
            reach_here = reach * acc[d, r]
            tree.append((node, reach_here))
            build(node, reach_here, m - 1, d + 1, 0)
            n, r = n - m, r + 1

    build((), 1.0, nodes, 0, 0)
    return [node for node, _ in sorted(tree, key=lambda t: (-t[1], t[0]))]


def optimal_tree_tokens(accuracy, max_nodes, max_depth=None) -> np.ndarray:
    """Tokens per round of the optimal tree of n nodes, for n = 0..``max_nodes`` (one array).

    >>> optimal_tree_tokens([0.6, 0.2], 3).round(3)
    array([1.   , 1.6  , 1.96 , 2.176])
    """
    acc, max_nodes, depth = _rank_table("max_nodes", accuracy, max_nodes, max_depth)
    value, _ = _programme(acc, max_nodes, depth)
    return 1.0 + value[0][0]


def _programme(acc: np.ndarray, nodes: int, depth: int):
    """g[d][r][n]: the most expected accepted tokens from n nodes spent on the children of ranks
    r, r+1, … of one node whose children sit at depth d+1 (−inf: impossible); the choice records
    how many of the n the rank-r child's subtree takes. g[d][0] is Sequoia's T(n) for a subtree
    that may go depth − d levels down."""
    width = acc.shape[1]
    n_all = np.arange(nodes + 1)
    zero_only = np.where(n_all == 0, 0.0, -np.inf)
    n_idx, m_idx = np.nonzero(n_all[None, :] <= n_all[:, None])   # pairs m ≤ n
    g = [[zero_only] * (width + 1) for _ in range(depth + 1)]     # g[depth]: no room below
    choice = [[None] * width for _ in range(depth)]
    total = np.full((nodes + 1, nodes + 1), -np.inf)               # [n, m], reused
    # rows equal to every row above them: once a level repeats the one below, all above repeat it
    same_above = [bool(np.all(acc[: d + 1] == acc[d])) for d in range(depth)]
    for d in range(depth - 1, -1, -1):
        below = g[d + 1][0]                              # best subtree under a child, by size
        if d + 1 < depth and same_above[d] and np.array_equal(g[d + 1][0], g[d + 2][0]) \
                and bool(np.all(acc[d] == acc[d + 1])):
            for above in range(d, -1, -1):               # converged: deeper room no longer helps
                g[above], choice[above] = g[d + 1], choice[d + 1]
            break
        for r in range(width - 1, -1, -1):
            # the rank-r child takes m ≥ 1 nodes: acc·(1 + below[m−1]) + g[d][r+1][n−m]
            head = np.full(nodes + 1, -np.inf)
            fits = np.flatnonzero(np.isfinite(below[:-1]))          # (0 · −inf would be NaN)
            head[fits + 1] = acc[d, r] * (1.0 + below[fits])
            total[n_idx, m_idx] = head[m_idx] + g[d][r + 1][n_idx - m_idx]
            best_m = np.argmax(total, axis=1)
            best = total[n_all, best_m]
            best[0] = 0.0
            g[d][r] = best
            choice[d][r] = best_m
    return g, choice


def _tokens_by_depth(acc: np.ndarray, nodes: int, depth: int) -> np.ndarray:
    """[L − 1, n]: tokens per round of the optimal tree of n nodes at most L deep, L = 1..depth,
    for a 1-D rank accuracy (one run of the programme: g[depth − L][0] is the depth-L answer);
    NaN where no tree of n nodes fits in L levels."""
    g, _ = _programme(np.tile(acc, (depth, 1)), nodes, depth)
    out = np.array([1.0 + g[depth - L][0] for L in range(1, depth + 1)])
    out[~np.isfinite(out)] = np.nan
    # once more depth no longer changes any answer it never will: leave those rows out
    while out.shape[0] > 1 and np.array_equal(out[-1], out[-2], equal_nan=True):
        out = out[:-1]
    return out


# --- shapes and their limits --------------------------------------------------------------------


def chain_choices(depth) -> list[tuple[int, ...]]:
    """The chain: the top candidate at every position, ``depth`` nodes.

    >>> chain_choices(3)
    [(0,), (0, 0), (0, 0, 0)]
    """
    depth = check.scalar_int("depth", depth, minimum=0, maximum=MAX_NODES)
    return [(0,) * d for d in range(1, depth + 1)]


def k_chains_choices(k, nodes) -> list[tuple[int, ...]]:
    """``k`` chains: the root's top-``k`` candidates, each followed by the top candidate at every
    later position (independent sequences), ``nodes`` nodes shared as evenly as possible (the
    better-ranked chains take the extra ones).

    >>> k_chains_choices(2, 5)
    [(0,), (1,), (0, 0), (1, 0), (0, 0, 0)]
    """
    k = check.scalar_int("k", k, minimum=1, maximum=MAX_NODES)
    nodes = check.scalar_int("nodes", nodes, minimum=0, maximum=MAX_NODES)
    out = []
    for i in range(nodes):
        level, rank = divmod(i, k)
        out.append((rank,) + (0,) * level)
    return out


def full_tree_choices(width, depth) -> list[tuple[int, ...]]:
    """Every rank below ``width`` at every node, ``depth`` levels: width + width² + … nodes.

    >>> full_tree_choices(2, 2)
    [(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)]
    """
    width = check.scalar_int("width", width, minimum=1, maximum=MAX_NODES)
    depth = check.scalar_int("depth", depth, minimum=0, maximum=MAX_NODES)
    if _capacity(width, depth) > MAX_NODES:
        raise ValueError(f"width = {width}、depth = {depth} 的滿樹有 {_capacity(width, depth) - 1:,} 個以上的節點，"
                         f"有效範圍最多 {MAX_NODES} 個")
    levels = [[()]]
    for _ in range(depth):
        levels.append([node + (r,) for node in levels[-1] for r in range(width)])
    return [node for level in levels[1:] for node in level]


def rank_tree(choices, accuracy) -> tuple[list[int], np.ndarray]:
    """``tree_from_choices`` that also takes a 1-D ``accuracy`` (the same at every depth).

    >>> rank_tree(chain_choices(2), [0.5, 0.3])
    ([-1, 0], array([0.5, 0.5]))
    """
    choices = list(choices) if hasattr(choices, "__iter__") and not isinstance(choices, (str, bytes)) else choices
    acc = _rank_vector(accuracy)
    if acc.ndim == 1:
        depth = max((len(c) for c in choices if hasattr(c, "__len__")), default=1)
        acc = np.tile(acc, (max(depth, 1), 1))
    return tree_from_choices(choices, acc)


def chain_limit(accuracy):
    """What a chain of top candidates approaches as it grows: 1/(1 − p₁), p₁ = ``accuracy[0]``.

    A chain of depth D yields 1 + p₁ + … + p₁^D < 1/(1 − p₁): however long, it never passes it
    (``inf`` when p₁ = 1). Broadcasts over leading axes.

    >>> chain_limit([0.8, 0.1])
    5.000000000000001
    """
    acc = _rank_vector(accuracy)
    with np.errstate(divide="ignore"):
        return check.unwrap(1.0 / (1.0 - acc[..., 0]))


def k_chains_limit(accuracy, k):
    """What ``k`` independent chains approach: 1 + (p₁ + … + p_k)/(1 − p₁).

    Against one chain this adds (p₂ + … + p_k)/(1 − p₁), and p₂ + … + p_k ≤ 1 − p₁ (the ranks of
    one position add up to at most 1), so k chains gain at most 1 token per round over the chain
    — exactly 1 only when the top k ranks together are always right. Broadcasts over ``k``.

    >>> round(k_chains_limit([0.8, 0.1, 0.05], 3), 6), round(chain_limit([0.8, 0.1, 0.05]) + 1, 6)
    (5.75, 6.0)
    """
    acc = _rank_vector(accuracy)
    kk = check.integer("k", k, minimum=1, maximum=acc.shape[-1])
    top = np.take(np.cumsum(acc, axis=-1), kk - 1, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(top > 0, 1.0 + top / (1.0 - acc[..., 0]), 1.0)
    return check.unwrap(out)


def full_tree_limit(accuracy, width=2):
    """What the full tree with the top ``width`` ranks at every node approaches: 1/(1 − P),
    P = p₁ + … + p_width (``inf`` when P = 1: then trees can grow without bound, slowly — a
    full tree of depth D has ~width^D nodes). No tree using only those ranks passes it.

    >>> round(full_tree_limit([0.6, 0.2, 0.1], 2), 6)
    5.0
    """
    acc = _rank_vector(accuracy)
    w = check.integer("width", width, minimum=1, maximum=acc.shape[-1])
    top = np.take(np.cumsum(acc, axis=-1), w - 1, axis=-1)
    with np.errstate(divide="ignore"):
        return check.unwrap(1.0 / (1.0 - np.minimum(top, 1.0)))


@dataclass(frozen=True)
class TreeScaling:
    """Tokens per round against the node budget for three shapes, and the limits of two."""

    nodes: np.ndarray       # 1..max_nodes
    chain: np.ndarray
    k_chains: np.ndarray
    optimal: np.ndarray
    k: int
    chain_limit: float
    k_chains_limit: float


def tree_scaling(accuracy, max_nodes=64, k=4, max_depth=None) -> TreeScaling:
    """For n = 1..``max_nodes`` nodes: tokens per round of the chain, ``k`` chains
    (``k_chains_choices``) and the optimal tree (``optimal_tree``), under a 1-D rank ``accuracy``.

    >>> s = tree_scaling([0.6, 0.2, 0.1], max_nodes=4, k=2)
    >>> s.chain.round(3), s.k_chains.round(3), s.optimal.round(3)
    (array([1.6  , 1.96 , 2.176, 2.306]), array([1.6 , 1.8 , 2.16, 2.28]), array([1.6  , 1.96 , 2.176, 2.376]))
    """
    acc = _rank_vector(accuracy)
    if acc.ndim != 1:
        raise ValueError(f"accuracy 在這裡必須是一維（各名次的命中率），收到形狀 {acc.shape}")
    max_nodes = check.scalar_int("max_nodes", max_nodes, minimum=1, maximum=MAX_DP_NODES)
    k = check.scalar_int("k", k, minimum=1, maximum=acc.size)
    nodes = np.arange(1, max_nodes + 1)
    # the shapes' sums in closed form (equal to expected_tokens_tree on their choices; tested):
    # a chain of L nodes after a first node of rank j adds acc[j]·(1 + p₁ + … + p₁^(L−1))
    run = np.concatenate(([0.0], np.cumsum(acc[0] ** np.arange(max_nodes))))     # run[L] = Σ_{i<L} p₁^i
    chain = 1.0 + acc[0] * run[nodes]
    lengths = (nodes[:, None] - np.arange(k)[None, :] + k - 1) // k             # chain j of n nodes
    chains = 1.0 + (acc[None, :k] * run[lengths]).sum(axis=1)
    best = optimal_tree_tokens(acc, max_nodes, max_depth)[1:]
    return TreeScaling(nodes, chain, chains, best, k, float(chain_limit(acc)), float(k_chains_limit(acc, k)))


# --- f. trees and concurrency -------------------------------------------------------------------


@dataclass(frozen=True)
class TreeServing:
    """``speedup[i, n]``: per-user speed with the best tree of n nodes (n = 0: no speculation)
    at ``concurrency[i]``, over speed without speculation; ``depth[i, n]`` and ``tokens[i, n]``
    that tree's depth and tokens per round; ``best_nodes[i]`` the tree size with the highest
    speedup at ``concurrency[i]``."""

    concurrency: np.ndarray
    nodes: np.ndarray
    tokens: np.ndarray
    depth: np.ndarray
    speedup: np.ndarray

    @property
    def best_nodes(self) -> np.ndarray:
        return self.nodes[np.argmax(self.speedup, axis=1)]

    @property
    def best_speedup(self) -> np.ndarray:
        return self.speedup.max(axis=1)


def tree_serving(accuracy, concurrency, max_nodes=64, draft_cost=0.05, t_flop=DEFAULT_T_FLOP,
                 max_depth=None) -> TreeServing:
    """Speedup of a tree of n nodes at each concurrency N, in lesson 1's serving model.

    A round drafts D levels (D·``draft_cost``·step(N)) and verifies every user's n + 1
    positions in one pass, step(N·(n + 1)), with step(x) = max(1, ``t_flop``·x) as in
    ``serving``; it writes ``tokens(n, D)`` tokens per user (the optimal tree of n nodes and
    depth ≤ D). Speedup = tokens ÷ (D·draft_cost + step(N(n+1))/step(N)); for each n the best
    depth is taken (Sequoia §4.1's hardware-aware choice). While the GPU is idle a bigger tree is
    nearly free; once N·(n+1)·t_flop passes 1 every node costs time, so the best tree shrinks as N
    grows, down to n = 0 (speculation off) past lesson 1's crossover. A chain of k nodes gives
    ``serving_curves(...).gain`` exactly.

    >>> s = tree_serving([0.6, 0.2, 0.1], [1, 8, 64], max_nodes=32)
    >>> s.best_nodes.tolist(), s.best_speedup.round(2).tolist()
    ([32, 5, 0], [3.11, 2.18, 1.0])
    """
    acc = _rank_vector(accuracy)
    if acc.ndim != 1:
        raise ValueError(f"accuracy 在這裡必須是一維（各名次的命中率），收到形狀 {acc.shape}")
    n_users = np.atleast_1d(check.positive("concurrency", concurrency, what="正的使用者人數"))
    if n_users.ndim != 1:
        raise ValueError(f"concurrency 必須是一串人數（一維），收到形狀 {n_users.shape}")
    max_nodes = check.scalar_int("max_nodes", max_nodes, minimum=0, maximum=MAX_DP_NODES)
    check.scalar("draft_cost", draft_cost)
    check.scalar("t_flop", t_flop)
    c = float(check.nonnegative("draft_cost", draft_cost))
    t = float(check.nonnegative("t_flop", t_flop))
    deepest = max_nodes if max_depth is None else check.scalar_int("max_depth", max_depth, minimum=1,
                                                                    maximum=MAX_NODES)
    deepest = max(1, min(deepest, max_nodes))
    nodes = np.arange(max_nodes + 1)
    tokens = _tokens_by_depth(acc, max_nodes, deepest)                       # [D − 1, n]
    base = _step(t, n_users)[:, None, None]                                   # [N, 1, 1]
    verify = _step(t, n_users[:, None, None] * (nodes[None, None, :] + 1))    # [N, 1, n]
    depths = np.arange(1, tokens.shape[0] + 1)[None, :, None]
    speed = tokens[None, :, :] / (depths * c + verify / base)                 # [N, D, n]; NaN: no such tree
    best_d = np.argmax(np.nan_to_num(speed, nan=-np.inf), axis=1)            # [N, n]
    speedup = np.take_along_axis(speed, best_d[:, None, :], axis=1)[:, 0, :]
    speedup[:, 0] = 1.0                                                       # n = 0: no draft, no cost
    depth = np.where(nodes == 0, 0, best_d + 1)
    tokens_n = np.take_along_axis(np.broadcast_to(tokens, (n_users.size, *tokens.shape)),
                                  best_d[:, None, :], axis=1)[:, 0, :]
    tokens_n[:, 0] = 1.0
    return TreeServing(n_users, nodes, tokens_n, depth, speedup)


def _padded(values: np.ndarray, size: int) -> np.ndarray:
    """Tokens for n = 0..size when trees of this depth hold fewer nodes: impossible sizes are NaN."""
    out = np.full(size + 1, np.nan)
    out[: values.size] = values
    return out


# --- checks -------------------------------------------------------------------------------------


def _checked_parents(parents) -> np.ndarray:
    if isinstance(parents, (str, bytes)) or np.ndim(parents) != 1:
        raise ValueError(f"parents 必須是一串父節點編號（一維，-1 表示接在根上），收到 {parents!r}")
    if np.size(parents) == 0:
        return np.zeros(0, dtype=np.int64)
    n = np.size(parents)
    if n > MAX_NODES:
        raise ValueError(f"parents 有 {n} 個節點，有效範圍 0 到 {MAX_NODES}")
    ids = check.integer("parents", parents, minimum=-1, maximum=n - 1)
    for i, p in enumerate(ids):
        if p == i:
            raise ValueError(f"parents[{i}] 是 {i}：節點不能是自己的父節點（成環），有效範圍 -1 到 {i - 1}")
        if p > i:
            raise ValueError(f"parents[{i}] 是 {int(p)}：父節點必須排在子節點前面，有效範圍 -1 到 {i - 1}"
                             "（-1 表示接在根上；這也排除了環）")
    return ids


def _rank_vector(accuracy) -> np.ndarray:
    acc = check.probability("accuracy", accuracy)
    if acc.ndim == 0:
        raise ValueError(f"accuracy 必須是各名次候選字的命中率（一串數），收到 {accuracy!r}")
    sums = acc.sum(axis=-1)
    if np.any(sums > 1.0 + _SLACK):
        raise ValueError(f"accuracy 的總和是 {float(np.max(sums)):.6g}，有效範圍 [0, 1]"
                         "（同一個位置的各名次候選字最多只有一個會對）")
    return acc


def _rank_table(name, accuracy, nodes, max_depth) -> tuple[np.ndarray, int, int]:
    """A 2-D accuracy table, the node budget and the depth limit for the programme."""
    acc = _rank_vector(accuracy)
    if acc.ndim > 2:
        raise ValueError(f"accuracy 必須是一維（各名次）或二維（各深度 × 各名次），收到形狀 {acc.shape}")
    limit = MAX_NODES if max_depth is None else check.scalar_int("max_depth", max_depth, minimum=1,
                                                                 maximum=MAX_NODES)
    n = check.scalar_int(name, nodes, minimum=0, maximum=MAX_DP_NODES)
    if acc.ndim == 1:                   # the same at every depth: no tree is deeper than n
        depth = max(1, min(n, limit))
        acc = np.tile(acc, (depth, 1))
    depth = min(acc.shape[0], limit)
    capacity = _capacity(acc.shape[1], depth)
    if n > capacity:
        raise ValueError(f"{name} 是 {n}：寬 {acc.shape[1]}、深 {depth} 的樹最多 {capacity} 個節點，"
                         f"有效範圍 0 到 {capacity}")
    return acc, n, depth


def _capacity(width: int, depth: int) -> int:
    """Nodes in the full tree of this width and depth, capped just above MAX_NODES."""
    total, level = 0, 1
    for _ in range(depth):
        level *= width
        total += level
        if total > MAX_NODES:
            return MAX_NODES + 1
    return total
