"""Acceptance that depends on where a draft token sits: in a chain, and in a tree.

Eq. 1 assumes every draft position is accepted with the same α. Real drafters are surer of their
first guess than of their fifth (a parallel or block drafter's tail can collapse), and tree
drafters (Medusa, EAGLE) send several candidates for the same position in one verification.

* A chain: ``expected_tokens_positional(alphas)`` (in ``closed_form``) = 1 + Σᵢ Πⱼ≤ᵢ αⱼ, and
  ``positional_speedups(alphas, draft_cost)`` — what verifying only the first k positions buys,
  for every k.
* A tree: ``expected_tokens_tree(parents, acceptance)``, Medusa §2.3.3 (Cai et al. 2024): the
  expected number of accepted draft tokens is the sum over the tree's nodes of the product of the
  acceptance probabilities on the path from the root to that node. The target adds one token of
  its own every round, so the tokens per round are 1 + that sum — the same convention as
  ``expected_tokens``, and a chain gives back ``expected_tokens_positional``.

A tree is a list of parent indices: node i hangs under node ``parents[i]``, or under the last
token already in the text when ``parents[i] == -1``; parents come before their children.
``acceptance[i]`` is the chance that node i is the target's token, given that its parent was.
Two children of one node are different tokens for the same position, so at most one of them can
be right: their acceptances add up to at most 1. ``tree_from_choices`` reads Medusa's own tree
format (``medusa_choices``: one tuple of candidate ranks per node), ``best_tree`` builds the tree
Medusa's greedy construction picks for a node budget, and ``tree_table`` compares the chain with
the best trees of a few sizes.
"""
from __future__ import annotations

import heapq

import numpy as np

from . import _validate as check
from .closed_form import expected_tokens_positional
from .tables import Table

__all__ = ["positional_speedups", "expected_tokens_tree", "tree_from_choices", "best_tree", "tree_table"]

_SLACK = 1e-9  # rounding room when checking that sibling acceptances add up to at most 1


def positional_speedups(alphas, draft_cost) -> tuple[np.ndarray, np.ndarray]:
    """``(ks, speedups)``: the speedup of verifying only the first k positions, k = 1..len(alphas).

    ``alphas[i]`` is the conditional acceptance at position i+1 (as for
    ``expected_tokens_positional``); a round that drafts k tokens costs 1 + k·``draft_cost``
    target steps and yields ``expected_tokens_positional(alphas[:k])`` tokens.

    >>> ks, s = positional_speedups([0.9, 0.8, 0.1], 0.1)   # the third guess is rarely right
    >>> ks.tolist(), s.round(3).tolist()
    ([1, 2, 3], [1.727, 2.183, 2.071])
    """
    a = check.probability("alphas", alphas)
    if a.ndim != 1:
        raise ValueError(f"alphas 必須是一維的各位置接受率，收到形狀 {a.shape}")
    check.scalar("draft_cost", draft_cost)
    cost = float(check.nonnegative("draft_cost", draft_cost))
    ks = np.arange(1, a.size + 1)
    tokens = np.array([expected_tokens_positional(a[:k]) for k in ks])
    return ks, tokens / (1.0 + ks * cost)


def expected_tokens_tree(parents, acceptance) -> float:
    """Expected tokens per round from a tree of draft candidates (Medusa §2.3.3), bonus included.

    ``parents[i]`` is node i's parent (−1: the root, i.e. the last token already written), and
    every parent is listed before its children. ``acceptance[i]`` is P(node i is right | its
    parent was). Returns 1 + Σ over nodes of the product of ``acceptance`` along the path from
    the root to the node.

    >>> expected_tokens_tree([-1, 0, 1], [0.5, 0.5, 0.5])    # a chain: 1 + ½ + ¼ + ⅛
    1.875
    >>> expected_tokens_tree([-1, -1, 0], [0.5, 0.25, 0.5])  # two candidates for position 1
    2.0
    """
    parents, acc = _checked_tree("parents", parents, "acceptance", acceptance)
    reach = np.empty(acc.size)  # P(the path from the root to node i is accepted)
    for i, p in enumerate(parents):
        reach[i] = acc[i] * (reach[p] if p >= 0 else 1.0)
    return float(1.0 + reach.sum())


