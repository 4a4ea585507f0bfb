"""The tree-verification toy in the browsers, on a page of its own (support.site.build_one_page:
the real theme, hooks and widgets; no lesson needs to embed it yet).

Chromium: each round lights one path from the root and rejects exactly the last node's children;
the chain beside it reads the same draws; the tally's sums and means are the rounds' own; 2,000
seeded rounds average within 5 standard errors of the expected tokens the build computed with
specdec_lab (variance exact, from the tree); buttons work from the keyboard with a visible focus;
each round is announced through aria-live; a 390-px phone shows it without sideways overflow;
axe finds nothing serious; without JavaScript the build's example round shows; instant navigation
mounts it. Every engine (Chromium, Firefox, WebKit): clicks and keys draw consistent rounds, no
overflow on a phone.
Screenshots (1440 and 390, light and dark) go to build/test-output/screenshots/tree-toy-*.png.
"""
from __future__ import annotations

import re

import pytest

from specdec_lab.positional import best_tree
from support.axe import run_axe
from support.engines import ENGINES, opener, started
from support.lab import wait_until
from support.server import chromium, open_page, serve_site
from support.lesson import SEEDED_RANDOM
from support.site import ROOT, build_one_page

pytestmark = pytest.mark.browser

SHOTS = ROOT / "build" / "test-output" / "screenshots"
ACCEPT = (0.6, 0.2, 0.1)
DEPTH, NODES = 4, 10
TOY = f'<div class="sd-tree-toy" data-width="3" data-depth="{DEPTH}" data-nodes="{NODES}" data-accept="0.6,0.2,0.1" markdown></div>'
PAGE = f"# 樹狀驗證\n\n一段課文，[下一頁](other.md)。\n\n{TOY}\n\n課文接著說。\n"
OTHER = "# 另一頁\n\n[回到樹狀驗證](index.md)\n"
TREE = [".".join(map(str, node)) for node in best_tree([list(ACCEPT)] * DEPTH, NODES)]

# what a round left on the page
STATE = """() => { const t = document.querySelector('.sd-tree-toy');
  const nodes = [...t.querySelectorAll('.sd-tree-toy__node[data-path]')].filter((g) => g.dataset.path !== '');
  const free = t.querySelector('.sd-tree-toy__free');
  const status = t.querySelector('[role=status]');
  return {
    tree: nodes.map((g) => g.dataset.path),
    words: Object.fromEntries(nodes.map((g) => [g.dataset.path, g.textContent])),
    accepted: nodes.filter((g) => g.dataset.state === 'accept').map((g) => g.dataset.path),
    rejected: nodes.filter((g) => g.dataset.state === 'reject').map((g) => g.dataset.path),
    edges: [...t.querySelectorAll('.sd-tree-toy__edge[data-state=accept]')].map((e) => e.dataset.path),
    free: free.getAttribute('display') === 'none' ? null : free.textContent,
    chips: [...t.querySelectorAll('.sd-tree-toy__output .sd-tree-toy__token')].map((c) => [c.dataset.state, c.firstChild.textContent]),
    produced: parseInt(t.querySelector('.sd-tree-toy__yield').textContent, 10),
    links: [...t.querySelectorAll('.sd-tree-toy__link')].map((l) => l.dataset.state),
    chainProduced: parseInt(t.querySelector('.sd-tree-toy__chain-yield').textContent, 10),
    tally: t.querySelector('.sd-tree-toy__tally').textContent,
    status: status ? status.textContent : null,
    live: status ? status.getAttribute('aria-live') : null,
  }; }"""
MOTION_ENDED = "() => !document.getAnimations().some((a) => a.playState === 'running')"
TALLY_RE = re.compile(r"已驗 (\d+) 輪：每輪平均樹 ([\d.]+) 個字、鏈 ([\d.]+) 個字（共 (\d+) 對 (\d+) 個字）")


def depth(key: str) -> int:
    return key.count(".") + 1


