"""The tree-verification toy's build half: settings checked, the tree drawn, one example round.

A lesson writes `<div class="sd-tree-toy" data-width="3" data-depth="4" data-nodes="10"
data-accept="0.6,0.2,0.1" markdown></div>` (every attribute optional, those are the defaults). The
build draws the best tree of `nodes` candidates (specdec_lab.best_tree under the rank acceptance
model: at every position the target's token is the draft's rank-r candidate with probability
accept[r], independently) as an SVG, with one fixed example round lit, and the chain of as many
candidates beside it. site/assets/tree-toy.js reads that tree back from the page and draws rounds
of its own; without JavaScript the example round remains.

    fill_tree_toys(page_html) -> page_html       # TreeToyError (zh-TW message) on a bad attribute
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass

TREE_TOY_RE = re.compile(r'<div class="sd-tree-toy"(?P<attrs>[^>]*)>\s*</div>')
ATTR_RE = re.compile(r'\s([\w-]+)(?:="([^"]*)")?')

PREFIX = "今天下午我們"
ROOT_WORD = "我們"
# WORDS[d] = the draft's candidates for position d + 1, rank 1 first, then a token that is none
# of them (what the target says when every candidate is wrong); any path reads as a sentence
WORDS = [["去", "在", "要", "都"], ["公園", "海邊", "學校", "河邊"], ["散步", "野餐", "跑步", "聊天"],
         ["吧", "了", "呢", "。"], ["。", "！", "～", "喔"]]
DEFAULTS = {"width": 3, "depth": 4, "nodes": 10}
DEFAULT_ACCEPT = (0.6, 0.2, 0.1, 0.05)
WIDTHS, DEPTHS, NODES = (2, 3), (3, 4), (2, 15)   # valid ranges: a tree that fits a phone
# the example round (no JavaScript): the target's token at positions 1, 2, … by rank (0-based;
# -1: none of the candidates)
EXAMPLE_DRAWS = [0, 1, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

# the drawing, in SVG units: a column per depth (the root first, then room for a bonus token)
COL, ROW, BOX_W, BOX_H, PAD = 70, 42, 56, 32, 4


class TreeToyError(ValueError):
    """A tree toy the build cannot draw; the message names the attribute, its value, the range."""


@dataclass(frozen=True)
class Settings:
    width: int
    depth: int
    nodes: int
    accept: tuple[float, ...]


def _int_setting(name: str, text: str, low: int, high: int, meaning: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()) or not low <= int(text) <= high:
        raise TreeToyError(f'樹狀驗證玩具的 data-{name}="{text}" 不行：{meaning}要是 {low} 到 {high} 的整數')
    return int(text)


def parse_settings(attrs: str) -> Settings:
    """The toy's settings from its div's attributes; TreeToyError names a bad one."""
    given = {name: value for name, value in ATTR_RE.findall(attrs)}
    known = {"data-width", "data-depth", "data-nodes", "data-accept", "markdown"}
    for name in given:
        if name not in known:
            raise TreeToyError(f"樹狀驗證玩具不認得 {name}：可以用的是 data-width、data-depth、data-nodes、data-accept")
    value = lambda key: given.get(f"data-{key}", str(DEFAULTS[key]))  # noqa: E731
    width = _int_setting("width", value("width"), *WIDTHS, "每個位置的候選數")
    depth = _int_setting("depth", value("depth"), *DEPTHS, "樹的深度")
    nodes = _int_setting("nodes", value("nodes"), *NODES, "候選總數")
    most = sum(width ** d for d in range(1, depth + 1))
    if nodes > most:
        raise TreeToyError(f'樹狀驗證玩具的 data-nodes="{nodes}" 不行：寬 {width}、深 {depth} 的樹最多 {most} 個候選')
    text = given.get("data-accept", ",".join(str(p) for p in DEFAULT_ACCEPT[:width]))
    try:
        accept = tuple(float(p) for p in text.split(","))
    except ValueError:
        accept = ()
    if (len(accept) != width or any(not 0 < p < 1 for p in accept) or sum(accept) > 1 + 1e-9
            or any(a < b for a, b in zip(accept, accept[1:]))):
        raise TreeToyError(
            f'樹狀驗證玩具的 data-accept="{text}" 不行：要寫 {width} 個（data-width）用逗號隔開的機率，'
            "依名次由大到小，每個在 0 和 1 之間（不含），加起來不超過 1，例如 "
            f'data-accept="{",".join(str(p) for p in DEFAULT_ACCEPT[:width])}"')
    return Settings(width, depth, nodes, accept)


def tree_of(settings: Settings) -> list[tuple[int, ...]]:
    """The best tree of settings.nodes candidates (specdec_lab.best_tree), rank tuples best first."""
    from specdec_lab.positional import best_tree
    return best_tree([list(settings.accept)] * settings.depth, settings.nodes)


def expected(settings: Settings, tree) -> tuple[float, float]:
    """Expected tokens per round (bonus included) of the tree and of the chain of as many candidates."""
    from specdec_lab import expected_tokens
    from specdec_lab.positional import expected_tokens_tree, tree_from_choices
    parents, acceptance = tree_from_choices(tree, [list(settings.accept)] * settings.depth)
    return expected_tokens_tree(parents, acceptance), expected_tokens(settings.accept[0], len(tree))


def layout(tree) -> dict[tuple[int, ...], int]:
    """Row of each node (the root is ()): each leaf its own row, a parent on its first child's row,
    so the draft's first choices run along the top row."""
    children = {(): []} | {node: [] for node in tree}
    for node in sorted(tree):
        children[node[:-1]].append(node)
    rows: dict[tuple[int, ...], int] = {}
    leaves = iter(range(len(tree) + 1))

    def place(node):
        for child in children[node]:
            place(child)
        rows[node] = rows[children[node][0]] if children[node] else next(leaves)
    place(())
    return rows


