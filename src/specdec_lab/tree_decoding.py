"""Token-tree rounds on the course's n-gram models: many sequences at once, one round at a time.

Each round the draft model proposes a tree of candidates — every node's children are candidates
for the next position after the path to that node — and the target checks the whole tree (on a
GPU, one forward pass with the tree attention mask). Then the round walks down from the root:
it judges the root's children one after another, descends into the first accepted one, judges
its children, and so on; where nothing is accepted (or at a leaf) the target adds one token of
its own. A round thus adds (depth of the accepted path) + 1 tokens.

The tree is given in Medusa's format, as ``positional.best_tree`` returns it: one tuple of
candidate ranks per node, ``(0,)`` the first candidate for position 1, ``(0, 1)`` the second
candidate for position 2 under the first one (``full_tree(k, depth)`` and ``chain_tree(n)`` make
the usual shapes). How candidates are chosen and judged is the ``rule``:

* ``"greedy"`` — a node's children are the draft's top candidates (rank r = the (r+1)-th most
  likely token); the child equal to the target's argmax is accepted, and the target's argmax ends
  the round. The text is the target's own greedy text, token for token.
* ``"with_replacement"`` — SpecInfer's multi-step speculative sampling: a node's m children are
  m independent draws from the draft's q (the same token may come twice); a child x is accepted
  with probability min(1, p(x)/q(x)); after a rejection the target's p becomes the normalised
  residual max(0, p − q); when every child is rejected the round's last token is drawn from p.
* ``"without_replacement"`` — Sequoia's rule: the m children are drawn from q without
  replacement; after a rejection p ← norm(max(0, p − q)) as before, and then the rejected token
  leaves q too: q ← q with that token zeroed, renormalised; the next child is judged against the
  current p and q.

Two plausible but wrong rules are kept for the χ² check (``specdec_lab.tree_experiments``):

* ``"wrong_keep_p"`` — draws as SpecInfer, but leaves p unchanged after a rejection: every child
  is judged as if it were the only candidate, and the round's last token comes from
  norm(max(0, p − q)) once;
* ``"wrong_original_q"`` — draws without replacement as Sequoia, judges against the current q,
  but takes every residual against the ORIGINAL q.

``tree_decode`` advances every prompt together; the randomness of the whole batch comes from one
seeded generator (a sequence's text depends on the batch it is in; the same call gives the same
text). It returns a ``TreeRuns``: the texts and, per round, how many tokens it added and which
nodes were accepted — enough to compare a tree with a chain of as many candidates.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .lossless import _prompt
from .progress import Progress

__all__ = ["RULES", "full_tree", "chain_tree", "TreeShape", "TreeRuns", "tree_decode"]

RULES = {
    "greedy": "貪婪（接受等於大模型首選的那個孩子）",
    "with_replacement": "SpecInfer：放回抽樣，被拒後 p ← 殘差",
    "without_replacement": "Sequoia：不放回抽樣，被拒後 p ← 殘差、q 去掉被拒的字",
    "wrong_keep_p": "錯誤：被拒後 p 不變",
    "wrong_original_q": "錯誤：不放回抽樣，殘差卻用原本的 q",
}
"""The rules ``tree_decode`` knows, by name → a short zh-TW description."""

MAX_NODES = 256
"""The largest tree ``tree_decode`` accepts (nodes besides the root)."""
MAX_CHILDREN = 16
"""The most candidates one node may have."""


def full_tree(k: int, depth: int) -> list[tuple[int, ...]]:
    """Every node with ``k`` candidates down to ``depth`` positions, in Medusa's format
    (k + k² + … + k^depth nodes).

    >>> full_tree(2, 2)
    [(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)]
    """
    k = check.scalar_int("k", k, minimum=1, maximum=MAX_CHILDREN)
    depth = check.scalar_int("depth", depth, minimum=1, maximum=MAX_NODES)
    if sum(k ** d for d in range(1, depth + 1)) > MAX_NODES:
        raise ValueError(f"k = {k}、depth = {depth} 的完整樹超過 {MAX_NODES} 個節點：請把 k 或 depth 調小")
    nodes, level = [], [()]
    for _ in range(depth):
        level = [node + (r,) for node in level for r in range(k)]
        nodes += level
    return nodes


def chain_tree(n: int) -> list[tuple[int, ...]]:
    """A chain of ``n`` candidates (one per position), in Medusa's format.

    >>> chain_tree(3)
    [(0,), (0, 0), (0, 0, 0)]
    """
    n = check.scalar_int("n", n, minimum=1, maximum=MAX_NODES)
    return [(0,) * d for d in range(1, n + 1)]


@dataclass(frozen=True)
class TreeShape:
    """A tree of candidates as arrays: node 0 is the root (the last token already written), nodes
    1 … n the candidates in ``choices`` order sorted by depth then ranks.

    ``choices[i]`` is node i + 1's rank tuple; ``parents[i]`` its parent (0: the root);
    ``children[v]`` node v's children by rank, −1 after the last; ``ranks[i]`` node i + 1's rank
    among its siblings' draws (0 for the first child, 1 for the second …)."""

    choices: tuple[tuple[int, ...], ...]
    parents: np.ndarray
    depths: np.ndarray
    children: np.ndarray

    @classmethod
    def of(cls, tree) -> "TreeShape":
        """``tree``: rank tuples (Medusa's format), checked: each prefix present, no repeats, at
        most ``MAX_NODES`` nodes and ``MAX_CHILDREN`` children per node."""
        if isinstance(tree, TreeShape):
            return tree
        if isinstance(tree, (str, bytes)) or not hasattr(tree, "__iter__"):
            raise ValueError(f"tree 必須是一串節點（每個節點是一個名次 tuple，例如 (0,)、(0, 1)），收到 {tree!r}")
        nodes = []
        for node in tree:
            if isinstance(node, (str, bytes)) or not hasattr(node, "__iter__") or len(tuple(node)) == 0:
                raise ValueError(f"tree 的每個節點必須是非空的名次 tuple，例如 (0,)，收到 {node!r}")
            ranks = tuple(check.scalar_int("tree 的名次", r, minimum=0, maximum=MAX_CHILDREN - 1) for r in node)
            nodes.append(ranks)
        if not 1 <= len(nodes) <= MAX_NODES:
            raise ValueError(f"tree 必須有 1 到 {MAX_NODES} 個節點，收到 {len(nodes)} 個")
        nodes.sort(key=lambda n: (len(n), n))
        index = {(): 0}
        parents, depths = [], []
        for node in nodes:
            if node in index:
                raise ValueError(f"tree 裡 {node} 出現了兩次：每個節點只能列一次")
            if node[:-1] not in index:
                raise ValueError(f"tree 裡有 {node} 卻沒有它的上一層 {node[:-1]}：每個節點的前綴都必須也在 tree 裡")
            index[node] = len(parents) + 1
            parents.append(index[node[:-1]])
            depths.append(len(node))
        count = np.bincount(parents, minlength=len(nodes) + 1)
        children = np.full((len(nodes) + 1, max(1, int(count.max()))), -1, dtype=np.intp)
        filled = np.zeros(len(nodes) + 1, dtype=np.intp)
        for i, p in enumerate(parents, start=1):  # nodes are sorted, so siblings come in rank order
            children[p, filled[p]] = i
            filled[p] += 1
        return cls(tuple(nodes), np.array(parents, dtype=np.intp), np.array(depths, dtype=np.intp), children)

    @property
    def size(self) -> int:
        """Candidates (nodes besides the root)."""
        return len(self.choices)

    @property
    def depth(self) -> int:
        return int(self.depths.max())


