"""The tree-verification toy's build half (site/hooks/tree_toy.py): its attributes are checked with
a message naming the attribute, the value and the range; the tree it draws is specdec_lab's best
tree for them; the example round shown without JavaScript is one consistent round, and the chain
beside it read the same draws. (The browser half: test_tree_toy_browser.py.)"""
import html as html_module
import json
import re
import sys
from pathlib import Path

import pytest

from specdec_lab import expected_tokens
from specdec_lab.positional import best_tree, expected_tokens_tree, tree_from_choices

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "hooks"))

from tree_toy import (EXAMPLE_DRAWS, TreeToyError, example_round, fill_tree_toys, layout,  # noqa: E402
                      parse_settings, walk)


@pytest.mark.parametrize("attrs, message", [
    (' data-width="5"', 'data-width="5" 不行：每個位置的候選數要是 2 到 3 的整數'),
    (' data-width="1"', 'data-width="1" 不行：每個位置的候選數要是 2 到 3 的整數'),
    (' data-depth="x"', 'data-depth="x" 不行：樹的深度要是 3 到 4 的整數'),
    (' data-depth="5"', 'data-depth="5" 不行：樹的深度要是 3 到 4 的整數'),
    (' data-nodes="16"', 'data-nodes="16" 不行：候選總數要是 2 到 15 的整數'),
    (' data-width="2" data-depth="3" data-nodes="15"', 'data-nodes="15" 不行：寬 2、深 3 的樹最多 14 個候選'),
    (' data-accept="0.2,0.6,0.1"', 'data-accept="0.2,0.6,0.1" 不行：要寫 3 個（data-width）用逗號隔開的機率'),
    (' data-accept="0.6,0.3,0.2"', 'data-accept="0.6,0.3,0.2" 不行：'),          # adds up to more than 1
    (' data-accept="0.6,0.2"', 'data-accept="0.6,0.2" 不行：要寫 3 個'),         # width 3, two numbers
    (' data-accept="0.6,0,0"', 'data-accept="0.6,0,0" 不行：'),
    (' data-accept="a,b,c"', 'data-accept="a,b,c" 不行：'),
    (' data-alpha="0.7"', "樹狀驗證玩具不認得 data-alpha：可以用的是 data-width、data-depth、data-nodes、data-accept"),
])
def test_a_bad_attribute_is_named_with_its_value_and_range(attrs, message):
    with pytest.raises(TreeToyError) as error:
        parse_settings(attrs)
    assert message in str(error.value)


def test_defaults_and_given_settings():
    s = parse_settings(" markdown")
    assert (s.width, s.depth, s.nodes, s.accept) == (3, 4, 10, (0.6, 0.2, 0.1))
    s = parse_settings(' data-width="2" data-depth="3" data-nodes="6" data-accept="0.7,0.3" markdown')
    assert (s.width, s.depth, s.nodes, s.accept) == (2, 3, 6, (0.7, 0.3))


SETTINGS = ['', ' data-width="2" data-depth="3" data-nodes="6" data-accept="0.7,0.2"',
            ' data-width="3" data-depth="4" data-nodes="15" data-accept="0.5,0.3,0.1"',
            ' data-width="2" data-depth="4" data-nodes="2" data-accept="0.4,0.4"']


def nodes_drawn(page: str) -> list[tuple[int, ...]]:
    return [tuple(map(int, p.split("."))) for p in re.findall(r'sd-tree-toy__node" data-path="([\d.]+)"', page)]


@pytest.mark.parametrize("attrs", SETTINGS)
def test_the_drawn_tree_is_the_best_tree_with_its_expected_tokens(attrs):
    s = parse_settings(attrs)
    page = fill_tree_toys(f'<div class="sd-tree-toy"{attrs}>\n</div>')
    accuracy = [list(s.accept)] * s.depth
    tree = best_tree(accuracy, s.nodes)
    assert sorted(nodes_drawn(page)) == sorted(tree)
    mean_tree = float(re.search(r'data-expected-tree="([\d.]+)"', page)[1])
    mean_chain = float(re.search(r'data-expected-chain="([\d.]+)"', page)[1])
    assert mean_tree == pytest.approx(expected_tokens_tree(*tree_from_choices(tree, accuracy)), abs=1e-6)
    assert mean_chain == pytest.approx(expected_tokens(s.accept[0], s.nodes), abs=1e-6)
    # what tree-toy.js reads: the settings as used and one word list per position (and the next)
    assert f'data-accept="{",".join(f"{p:g}" for p in s.accept)}"' in page
    words = json.loads(html_module.unescape(re.search(r'data-words="([^"]*)"', page)[1]))
    assert len(words) == s.depth + 1 and all(len(row) == 4 and len(set(row)) == 4 for row in words)
    assert " data-search-exclude>" in page and "<svg" in page