def walk(tree, draws) -> tuple[list[tuple[int, ...]], int]:
    """The accepted path of a round whose target tokens are `draws` (ranks, -1: none) and how
    many of the chain's first choices the same draws accept."""
    nodes, path = set(tree), [()]
    while len(path) <= len(draws) and path[-1] + (draws[len(path) - 1],) in nodes:
        path.append(path[-1] + (draws[len(path) - 1],))
    chain = 0
    while chain < len(tree) and draws[chain] == 0:
        chain += 1
    return path[1:], chain


def _word(node) -> str:
    return WORDS[len(node) - 1][node[-1]]


def _svg(settings: Settings, tree, rows, path) -> str:
    """The tree as an SVG: nodes keyed by data-path ("0.1" for rank 1 then rank 2), the example
    round's states set."""
    accepted = set(path)
    last = path[-1] if path else ()
    kids = [n for n in tree if n[:-1] == last]
    x = lambda node: PAD + len(node) * COL  # noqa: E731
    y = lambda node: PAD + rows[node] * ROW  # noqa: E731
    width = 2 * PAD + (settings.depth + 1) * COL + BOX_W
    height = 2 * PAD + max(rows.values()) * ROW + BOX_H
    key = lambda node: ".".join(map(str, node))  # noqa: E731
    edges, boxes = [], []
    for node in sorted(tree):
        parent = node[:-1]
        mid = x(parent) + BOX_W + (COL - BOX_W) / 2
        state = ' data-state="accept"' if node in accepted else ""
        edges.append(f'<path class="sd-tree-toy__edge" data-path="{key(node)}"{state} '
                     f'd="M{x(parent) + BOX_W} {y(parent) + BOX_H / 2}H{mid}V{y(node) + BOX_H / 2}H{x(node)}"/>')
    for node in [()] + sorted(tree):
        state = ("root" if node == () else "accept" if node in accepted else "reject" if node in kids else "")
        word = ROOT_WORD if node == () else _word(node)
        boxes.append(
            f'<g class="sd-tree-toy__node" data-path="{key(node)}" data-state="{state}" '
            f'transform="translate({x(node)} {y(node)})"><rect width="{BOX_W}" height="{BOX_H}" rx="5"/>'
            f'<text x="{BOX_W / 2}" y="{BOX_H / 2}">{html.escape(word)}</text></g>')
    # the target's own token after the path: drawn in the tree when the path ended at a leaf
    free = WORDS[len(path)][EXAMPLE_DRAWS[len(path)]] if len(path) < len(WORDS) else ""
    hidden = "" if not kids else ' display="none"'
    boxes.append(
        f'<g class="sd-tree-toy__node sd-tree-toy__free" data-state="bonus"{hidden} transform="translate({x(last) + COL} {y(last)})">'
        f'<rect width="{BOX_W}" height="{BOX_H}" rx="5"/><text x="{BOX_W / 2}" y="{BOX_H / 2}">'
        f'{html.escape(free)}</text></g>')
    levels = "；".join(f"第 {d} 個位置 " + "、".join(_word(n) for n in sorted(tree) if len(n) == d)
                      for d in range(1, settings.depth + 1) if any(len(n) == d for n in tree))
    return (f'<svg class="sd-tree-toy__tree" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="草稿樹，{len(tree)} 個候選：{levels}">'
            + "".join(edges) + "".join(boxes) + "</svg>")