@dataclass
class TreeRuns:
    """What ``tree_decode`` did: the texts, and per round how many tokens it added and how deep
    the accepted path went, and how often each node was on it."""

    rule: str
    shape: TreeShape
    prompts: list[list[int]]
    tokens: list[list[int]]  # generated tokens per prompt (prompt excluded)
    emitted: np.ndarray  # per round (all sequences' rounds in a row): tokens added (a last round may be cut)
    sequence: np.ndarray  # per round: which prompt it belongs to
    node_hits: np.ndarray  # per node (choices order): rounds whose accepted path went through it
    text: list[str]

    @property
    def rounds(self) -> int:
        """Verification rounds = target forward passes."""
        return int(self.emitted.size)

    @property
    def tokens_per_round(self) -> float:
        return float(self.emitted.mean())

    @property
    def std_error(self) -> float:
        """Standard error of ``tokens_per_round`` (rounds taken as independent)."""
        return float(self.emitted.std() / np.sqrt(max(1, self.emitted.size - 1)))

    @property
    def node_reach(self) -> np.ndarray:
        """Per node: the share of rounds whose accepted path went through it. Their sum + 1 is
        ``tokens_per_round`` (Medusa §2.3.3's sum, measured)."""
        return self.node_hits / self.rounds

    def depth_acceptance(self) -> np.ndarray:
        """Per depth d = 1 … depth: the share of rounds whose accepted path reached depth d,
        among the rounds that reached depth d − 1 at a node with children."""
        depths, shape = np.arange(1, self.shape.depth + 1), self.shape
        reached = np.array([self.node_hits[shape.depths == d].sum() for d in depths], dtype=float)
        has_children = shape.children[1:, 0] >= 0
        before = np.concatenate([[self.rounds], [self.node_hits[(shape.depths == d) & has_children].sum()
                                                 for d in depths[:-1]]])
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(before > 0, reached / np.maximum(before, 1), np.nan)

    def pairs(self) -> list[tuple[list[int], list[int]]]:
        """(prompt, generated) pairs, as ``lossless.transition_test`` reads them."""
        return list(zip(self.prompts, self.tokens))