@pytest.mark.parametrize("attrs", SETTINGS)
def test_the_layout_gives_each_leaf_a_row_and_a_parent_its_first_childs(attrs):
    tree = best_tree([list(parse_settings(attrs).accept)] * parse_settings(attrs).depth, parse_settings(attrs).nodes)
    rows = layout(tree)
    leaves = [n for n in tree if not any(m[:-1] == n for m in tree)]
    assert sorted(rows[n] for n in leaves) == list(range(len(leaves)))
    for node in tree:
        kids = sorted(m for m in tree if m[:-1] == node)
        if kids:
            assert rows[node] == rows[kids[0]]
        assert rows[node[:-1]] <= rows[node]
    # no two nodes in one place
    assert len({(len(n), rows[n]) for n in tree}) == len(tree)


@pytest.mark.parametrize("attrs", SETTINGS)
def test_the_example_round_is_one_consistent_round(attrs):
    s = parse_settings(attrs)
    tree = best_tree([list(s.accept)] * s.depth, s.nodes)
    page = example_round(s)
    accepted = [tuple(map(int, p.split("."))) for p in
                re.findall(r'sd-tree-toy__node" data-path="([\d.]+)" data-state="accept"', page)]
    rejected = [tuple(map(int, p.split("."))) for p in
                re.findall(r'sd-tree-toy__node" data-path="([\d.]+)" data-state="reject"', page)]
    path, chain = walk(tree, EXAMPLE_DRAWS)
    assert sorted(accepted) == path
    # a path from the root, each node the drawn rank
    assert all(node == tuple(EXAMPLE_DRAWS[:len(node)]) for node in accepted)
    last = path[-1] if path else ()
    assert sorted(rejected) == sorted(m for m in tree if m[:-1] == last)
    produced = int(re.search(r'sd-tree-toy__yield">(\d+) 個字', page)[1])
    assert produced == len(path) + 1
    links = re.findall(r'sd-tree-toy__link" data-state="(\w+)"', page)
    assert len(links) == s.nodes
    assert links == ["accept"] * chain + ["reject"] + ["discard"] * (s.nodes - chain - 1)
    assert int(re.search(r'sd-tree-toy__chain-yield">(\d+) 個字', page)[1]) == chain + 1
    assert ("bonus" in page) == (not rejected) and ("修正" in page) == bool(rejected)
    assert "固定的一輪示範；開啟 JavaScript 就能自己驗" in page


def test_the_example_round_shows_a_tree_beating_the_chain():
    """The default toy's example: 去 → 海邊 → 散步 then the target's own token, while the chain,
    on the same draws, stops at its second candidate."""
    page = example_round(parse_settings(""))
    tokens = re.findall(r'sd-tree-toy__token" data-state="(\w+)">([^<]+)', page)
    assert tokens == [("accept", "去"), ("accept", "海邊"), ("accept", "散步"), ("bonus", "吧")]
    assert 'sd-tree-toy__yield">4 個字' in page and 'sd-tree-toy__chain-yield">2 個字' in page


def test_walk_stops_where_the_drawn_rank_is_not_a_child():
    tree = [(0,), (1,), (0, 0), (0, 1), (0, 0, 0)]
    assert walk(tree, [0, 0, 0, 0, 0, 0]) == ([(0,), (0, 0), (0, 0, 0)], 5)
    assert walk(tree, [1, 0, 0, 0, 0, 0]) == ([(1,)], 0)
    assert walk(tree, [-1, 0, 0, 0, 0, 0]) == ([], 0)
    assert walk(tree, [0, 1, 0, 0, 0, 0]) == ([(0,), (0, 1)], 1)


@pytest.mark.build
def test_a_bad_attribute_fails_the_build_at_its_line_and_a_good_toy_builds(tmp_path):
    from support.site import build_one_page
    result = build_one_page(tmp_path, '# 頁\n\n一段。\n\n<div class="sd-tree-toy" markdown></div>\n\n'
                                      '<div class="sd-tree-toy" data-depth="6" markdown></div>\n')
    assert result.returncode != 0
    assert 'lessons/index.md:7: 樹狀驗證玩具的 data-depth="6" 不行：樹的深度要是 3 到 4 的整數' in result.output
    result = build_one_page(tmp_path, '# 頁\n\n<div class="sd-tree-toy" data-width="2" data-depth="3" '
                                      'data-nodes="6" data-accept="0.7,0.2" markdown></div>\n')
    assert result.returncode == 0, result.output
    page = (tmp_path / "site-built" / "index.html").read_text(encoding="utf-8")
    assert len(nodes_drawn(page)) == 6 and "sd-tree-toy__static" in page
    assert 'assets/course/tree-toy.js' in page and 'assets/course/tree-toy.css' in page