def tree_from_choices(choices, accuracy) -> tuple[list[int], np.ndarray]:
    """Medusa's tree format → ``(parents, acceptance)`` for ``expected_tokens_tree``.

    ``choices`` lists the nodes as tuples of candidate ranks, as Medusa's ``medusa_choices``
    does: ``(0,)`` is the draft's first choice for position 1, ``(1,)`` its second, ``(0, 2)``
    the third choice for position 2 after the first choice for position 1. Every prefix of a node
    must be a node too. ``accuracy[d][r]`` is the chance that the rank-r candidate at depth d+1 is
    the target's token (its path so far being right); each row adds up to at most 1.

    >>> tree_from_choices([(0,), (1,), (0, 0)], [[0.6, 0.3], [0.5, 0.2]])
    ([-1, -1, 0], array([0.6, 0.3, 0.5]))
    """
    acc = _checked_accuracy(accuracy)
    if isinstance(choices, (str, bytes)) or not hasattr(choices, "__iter__"):
        raise ValueError(f"choices 必須是一串節點（每個節點是一個名次 tuple，例如 (0,)、(0, 1)），收到 {choices!r}")
    nodes = [_checked_node(c, acc) for c in choices]
    order = sorted(range(len(nodes)), key=lambda i: (len(nodes[i]), nodes[i]))
    index: dict[tuple, int] = {}
    parents, acceptance = [], []
    for i in order:
        node = nodes[i]
        if node in index:
            raise ValueError(f"choices 裡 {node} 出現了兩次：每個節點只能列一次")
        parent = node[:-1]
        if parent and parent not in index:
            raise ValueError(f"choices 裡有 {node} 卻沒有它的上一層 {parent}：每個節點的前綴都必須也在 choices 裡")
        index[node] = len(parents)
        parents.append(index[parent] if parent else -1)
        acceptance.append(acc[len(node) - 1, node[-1]])
    acceptance = np.array(acceptance)
    _checked_tree("parents", parents, "acceptance", acceptance)  # siblings of one node: at most 1 together
    return parents, acceptance


def best_tree(accuracy, nodes) -> list[tuple[int, ...]]:
    """The ``nodes``-node tree with the most expected tokens per round, in Medusa's format.

    A node's contribution is its path probability (the product of ``accuracy`` along the way),
    and a child never contributes more than its parent, so the best tree of n nodes is the n
    nodes with the largest path probabilities — Medusa's greedy construction (§2.3.3). Nodes
    come out best first (a parent always before its children); among equal path probabilities
    the smaller tuple comes first.

    >>> best_tree([[0.6, 0.3], [0.4, 0.2]], 3)
    [(0,), (1,), (0, 0)]
    """
    acc = _checked_accuracy(accuracy)
    depth, width = acc.shape
    nodes = check.scalar_int("nodes", nodes, minimum=0, maximum=_tree_size(depth, width))
    chosen: list[tuple[int, ...]] = []
    frontier = [(-acc[0, r], (r,)) for r in range(width)]
    heapq.heapify(frontier)
    while len(chosen) < nodes:
        neg_reach, node = heapq.heappop(frontier)
        chosen.append(node)
        if len(node) < depth:
            for r in range(width):
                heapq.heappush(frontier, (neg_reach * acc[len(node), r], node + (r,)))
    return chosen


def tree_table(accuracy, sizes=(4, 8, 16, 32)) -> Table:
    """The chain against the best trees: tokens per round, and what each candidate buys.

    The first row is the chain that sends only the top candidate at every position of
    ``accuracy`` (as many candidates as positions); then one row per node budget in ``sizes``,
    the best tree of that many nodes (``best_tree``). "每個候選換到" is (tokens per round − 1) ÷
    candidates: the expected draft tokens accepted per candidate verified.

    >>> print(tree_table([[0.6, 0.3], [0.4, 0.2]], sizes=[3]))
    鏈每格只送第 1 名，樹是同樣候選數裡最划算的樹
    形狀          每輪產出  每個候選換到
    鏈，2 個候選      1.84         0.420
    樹，3 個候選      2.14         0.380
    """
    acc = _checked_accuracy(accuracy)
    depth = acc.shape[0]
    sizes = np.atleast_1d(check.integer("sizes", sizes, minimum=1, maximum=_tree_size(*acc.shape)))
    if sizes.ndim != 1:
        raise ValueError(f"sizes 必須是一串節點數（一維），收到形狀 {sizes.shape}")
    chain = expected_tokens_tree(list(range(-1, depth - 1)), acc[:, 0])
    shapes = [("鏈", depth, chain)]
    shapes += [("樹", int(n), expected_tokens_tree(*tree_from_choices(best_tree(acc, n), acc)))
               for n in sizes]
    rows = tuple((f"{shape}，{n} 個候選", f"{e:.2f}", f"{(e - 1) / n:.3f}") for shape, n, e in shapes)
    return Table(("形狀", "每輪產出", "每個候選換到"), rows,
                 caption="鏈每格只送第 1 名，樹是同樣候選數裡最划算的樹", align="<>>")