def check_round(r) -> int:
    """One consistent round; returns the chain's accepted count."""
    path = sorted(r["accepted"], key=depth)
    assert [depth(k) for k in path] == list(range(1, len(path) + 1)), r
    assert all(child.startswith(parent + ".") for parent, child in zip(path, path[1:])), r
    last = path[-1] if path else ""
    children = [k for k in r["tree"] if depth(k) == len(path) + 1 and (not last or k.startswith(last + "."))]
    assert sorted(r["rejected"]) == sorted(children), r
    assert sorted(r["edges"]) == sorted(path)
    assert r["produced"] == len(path) + 1
    kind = "correction" if children else "bonus"
    assert r["chips"][:-1] == [["accept", r["words"][k]] for k in path] and r["chips"][-1][0] == kind, r
    assert r["free"] == (None if children else r["chips"][-1][1])      # drawn beside a leaf only
    chain = r["links"].count("accept")
    assert r["links"] == ["accept"] * chain + (["reject"] + ["discard"] * (NODES - chain - 1) if chain < NODES else [])
    assert r["chainProduced"] == chain + 1
    # the same draws: as long as the chain accepted, the draft's first choices were right, so the
    # tree went down its first choices too (as far as they go), and left them where the chain stopped
    spine = max(depth(k) for k in r["tree"] if set(k.split(".")) == {"0"})
    assert path[:min(chain, spine)] == [".".join(["0"] * d) for d in range(1, min(chain, spine) + 1)], r
    if chain < len(path):
        assert not path[chain].endswith(".0") and path[chain] != "0", r
    return chain


def tally(r) -> tuple[int, int, int]:
    m = TALLY_RE.search(r["tally"])
    assert m, r["tally"]
    rounds, tree_mean, chain_mean, tree_sum, chain_sum = m.groups()
    assert tree_mean == f"{int(tree_sum) / int(rounds):.2f}" and chain_mean == f"{int(chain_sum) / int(rounds):.2f}"
    return int(rounds), int(tree_sum), int(chain_sum)


def exact_mean_and_variance(nodes: list[str], accept) -> tuple[float, float]:
    """Tokens per round of a tree of rank paths: 1 + Σ reach(v); E[(T − 1)²] = Σ reach(v)(2 depth(v) − 1)
    (the accepted nodes form one path from the root)."""
    reach = {}
    for key in sorted(nodes, key=depth):
        parent = key.rsplit(".", 1)[0] if "." in key else ""
        reach[key] = reach.get(parent, 1.0) * accept[int(key.rsplit(".", 1)[-1])]
    first = sum(reach.values())
    second = sum(p * (2 * depth(k) - 1) for k, p in reach.items())
    return 1 + first, second - first ** 2


# --------------------------------------------------------------------------- Chromium

@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tree-toy")
    (folder / "site-built").mkdir()
    with serve_site(folder / "site-built") as url:
        result = build_one_page(folder, PAGE, site_url=url, others={"other.md": OTHER})
        assert result.returncode == 0, result.output
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as instance:
        yield instance


@pytest.fixture
def open_toy(browser, base_url):
    opened = []

    def open_(path="", width=1440, seed=None, **context):
        page, outside = open_page(browser, None, width=width, height=900 if width > 500 else 844, **context)
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        if seed is not None:
            page.add_init_script(SEEDED_RANDOM % seed)
        page.goto(base_url + path)
        page.wait_for_load_state("networkidle")
        opened.append((page, outside, errors))
        return page

    yield open_
    for page, outside, errors in opened:
        page.context.close()
        assert outside == [], f"requests left 127.0.0.1: {outside}"
        assert errors == [], f"script errors: {errors}"


def shot(locator, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=str(SHOTS / f"{name}.png"), animations="disabled")