def tree_decode(target, draft, prompts, n_tokens, tree, *, rule="greedy", temperature=1.0, draft_temperature=None,
                seed=0, progress=None) -> TreeRuns:
    """Write ``n_tokens`` characters after each of ``prompts`` with tree rounds (see the module).

    ``target`` and ``draft`` are the course's n-gram models (``ngram_lm.course_models()``, or a
    ``DilutedDraft``): anything with ``row_index``. ``tree``: rank tuples (``full_tree``,
    ``chain_tree``, ``positional.best_tree``). ``rule``: one of ``RULES``. ``temperature`` is
    both models' (ignored by ``"greedy"``, which takes the argmax); ``draft_temperature``, when
    given, is the draft's alone (a lower one: an over-confident draft). ``seed`` fixes the
    batch's randomness. ``progress`` (optional) has ``update(tokens_done, sequences_done)``; without
    one a notebook shows a ``Progress`` line once the work takes over a second.

    >>> from specdec_lab.ngram_lm import course_models
    >>> target, draft = course_models()
    >>> runs = tree_decode(target, draft, ["草稿模型"], 12, full_tree(2, 3))
    >>> from specdec_lab.lossless import target_decode
    >>> runs.tokens[0] == target_decode(target, "草稿模型", 12)
    True
    """
    if rule not in RULES:
        raise ValueError(f"rule 必須是 {'、'.join(RULES)} 其中之一，收到 {rule!r}")
    for name, model in (("target", target), ("draft", draft)):
        if not hasattr(model, "row_index"):
            raise ValueError(f"{name} 必須是課程的 n-gram 模型（CharNgramLM 或 DilutedDraft），收到 {type(model).__name__}")
    if len(draft.vocab) != len(target.vocab):
        raise ValueError(f"draft 與 target 的詞表必須相同：target 有 {len(target.vocab)} 個字，draft 有 {len(draft.vocab)} 個")
    prompts = [_prompt(target, p) for p in prompts]
    if not prompts:
        raise ValueError("prompts 不可以是空的：至少要有一個 prompt")
    n_tokens = check.scalar_int("n_tokens", n_tokens, minimum=1, maximum=1_000_000)
    width = max(target.context_length, draft.context_length)
    if min(len(p) for p in prompts) < width:
        raise ValueError(f"prompts 的每一個都必須至少 {width} 個字（模型往回看的長度），最短的只有 {min(len(p) for p in prompts)} 個")
    shape = TreeShape.of(tree)
    seed = check.scalar_int("seed", seed, minimum=0)
    greedy = rule == "greedy"
    temperature = 1.0 if greedy else temperature
    if draft_temperature is not None and not greedy:
        check.scalar("draft_temperature", draft_temperature)
        check.between("draft_temperature", draft_temperature, 0.05, 20, what="草稿的溫度")
    draft_temperature = temperature if greedy or draft_temperature is None else float(draft_temperature)
    rng = np.random.default_rng(seed)
    tails = np.array([p[len(p) - width:] for p in prompts], dtype=np.int64).reshape(len(prompts), width)
    t_at, t_table = target.row_index(tails, temperature)
    d_at, d_table = draft.row_index(tails, draft_temperature)
    top = _top_ranks(d_table, shape.children.shape[1]) if greedy else None
    count = len(prompts)
    out = np.zeros((count, n_tokens + shape.depth + 1), dtype=np.int64)
    written = np.zeros(count, dtype=np.intp)
    emitted_log, sequence_log = [], []
    node_hits = np.zeros(shape.size + 1, dtype=np.int64)
    active = np.arange(count)
    own = progress is None
    progress = Progress("樹狀解碼", n_tokens * count, sequences=count) if own else progress
    try:
        while active.size:
            tokens, t_state, d_state = _propose(shape, d_table, t_table, d_at[active], t_at[active], rule, top, rng)
            path, final = _verify(shape, tokens, t_state, d_state, t_table, d_table, rule, rng)
            depth = (path > 0).sum(axis=1)  # accepted candidates
            a = np.arange(active.size)
            new = np.zeros((active.size, shape.depth + 1), dtype=np.int64)
            new[:, :-1] = np.where(path > 0, tokens[a[:, None], np.maximum(path, 1) - 1], 0)
            new[a, depth] = final
            keep = np.arange(new.shape[1]) < (depth + 1)[:, None]  # the accepted tokens, then the final one
            where = written[active][:, None] + np.arange(new.shape[1])
            out[np.broadcast_to(active[:, None], new.shape)[keep], where[keep]] = new[keep]
            np.add.at(node_hits, path[path > 0], 1)
            emitted_log.append(depth + 1)
            sequence_log.append(active.copy())
            last_node = np.where(depth > 0, path[a, np.maximum(depth - 1, 0)], 0)
            t_at[active] = t_table.next[t_state[a, last_node], final]
            d_at[active] = d_table.next[d_state[a, last_node], final]
            written[active] += depth + 1
            active = active[written[active] < n_tokens]
            progress.update(int(np.minimum(written, n_tokens).sum()), count - active.size)
    finally:
        if own:
            progress.close()
    generated = [out[b, :n_tokens].tolist() for b in range(count)]
    return TreeRuns(rule, shape, prompts, generated, np.concatenate(emitted_log), np.concatenate(sequence_log),
                    node_hits[1:], [target.vocab.decode(g) for g in generated])