# --- checks -----------------------------------------------------------------------------------


def _checked_tree(parents_name, parents, acceptance_name, acceptance) -> tuple[list[int], np.ndarray]:
    if isinstance(parents, (str, bytes)) or np.ndim(parents) != 1:
        raise ValueError(f"{parents_name} 必須是一串父節點編號（一維，-1 表示接在根上），收到 {parents!r}")
    if np.size(parents) == 0:
        if np.size(acceptance) != 0:
            raise ValueError(f"{parents_name} 是空的（沒有草稿），{acceptance_name} 也必須是空的")
        return [], np.zeros(0)
    ids = check.integer(parents_name, parents, minimum=-1)
    for i, p in enumerate(ids):
        if p >= i:
            raise ValueError(
                f"{parents_name}[{i}] 必須是排在它前面的節點，有效範圍 -1 到 {i - 1}（-1 表示接在根上）；收到 {int(p)}"
            )
    acc = check.probability(acceptance_name, acceptance)
    if acc.shape != ids.shape:
        raise ValueError(
            f"{acceptance_name} 必須每個節點一個接受率：{parents_name} 有 {ids.size} 個節點，"
            f"{acceptance_name} 的形狀是 {acc.shape}"
        )
    # bincount casts "safely" to intp, which is 32-bit in Pyodide (wasm32): hand it intp
    siblings = np.bincount((ids + 1).astype(np.intp), weights=acc, minlength=ids.size + 1)
    over = np.flatnonzero(siblings > 1.0 + _SLACK)
    if over.size:
        p = int(over[0]) - 1
        kids = np.flatnonzero(ids == p).tolist()
        where = "根" if p < 0 else f"節點 {p}"
        raise ValueError(
            f"{acceptance_name}：{where}底下的節點 {kids} 接受率加起來是 {siblings[over[0]]:.6g}，有效範圍 [0, 1]"
            "（它們是同一個位置的不同候選字，最多只有一個會對）"
        )
    return [int(p) for p in ids], acc


def _checked_accuracy(accuracy) -> np.ndarray:
    acc = check.probability("accuracy", accuracy)
    if acc.ndim != 2:
        raise ValueError(f"accuracy 必須是二維表：第 d 列是第 d+1 個位置、各名次候選字的命中率，收到形狀 {acc.shape}")
    rows = acc.sum(axis=1)
    bad = np.flatnonzero(rows > 1.0 + _SLACK)
    if bad.size:
        d = int(bad[0])
        raise ValueError(
            f"accuracy[{d}] 的總和是 {rows[d]:.6g}，有效範圍 [0, 1]（同一個位置的各名次候選字最多只有一個會對）"
        )
    return acc


def _checked_node(choice, acc: np.ndarray) -> tuple[int, ...]:
    depth, width = acc.shape
    try:
        node = tuple(choice)
    except TypeError:
        raise ValueError(f"choices 的每個節點必須是名次 tuple（例如 (0, 1)），收到 {choice!r}") from None
    if not 1 <= len(node) <= depth:
        raise ValueError(f"choices 的節點 {choice!r} 深度是 {len(node)}，有效範圍 1 到 {depth}（accuracy 的列數）")
    ranks = check.integer("choices", node, minimum=0, maximum=width - 1)
    return tuple(int(r) for r in ranks)


def _tree_size(depth: int, width: int) -> int:
    """How many nodes a full tree of this depth and width has: w + w² + … + w^depth."""
    return sum(width**d for d in range(1, depth + 1))