def test_rounds_light_one_path_and_the_tally_adds_them_up(open_toy):
    page = open_toy(seed=3)
    toy = page.locator(".sd-tree-toy")
    first = page.evaluate(STATE)
    assert sorted(first["tree"]) == sorted(TREE)          # specdec_lab's best tree, as the build drew it
    check_round(first)
    rounds, tree_sum, chain_sum = tally(first)
    assert (rounds, tree_sum, chain_sum) == (1, first["produced"], first["chainProduced"])   # the first round
    yields, kinds = set(), set()
    for _ in range(30):
        toy.get_by_role("button", name="驗證一輪").click()
        r = page.evaluate(STATE)
        chain = check_round(r)
        rounds, tree_sum, chain_sum = rounds + 1, tree_sum + r["produced"], chain_sum + r["chainProduced"]
        assert tally(r) == (rounds, tree_sum, chain_sum)
        assert r["live"] == "polite" and r["status"].startswith(f"第 {rounds} 輪：")
        assert f"共 {r['produced']} 個字；同樣的抽籤，鏈收下 {chain} 個，共 {chain + 1} 個字。" in r["status"]
        yields.add(r["produced"])
        kinds.add(r["chips"][-1][0])
    assert len(yields) >= 3 and kinds == {"bonus", "correction"}, "30 seeded rounds show several outcomes"
    toy.get_by_role("button", name="連跑 50 輪").click()
    r = page.evaluate(STATE)
    check_round(r)
    assert tally(r)[0] == rounds + 50
    assert r["status"].startswith(f"又跑了 50 輪，共 {rounds + 50} 輪：")
    toy.get_by_role("button", name="歸零").click()
    r = page.evaluate(STATE)
    assert "還沒驗" in r["tally"] and r["status"] == "統計歸零。"
    assert "sd-tree-toy--earlier" in toy.get_attribute("class")
    toy.get_by_role("button", name="驗證一輪").click()
    assert tally(page.evaluate(STATE))[0] == 1


def test_many_rounds_average_the_expected_tokens_within_five_standard_errors(open_toy):
    page = open_toy(seed=20261207)
    many = page.locator(".sd-tree-toy").get_by_role("button", name="連跑 50 輪")
    for _ in range(40):
        many.click()
    rounds, tree_sum, chain_sum = tally(page.evaluate(STATE))
    assert rounds == 2001
    toy = page.locator(".sd-tree-toy")
    built_tree, built_chain = float(toy.get_attribute("data-expected-tree")), float(toy.get_attribute("data-expected-chain"))
    mean, var = exact_mean_and_variance(TREE, ACCEPT)
    chain_mean, chain_var = exact_mean_and_variance([".".join(["0"] * d) for d in range(1, NODES + 1)], ACCEPT)
    assert built_tree == pytest.approx(mean, abs=1e-6) and built_chain == pytest.approx(chain_mean, abs=1e-6)
    assert abs(tree_sum / rounds - mean) < 5 * (var / rounds) ** 0.5
    assert abs(chain_sum / rounds - chain_mean) < 5 * (chain_var / rounds) ** 0.5
    assert tree_sum > chain_sum         # (the tree's 2.99 against the chain's 2.49: 20 standard errors apart)


def test_the_toy_answers_keys_and_shows_where_the_focus_is(open_toy):
    page = open_toy(width=390, seed=5)
    draw = page.locator(".sd-tree-toy__draw")
    draw.focus()
    page.keyboard.press("Enter")
    page.keyboard.press(" ")
    r = page.evaluate(STATE)
    check_round(r)
    assert tally(r)[0] == 3 and r["status"].startswith("第 3 輪：")
    page.keyboard.press("Tab")                                   # to 連跑 50 輪
    assert page.evaluate("document.activeElement.textContent") == "連跑 50 輪"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", ""), "the focused button shows no outline"
    page.keyboard.press("Enter")
    assert tally(page.evaluate(STATE))[0] == 53
    page.keyboard.press("Tab")                                   # to 歸零
    page.keyboard.press("Enter")
    assert page.evaluate(STATE)["status"] == "統計歸零。"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1440, 390])