def model_text(settings: Settings, nodes: int) -> str:
    ranks = "、".join(f"第 {r + 1} 名 {p:g}" for r, p in enumerate(settings.accept))
    other = max(0.0, 1 - sum(settings.accept))
    return (f"接受模型（按名次）：每個位置，大模型要的字是草稿{ranks}，都不是 {other:.2g}；各位置獨立。"
            f"同一層由上而下是第 1、2…名。鏈用同樣 {nodes} 個候選，每個位置只送第 1 名。")


def example_round(settings: Settings) -> str:
    """HTML of the toy with the fixed example round (what shows without JavaScript)."""
    tree = tree_of(settings)
    rows = layout(tree)
    path, chain = walk(tree, EXAMPLE_DRAWS)
    leaf = not [n for n in tree if n[:-1] == (path[-1] if path else ())]
    free = WORDS[len(path)][EXAMPLE_DRAWS[len(path)]]
    chips = "".join(f'<span class="sd-tree-toy__token" data-state="accept">{html.escape(_word(n))}</span>'
                    for n in path)
    chips += (f'<span class="sd-tree-toy__token" data-state="{"bonus" if leaf else "correction"}">'
              f'{html.escape(free)}<small>{"bonus" if leaf else "修正"}</small></span>')
    boxes = "".join(
        f'<span class="sd-tree-toy__link" data-state="{"accept" if i < chain else "reject" if i == chain else "discard"}">'
        f'{"✓" if i < chain else "✗" if i == chain else "−"}</span>' for i in range(len(tree)))
    return f"""<div class="sd-tree-toy__static">
<p class="sd-tree-toy__title"><strong>樹狀驗證：一次驗 {len(tree)} 個候選</strong>（固定的一輪示範；開啟 JavaScript 就能自己驗）</p>
<p class="sd-tree-toy__model">{html.escape(model_text(settings, len(tree)))}</p>
<p class="sd-tree-toy__prefix">前文：<span>{PREFIX}</span>…</p>
<div class="sd-tree-toy__figure">{_svg(settings, tree, rows, path)}</div>
<p class="sd-tree-toy__output">樹這一輪輸出：{chips} <span class="sd-tree-toy__nobr">→ <strong class="sd-tree-toy__yield">{len(path) + 1} 個字</strong></span></p>
<p class="sd-tree-toy__chain"><span class="sd-tree-toy__chain-label">同樣的抽籤，鏈：</span><span class="sd-tree-toy__links">{boxes}</span> <span class="sd-tree-toy__nobr">→ <strong class="sd-tree-toy__chain-yield">{chain + 1} 個字</strong></span></p>
</div>"""


def fill_tree_toys(page_html: str) -> str:
    """Draw every empty `<div class="sd-tree-toy" …></div>`: its tree, an example round, and what
    tree-toy.js needs (the tree's words, the expected tokens per round from specdec_lab)."""
    def replace(match: re.Match) -> str:
        settings = parse_settings(match.group("attrs"))
        tree = tree_of(settings)
        tree_mean, chain_mean = expected(settings, tree)
        words = html.escape(json.dumps(WORDS[:settings.depth + 1], ensure_ascii=False), quote=True)
        # the settings as used (defaults filled in), for tree-toy.js
        data = (f' data-width="{settings.width}" data-depth="{settings.depth}" data-nodes="{settings.nodes}"'
                f' data-accept="{",".join(f"{p:g}" for p in settings.accept)}" data-words="{words}"'
                f' data-expected-tree="{tree_mean:.6f}" data-expected-chain="{chain_mean:.6f}"')
        # data-search-exclude: Material's search leaves the example round out of the index
        return (f'<div class="sd-tree-toy"{data} data-search-exclude>\n'
                f"{example_round(settings)}\n</div>")
    return TREE_TOY_RE.sub(replace, page_html)