def _top_ranks(table, width: int) -> np.ndarray:
    """Each state's ``width`` most likely tokens, most likely first (ties: the smaller id), kept
    on the model's table (it lives as long as the model) so later calls skip the sort."""
    cached = getattr(table, "_top", None)
    if cached is None or cached.shape[1] < width:
        cached = table._top = np.argsort(-table.rows, axis=1, kind="stable")[:, :width]
    return cached


def _draw(rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One token per row from the (unnormalised) rows, by the inverse CDF at u · total."""
    cdf = np.cumsum(rows, axis=1)
    return np.minimum((cdf <= (u * cdf[:, -1])[:, None]).sum(axis=1), rows.shape[1] - 1)


_REPLACEMENT = {"with_replacement": True, "wrong_keep_p": True, "without_replacement": False,
                "wrong_original_q": False}
"""How each sampling rule draws a node's candidates: independently (True) or without replacement."""


def _propose(shape: TreeShape, d_table, t_table, d_root, t_root, rule, top, rng):
    """Every node's token and both models' states after it (column 0: the root), per sequence."""
    greedy = rule == "greedy"
    count, size = d_root.size, shape.size
    tokens = np.zeros((count, size), dtype=np.int64)
    d_state = np.zeros((count, size + 1), dtype=np.intp)
    t_state = np.zeros((count, size + 1), dtype=np.intp)
    d_state[:, 0], t_state[:, 0] = d_root, t_root
    for v in range(size + 1):  # parents come before their children
        kids = shape.children[v][shape.children[v] >= 0]
        if kids.size == 0:
            continue
        state = d_state[:, v]
        if greedy:
            drawn = top[state][:, :kids.size]
        else:
            q = d_table.rows[state]
            drawn = np.empty((count, kids.size), dtype=np.int64)
            u = rng.random((count, kids.size))
            if _REPLACEMENT[rule]:
                cdf = np.cumsum(q, axis=1)
                for j in range(kids.size):
                    drawn[:, j] = np.minimum((cdf <= (u[:, j] * cdf[:, -1])[:, None]).sum(axis=1), q.shape[1] - 1)
            else:
                q = q.copy()
                for j in range(kids.size):
                    drawn[:, j] = _draw(q, u[:, j])
                    q[np.arange(count), drawn[:, j]] = 0.0
        tokens[:, kids - 1] = drawn
        d_state[:, kids] = d_table.next[state[:, None], drawn]
        t_state[:, kids] = t_table.next[t_state[:, v][:, None], drawn]
    return tokens, t_state, d_state


def _verify(shape: TreeShape, tokens, t_state, d_state, t_table, d_table, rule, rng):
    """Walk down the tree for every sequence: (path, final) with path[b, d] the node accepted at
    depth d + 1 (0 past the last) and final the token the target adds."""
    count = tokens.shape[0]
    path = np.zeros((count, shape.depth + 1), dtype=np.intp)
    node = np.zeros(count, dtype=np.intp)
    final = np.zeros(count, dtype=np.int64)
    going = np.ones(count, dtype=bool)
    for level in range(shape.depth + 1):
        g = np.flatnonzero(going)
        if g.size == 0:
            break
        kids = shape.children[node[g]]  # g × max children, −1 padded
        moved = np.zeros(g.size, dtype=bool)
        if rule == "greedy":
            best = t_table.best[t_state[g, node[g]]]
            for j in range(kids.shape[1]):
                child = kids[:, j]
                hit = ~moved & (child >= 0) & (tokens[g, np.maximum(child, 1) - 1] == best)
                path[g[hit], level] = child[hit]
                moved |= hit
            final[g[~moved]] = best[~moved]
        else:
            p = t_table.rows[t_state[g, node[g]]].copy()
            q = d_table.rows[d_state[g, node[g]]].copy()
            q0 = q.copy() if rule == "wrong_original_q" else None
            u = rng.random((g.size, kids.shape[1]))
            for j in range(kids.shape[1]):
                child = kids[:, j]
                live = np.flatnonzero(~moved & (child >= 0))
                if live.size == 0:
                    break
                x = tokens[g[live], child[live] - 1]
                px, qx = p[live, x], q[live, x]
                ok = u[live, j] * qx < px  # u < min(1, p/q)
                hit = live[ok]
                path[g[hit], level] = child[hit]
                moved[hit] = True
                miss = live[~ok]
                if miss.size == 0 or rule == "wrong_keep_p":
                    continue
                against = q0[miss] if rule == "wrong_original_q" else q[miss]
                residual = np.maximum(p[miss] - against, 0.0)
                total = residual.sum(axis=1)
                fine = total > 0  # a residual of 0 happens only when p = q, where nothing is rejected
                p[miss[fine]] = residual[fine] / total[fine][:, None]
                if rule in ("without_replacement", "wrong_original_q"):
                    q[miss, x[~ok]] = 0.0
                    left = q[miss].sum(axis=1)
                    q[miss[left > 0]] /= left[left > 0][:, None]
            stop = np.flatnonzero(~moved)
            if stop.size:
                last = p[stop]
                if rule == "wrong_keep_p":  # one residual at the end, as for a single candidate
                    had = kids[stop, 0] >= 0
                    residual = np.maximum(last - q[stop], 0.0)
                    use = had & (residual.sum(axis=1) > 0)
                    last = np.where(use[:, None], residual, last)
                final[g[stop]] = _draw(last, rng.random(stop.size))
        node[g[moved]] = path[g[moved], level]
        going[g[~moved]] = False
    return path[:, :shape.depth], final