def test_the_toy_fits_the_screen_and_passes_axe(open_toy, width, scheme):
    page = open_toy(width=width, seed=9, color_scheme=scheme)
    toy = page.locator(".sd-tree-toy")
    for _ in range(3):
        toy.get_by_role("button", name="驗證一輪").click()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    sizes = page.evaluate("""() => { const t = document.querySelector('.sd-tree-toy');
      const svg = t.querySelector('svg').getBoundingClientRect(), box = t.getBoundingClientRect();
      const overflowing = [...t.querySelectorAll('.sd-tree-toy__node')].filter((g) => g.getAttribute('display') !== 'none')
        .filter((g) => g.querySelector('text').getBBox().width > g.querySelector('rect').getBBox().width - 4)
        .map((g) => g.textContent);
      return {toy: [box.left, box.right, t.scrollWidth, t.clientWidth], svg: [svg.left, svg.right, svg.width],
              scale: svg.width / t.querySelector('svg').viewBox.baseVal.width,
              buttons: [...t.querySelectorAll('button')].map((b) => b.getBoundingClientRect().height),
              overflowing}; }""")
    left, right, scroll, client = sizes["toy"]
    assert left >= 0 and right <= width and scroll <= client, sizes
    assert left <= sizes["svg"][0] and sizes["svg"][1] <= right, sizes
    assert sizes["overflowing"] == [], sizes
    assert sizes["scale"] >= 0.65, sizes                   # node text 20 units: at least 13 px
    assert min(sizes["buttons"]) >= 24, sizes             # touch targets
    assert run_axe(page, context={"include": [[".sd-tree-toy"]]}) == []
    toy.scroll_into_view_if_needed()
    shot(toy, f"tree-toy-{width}-{scheme}")


def test_without_javascript_the_example_round_shows(open_toy):
    page = open_toy(java_script_enabled=False)
    toy = page.locator(".sd-tree-toy")
    assert toy.locator("button").count() == 0
    assert "固定的一輪示範；開啟 JavaScript 就能自己驗" in toy.inner_text()
    assert toy.locator('.sd-tree-toy__node[data-state="accept"]').count() == 3
    assert toy.locator(".sd-tree-toy__yield").inner_text() == "4 個字"
    assert toy.locator(".sd-tree-toy__chain-yield").inner_text() == "2 個字"
    shot(toy, "tree-toy-no-js")


def test_instant_navigation_mounts_the_toy(open_toy):
    page = open_toy("other/")
    page.get_by_role("link", name="回到樹狀驗證").click()
    wait_until(lambda: page.evaluate("!!document.querySelector('.sd-tree-toy__box')"), 10, what="the toy mounted")
    assert page.evaluate("typeof window.document$") == "object"       # (reached by instant navigation)
    before = tally(page.evaluate(STATE))[0]
    page.locator(".sd-tree-toy").get_by_role("button", name="驗證一輪").click()
    assert tally(page.evaluate(STATE))[0] == before + 1


# --------------------------------------------------------------------------- every engine

@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_draws_consistent_rounds_by_click_and_key(tmp_path_factory, engine):
    """Clicks and keys draw consistent rounds, no overflow on a phone, no page error (Chromium's
    own checks are above; this one is the same in the three engines)."""
    folder = tmp_path_factory.mktemp(f"tree-toy-{engine}")

    def built(url):
        result = build_one_page(folder, PAGE, site_url=url, others={"other.md": OTHER})
        assert result.returncode == 0, result.output

    with started(engine, folder / "site-built", built, log_name=f"{engine}-tree-toy") as (browser, url):
        with opener(browser, url, lab_shown=True) as open_page:
            page = open_page("", width=390, height=844, seed=7)
            wait_until(lambda: page.evaluate("() => !!document.querySelector('.sd-tree-toy__box')"), 60,
                       what="the tree toy mounted")
            for i in range(5):
                page.click(".sd-tree-toy__draw")
                check_round(page.evaluate(STATE))
            page.focus(".sd-tree-toy__draw")
            page.press("Enter")
            r = page.evaluate(STATE)
            check_round(r)
            assert tally(r)[0] == 7 and r["status"].startswith("第 7 輪：")
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
            page.evaluate("() => document.querySelector('.sd-tree-toy').scrollIntoView()")
            wait_until(lambda: page.evaluate(MOTION_ENDED), 10, step=0.1, what="the path lit")
            page.screenshot(SHOTS / f"{engine}-tree-toy-390.png")
