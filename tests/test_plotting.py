"""The plotting module: the shipped Chinese font registers and is the one used, every figure has
Chinese labels whose every glyph the fonts cover, tables and slider panels behave."""
import ast
import base64
import io
import json
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib import font_manager
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.ft2font import FT2Font
from matplotlib.text import Text

from specdec_lab import monte_carlo_check, plotting, tables, verify_greedy, verify_sampling
from specdec_lab.plotting import font_list, style

ROOT = Path(__file__).resolve().parents[1]
FONT_CHARS = set(FT2Font(str(plotting.FONT_PATH)).get_charmap())
DEJAVU_CHARS = set(FT2Font(font_manager.findfont("DejaVu Sans", fallback_to_default=False)).get_charmap())


def is_cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"


# every kind of figure the notebook shows, with the edge cases of each
CASES = {
    "histogram": lambda: plotting.tokens_histogram(monte_carlo_check(0.8, 5, rounds=2000, seed=1)),
    "histogram_k16": lambda: plotting.tokens_histogram(monte_carlo_check(0.95, 16, rounds=2000, seed=1)),
    "histogram_alpha0": lambda: plotting.tokens_histogram(monte_carlo_check(0.0, 3, rounds=100, seed=1)),
    "speedup": lambda: plotting.speedup_figure(0.8, 0.05),
    "speedup_best_is_1": lambda: plotting.speedup_figure(0.6, 0.3),
    "speedup_best_is_kmax": lambda: plotting.speedup_figure(1.0, 0.0),
    "serving": lambda: plotting.serving_figure(),
    "serving_never_helps": lambda: plotting.serving_figure(alpha=0.1, k=5, draft_cost=0.3),
    "serving_never_hurts": lambda: plotting.serving_figure(t_flop=0.0),
    "tree_mask": lambda: plotting.tree_mask_figure([-1, -1, 0, 0, 2, 1], labels=list("我們的是在有")),
    "tree_scaling": lambda: plotting.tree_scaling_figure([0.6, 0.2, 0.1, 0.05], max_nodes=48, k=3),
    "tree_scaling_chain_limit_1": lambda: plotting.tree_scaling_figure([1.0, 0.0], max_nodes=8, k=2),
    "tree_serving": lambda: plotting.tree_serving_figure([0.6, 0.2, 0.1], max_nodes=48),
}


@pytest.fixture(scope="module")
def drawn():
    """Each figure rendered to PNG, with the warnings rendering raised."""
    out = {}
    for name, make in CASES.items():
        fig = make()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            png = plotting.figure_png(fig)
        out[name] = (fig, png, [str(w.message) for w in caught])
    return out


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


# the font ----------------------------------------------------------------------------------------

def test_font_is_shipped_small_and_licensed():
    assert plotting.FONT_PATH.is_file()
    assert plotting.FONT_PATH.stat().st_size < 1.5e6
    license_text = (plotting.FONT_PATH.parent / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in license_text and "Adobe" in license_text


def test_font_covers_common_traditional_chinese():
    # Big5 level 1 (5,401 frequent hanzi) plus the punctuation of Chinese text
    level1 = {ord(bytes([0xA4, 0x40]).decode("big5")), ord("龜"), ord("體"), ord("臺"), ord("灣")}
    punctuation = {ord(c) for c in "，。、：；！？「」（）《》…—"}
    assert level1 | punctuation <= FONT_CHARS
    assert len([c for c in FONT_CHARS if 0x4E00 <= c <= 0x9FFF]) >= 5401


def test_shipped_font_is_the_one_matplotlib_uses():
    assert plotting.FONT_FAMILY in {f.name for f in font_manager.fontManager.ttflist}
    for family in (plotting.FONT_FAMILY, "sans-serif"):
        found = font_manager.findfont(FontProperties(family=[family]), fallback_to_default=False)
        assert Path(found) == plotting.FONT_PATH


def test_registering_twice_adds_the_font_once():
    plotting.register_font()
    names = [f.name for f in font_manager.fontManager.ttflist]
    assert names.count(plotting.FONT_FAMILY) == 1


PLOTTING_SOURCES = [*Path(plotting.__file__).parent.glob("*.py"), Path(tables.__file__)]


def test_every_string_in_the_plotting_module_has_glyphs():
    """Strings the plots may draw (docstrings aside) use only characters the fonts have: a label
    added without regenerating the subset fails here (make_subset.py also scans src/)."""
    assert {p.name for p in PLOTTING_SOURCES} >= {"style.py", "figures.py", "live.py", "beyond.py", "tables.py"}
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in PLOTTING_SOURCES]
    docstrings = {id(node.value) for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    chars = {ch for tree in trees for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and id(node) not in docstrings for ch in node.value if not ch.isspace()}
    missing = sorted(ch for ch in chars if ord(ch) not in FONT_CHARS | DEJAVU_CHARS)
    assert missing == []


# the figures -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_figure_has_chinese_labels_and_no_missing_glyphs(drawn, name):
    fig, png, caught = drawn[name]
    assert isinstance(fig, Figure)
    labels = texts(fig)
    assert any(is_cjk(ch) for text in labels for ch in text), labels
    assert not [m for m in caught if "missing from" in m], caught
    uncovered = {ch for text in labels for ch in text
                 if not ch.isspace() and ord(ch) not in FONT_CHARS | DEJAVU_CHARS}
    assert uncovered == set()
    assert png.startswith(b"\x89PNG")


@pytest.mark.parametrize("name", CASES)
def test_figure_fits_a_side_panel(drawn, name):
    from PIL import Image

    width, height = Image.open(io.BytesIO(drawn[name][1])).size
    assert 400 <= width <= 720 and 250 <= height <= 480, (width, height)


def test_missing_glyphs_are_detected():
    """The check above can fail: a character outside the subset warns."""
    absent = next(chr(c) for c in range(0x4E00, 0xA000) if c not in FONT_CHARS)
    fig = Figure()
    fig.add_subplot().set_title(f"罕見字 {absent}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plotting.figure_png(fig)
    assert any("missing from" in str(w.message) for w in caught)


def test_histogram_marks_the_one_token_bar_and_overlays_the_closed_form(drawn):
    fig = drawn["histogram"][0]
    ax = fig.axes[0]
    bars = ax.patches[:6]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()
    assert bars[0].get_hatch() and not bars[1].get_hatch()
    check = monte_carlo_check(0.8, 5, rounds=2000, seed=1)
    assert [b.get_height() for b in bars] == pytest.approx(check.frequencies)
    (closed,) = [line for line in ax.get_lines() if line.get_marker() == "D"]
    assert closed.get_ydata() == pytest.approx(check.probabilities)


def test_speedup_figure_marks_best_and_knee(drawn):
    labels = " ".join(texts(drawn["speedup"][0]))
    assert "最佳 K = 8" in labels and "開始變平 K = 5" in labels and "K 再加反而變慢" in labels


def test_serving_figure_marks_the_crossover(drawn):
    assert "28.7" in " ".join(texts(drawn["serving"][0]))
    assert "從不划算" in " ".join(texts(drawn["serving_never_helps"][0]))
    assert "一直划算" in " ".join(texts(drawn["serving_never_hurts"][0]))
    left, right = drawn["serving"][0].axes
    assert "每人" in left.get_title() and "總產能" in right.get_title()


def test_bad_input_reaches_the_learner_as_a_clear_error():
    with pytest.raises(ValueError, match="alpha"):
        plotting.speedup_figure(1.5, 0.05)
    with pytest.raises(ValueError, match="t_flop"):
        plotting.serving_figure(t_flop=-1)


def test_a_figure_ending_a_cell_or_passed_to_display_is_a_png_as_base64_text():
    """What the formatter gives is sent as it is by Pyodide's kernel for display() (ipykernel and
    a cell's last value in Pyodide would encode bytes; display()'s bytes reached the browser as
    data:image/png;base64,[object Object]): base64 text, the form nbformat stores."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        plotting.show_figures_in_notebooks()
        fig = plotting.speedup_figure(0.8, 0.05)
        data, _ = shell.display_formatter.format(fig)
    finally:
        InteractiveShell.clear_instance()
    assert isinstance(data["image/png"], str)
    assert base64.b64decode(data["image/png"], validate=True) == plotting.figure_png(fig)


# the font-cache message ----------------------------------------------------------------------

def test_only_the_font_cache_message_is_dropped(caplog):
    log = logging.getLogger("matplotlib.font_manager")
    with caplog.at_level(logging.WARNING):
        log.warning("Matplotlib is building the font cache; this may take a moment.")
        log.warning("some other font problem")
    assert [r.getMessage() for r in caplog.records] == ["some other font problem"]


CACHE_BUILD = """
import threading
class Now:  # Pyodide's matplotlib warns at once; CPython's after 5 s: make CPython's immediate
    def __init__(self, delay, fn): self.fn = fn
    def start(self): self.fn()
    def cancel(self): pass
threading.Timer = Now
{imports}
"""


@pytest.mark.parametrize("imports, expect_message", [
    ("from specdec_lab import plotting; plotting.course_figure", False),   # matplotlib imported
    ("from specdec_lab import plotting; plotting.explore_tokens", False),  # through figures.py
    ("import specdec_lab.plotting.beyond", False),
    ("import matplotlib.font_manager", True),  # the control: the message is real
])
def test_building_the_font_cache_prints_nothing(tmp_path, imports, expect_message):
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path))  # no cache: matplotlib builds it
    run = subprocess.run([sys.executable, "-c", CACHE_BUILD.format(imports=imports)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert ("building the font cache" in run.stderr) is expect_message, run.stderr


LAZY = """
import sys
from specdec_lab import plotting
print("matplotlib" in sys.modules, "ipywidgets" in sys.modules)
plotting.{name}
print("matplotlib" in sys.modules,
      __import__("matplotlib").rcParams["font.sans-serif"][0] == plotting.FONT_FAMILY)
"""


@pytest.mark.parametrize("name", ["explore_tokens", "transition_figure", "course_figure", "BLUE"])
def test_importing_plotting_leaves_matplotlib_until_a_name_is_used(name):
    """In the browser matplotlib's import costs ~1.4 s; it comes with the first figure, not with the
    notebook's setup cell. Using any name imports its module, and the course font is then set up."""
    run = subprocess.run([sys.executable, "-c", LAZY.format(name=name)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "False", "True", "True"], run.stdout


WITHOUT = """
import sys
sys.modules[{missing!r}] = None          # as if it were not installed (or not loaded yet)
from specdec_lab import plotting
try:
    plotting.{name}
except ModuleNotFoundError as error:
    print(error.name)
    print(error)
"""


@pytest.mark.parametrize("name, missing", [("speedup_figure", "matplotlib"), ("explore_tokens", "matplotlib")])
def test_a_plotting_name_without_matplotlib_says_what_is_missing_and_how_to_get_it(name, missing):
    """In the 實驗場 matplotlib and ipywidgets load before a cell that uses plotting.…; if matplotlib
    is missing all the same (another way in, or a CPython without the extra), the error says which
    package, where it comes from and what to do, in zh-TW."""
    run = subprocess.run([sys.executable, "-c", WITHOUT.format(name=name, missing=missing)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    error_name, message = run.stdout.strip().split("\n", 1)
    assert error_name == missing
    assert f"specdec_lab.plotting.{name} 需要 {missing}" in message
    assert f"import {missing}" in message and "pip install 'specdec-lab[plot]'" in message


def test_every_listed_name_resolves_and_a_typo_is_an_attribute_error():
    for name in plotting.__all__:
        assert getattr(plotting, name) is not None, name
    assert set(plotting.__all__) <= set(dir(plotting))
    with pytest.raises(AttributeError, match="explore_token"):
        plotting.explore_token      # noqa: B018


# Pyodide's shipped font list, mended (plotting/font_list.py) --------------------------------------

def entries(manager) -> set[tuple]:
    return {(os.path.realpath(f.fname), f.name, f.style, f.weight)
            for f in manager.ttflist + manager.afmlist}


def test_the_stamp_is_this_matplotlibs_font_list_version():
    assert font_list.FONT_LIST_VERSION == font_manager.FontManager.__version__   # Pyodide's: 3.8.4 too


def test_a_mended_font_list_loads_with_the_fonts_that_are_there_and_only_those(tmp_path):
    """A list like Pyodide's: the fonts matplotlib finds here, plus entries for macOS fonts, stamped
    by a newer matplotlib. Mended, it loads (no rebuild) with exactly the fonts that are here."""
    here = tmp_path / "here.json"
    font_manager.json_dump(font_manager.FontManager(), here)     # what a rebuild writes
    listed = json.loads(here.read_text())
    mac = dict(listed["ttflist"][0], fname="/System/Library/Fonts/Supplemental/Arial.ttf",
               name="Arial")
    mac_afm = dict(listed["afmlist"][0], fname="/Library/Fonts/x.afm")
    shipped = dict(listed, _version=390, ttflist=[*listed["ttflist"], mac],
                   afmlist=[*listed["afmlist"], mac_afm])
    mended = tmp_path / "mended.json"
    mended.write_text(json.dumps(font_list.usable_font_list(shipped, matplotlib.get_data_path())))
    loaded = font_manager.json_load(mended)
    assert loaded._version == font_manager.FontManager.__version__      # matplotlib takes it as is
    assert entries(loaded) == entries(font_manager.json_load(here))
    assert "Arial" not in {f.name for f in loaded.ttflist}


@pytest.mark.parametrize("dropped", ["cmr10.ttf", "pzdr.afm"])
def test_bundled_fonts_missing_from_the_list_are_added_back(tmp_path, dropped):
    """Pyodide's list lacks Humor Sans (the xkcd font Pyodide bundles with matplotlib): a bundled
    font missing from a list comes back, once."""
    full = font_manager.FontManager()
    without = tmp_path / "without.json"
    font_manager.json_dump(full, without)
    listed = json.loads(without.read_text())
    for key in ("ttflist", "afmlist"):
        listed[key] = [e for e in listed[key] if Path(e["fname"]).name != dropped]
    without.write_text(json.dumps(listed))
    manager = font_manager.json_load(without)
    assert len(entries(manager)) == len(entries(full)) - 1
    added = font_list.add_missing_bundled_fonts(manager)
    assert [Path(p).name for p in added] == [dropped]
    assert entries(manager) == entries(full)
    assert font_list.add_missing_bundled_fonts(manager) == []


# 2️⃣ tables -------------------------------------------------------------------------------------

VOCAB = ["貓", "在", "沙發"]
TARGET = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])


def test_greedy_table_lists_verdicts_and_discarded_positions():
    draft = [0, 2, 2]  # position 2 disagrees with the target's argmax (在)
    table = plotting.round_table(verify_greedy(draft, TARGET), draft, VOCAB)
    assert [row[-1] for row in table.rows] == ["✓ 接受", "✗ 拒絕 → 改用「在」", "丟掉（前提已錯）"]
    assert [row[1] for row in table.rows] == ["貓", "沙發", "沙發"]
    assert "「貓在」" in table.caption and "接受 1 個" in table.caption


def test_greedy_table_all_accepted_mentions_the_bonus():
    draft = [0, 1, 2]
    table = plotting.round_table(verify_greedy(draft, TARGET), draft, VOCAB)
    assert all(row[-1] == "✓ 接受" for row in table.rows)
    assert "bonus" in table.caption and "「貓在沙發沙發」" in table.caption


def test_sampling_table_shows_p_q_ratio_and_u():
    draft_probs = np.array([[0.5, 0.25, 0.25], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
    draft = [0, 1, 2]
    result = verify_sampling(draft, draft_probs, TARGET, seed=3)
    table = plotting.round_table(result, draft, VOCAB)
    assert table.headers == ("位置", "草稿猜", "p", "q", "min(1, p/q)", "u", "判定")
    first = table.rows[0]
    assert first[2:6] == ("0.700", "0.500", "1.00", f"{result.steps[0].u:.2f}")
    assert len(table.rows) == 3


def test_sampling_table_ratio_can_be_worked_out_from_the_shown_p_and_q():
    """A learner checks min(1, p/q) from the row's p and q. Lesson 1's stored round had p 0.0133,
    q 0.2453 (ratio 0.054) shown as "0.01", "0.25" beside "0.05": by hand 0.04. At 3 significant
    digits each shown value is within 0.5 % of the true one, so the worked-out ratio is within
    ~1 % (≤ 0.01, as it is ≤ 1) of the true ratio, and within 0.015 of the shown one."""
    def worked_out(row):
        p, q, shown = (float(x) for x in row[2:5])
        return min(1.0, p / q), shown
    target = np.array([[0.0133, 0.7414, 0.2453]])
    draft = np.array([[0.2453, 0.0133, 0.7414]])
    rows = plotting.round_table(verify_sampling([0], draft, np.vstack([target, target]), seed=1), [0], VOCAB).rows
    by_hand, shown = worked_out(rows[0])
    assert f"{by_hand:.2f}" == f"{shown:.2f}" == "0.05" and rows[0][2:4] == ("0.0133", "0.245")
    rng = np.random.default_rng(7)
    for _ in range(300):
        k = int(rng.integers(1, 5))
        target, draft = rng.dirichlet(np.full(6, 0.3), size=k + 1), rng.dirichlet(np.full(6, 0.3), size=k)
        tokens = [int(rng.choice(6, p=q)) for q in draft]
        result = verify_sampling(tokens, draft, target, seed=int(rng.integers(1 << 30)))
        for row in plotting.round_table(result, tokens, list("abcdef")).rows:
            if row[2] != "—":
                by_hand, shown = worked_out(row)
                assert abs(by_hand - shown) <= 0.015, row


def test_table_text_columns_line_up_with_chinese_cells():
    draft = [0, 2, 2]
    table = plotting.round_table(verify_greedy(draft, TARGET), draft, VOCAB)
    lines = str(table).splitlines()[1:]
    starts = {tables.display_width(line[: line.index(verdict)])
              for line, verdict in zip(lines[1:], [row[-1] for row in table.rows])}
    assert len(starts) == 1  # the verdict column starts at the same display column
    assert "<table>" in table._repr_html_() and "&lt;" not in table._repr_html_()



def test_right_aligned_columns_end_together_and_headers_follow():
    table = tables.Table(("任務", "輪數"), (("改寫", "1193"), ("自由發揮", "7")), align="<>")
    header, *rows = str(table).splitlines()
    ends = {tables.display_width(line) for line in (header, *rows)}
    assert len(ends) == 1  # the number column ends at one display column, header included
    assert rows[1].endswith("  7") and rows[0].startswith("改寫  ")
    html = table._repr_html_()
    assert '<td style="text-align: right">1193</td>' in html
    assert '<th style="text-align: left; word-break: keep-all">任務</th>' in html
    # no align: the notebook's own alignment; a header still breaks between words only (a phone
    # broke 位置 into 位／置)
    plain = tables.Table(("位置",), (("b",),))._repr_html_()
    assert "text-align" not in plain and '<th style="word-break: keep-all">位置</th>' in plain


@pytest.mark.parametrize("make, message", [
    (lambda: tables.Table(("a", "b"), (("1",),)), "rows[0]"),
    (lambda: tables.Table(("a", "b"), (("1", "2"),), align="<"), "align"),
    (lambda: tables.Table(("a", "b"), (("1", "2"),), align="<^"), "align"),
])
def test_a_malformed_table_says_what_is_wrong(make, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make()

# slider panels ---------------------------------------------------------------------------------

def test_slider_panel_carries_widget_and_static_png_and_redraws():
    panel = plotting.explore_speedup(alpha=0.8, draft_cost=0.05)
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    first = panel.png
    assert first.startswith(b"\x89PNG") and "image/png" in bundle
    alpha_slider = panel.widget.children[0]
    assert alpha_slider.description == "接受率 α"
    assert alpha_slider.tooltip == "接受率 α"      # none: the label's title is "null" in the browser
    alpha_slider.value = 0.5
    assert panel.png != first
    (shown,) = panel.output.outputs  # the Output widget holds the new figure, set as state
    assert base64.b64decode(shown["data"]["image/png"]) == panel.png


def test_slider_panel_prints_above_the_figure_and_shows_errors():
    panel = plotting.explore_tokens(alpha=0.8, k=5, rounds=1000)
    printed, figure = panel.output.outputs
    assert printed["name"] == "stdout" and "α = 0.8、K = 5：" in printed["text"]
    assert "image/png" in figure["data"]

    def broken(alpha):
        raise ValueError("alpha 壞了")

    panel = plotting.LiveFigure(broken, alpha=panel.sliders["alpha"])
    (error,) = panel.output.outputs
    assert error["name"] == "stderr" and "ValueError: alpha 壞了" in error["text"]


@pytest.mark.parametrize("make", [plotting.explore_tokens, plotting.explore_speedup,
                                  plotting.explore_serving, plotting.explore_tree_serving])
def test_every_panel_draws_on_creation(make):
    panel = make()
    assert panel.png.startswith(b"\x89PNG")
    assert all(child.description for child in panel.widget.children[:-1])


@pytest.mark.parametrize("make, bad, valid_range", [
    (plotting.explore_speedup, {"alpha": 1.5}, "[0, 1]"),
    (plotting.explore_speedup, {"draft_cost": float("nan")}, "[0, 0.5]"),
    (plotting.explore_tokens, {"k": 20}, "[1, 16]"),
    (plotting.explore_tokens, {"k": 2.5}, "[1, 16]"),
    (plotting.explore_serving, {"t_flop": 0.0}, "[0.002, 0.05]"),
    (plotting.explore_tree_serving, {"draft_cost": 0.7}, "[0, 0.5]"),
])
def test_a_start_value_the_slider_cannot_show_is_refused(make, bad, valid_range):
    """ipywidgets would clamp it (α = 1.5 drawn as 1.0): a wrong figure instead of an error."""
    ((name, value),) = bad.items()
    with pytest.raises(ValueError, match=re.escape(name)) as error:
        make(**bad)
    assert valid_range in str(error.value) and repr(value) in str(error.value)


@pytest.mark.parametrize("call, name, value, valid_range", [
    (lambda: plotting.speedup_figure(0.8, 0.05, k_max=0), "k_max", "0", "[1, 10000]"),  # said "k"
    (lambda: plotting.serving_figure(max_users=0), "max_users", "0", "[1, 10000]"),  # said "concurrency"
    (lambda: plotting.serving_figure(max_users=2.5), "max_users", "2.5", "整數"),  # drew 1..3
    (lambda: plotting.serving_figure(max_users=10**9), "max_users", "1000000000", "[1, 10000]"),  # hung
    (lambda: plotting.positional_figure({str(i): [0.5] for i in range(5)}), "profiles", "5", "1 到 4"),
    (lambda: plotting.positional_figure({}), "profiles", "0", "1 到 4"),
    (lambda: plotting.round_table(verify_greedy([0, 2], TARGET[:3]), [0, 2], ["貓", "在"]), "vocab", "2", "[0, 1]"),
    (lambda: plotting.round_table(verify_greedy([0, 2], TARGET[:3]), [0], VOCAB), "draft_tokens", "1", "2 個位置"),
])
def test_bad_figure_and_table_input_names_the_parameter(call, name, value, valid_range):
    with pytest.raises(ValueError) as error:
        call()
    message = str(error.value)
    assert name in message and value in message and valid_range in message, message


# a panel keeps its figure and its layout between steps -----------------------------------------

def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _fresh_panel_png(name: str, values: dict, rounds: int) -> bytes:
    from specdec_lab.plotting.canvas import PanelCanvas

    fresh = {"tokens": lambda: plotting.tokens_histogram(
                 monte_carlo_check(values["alpha"], values["k"], rounds=rounds, seed=1)),
             "speedup": lambda: plotting.speedup_figure(**values),
             "serving": lambda: plotting.serving_figure(**values)}[name]
    return PanelCanvas().png(fresh())


def _moved_panels(seed: int, steps: int, rounds: int = 2000):
    """Each panel moved by `steps` random slider moves (mostly α by one step, some jumps, some other
    sliders), yielding (panel name, values, the panel's PNG) after each move."""
    rng = np.random.default_rng(seed)
    panels = {"tokens": plotting.explore_tokens(rounds=rounds), "speedup": plotting.explore_speedup(),
              "serving": plotting.explore_serving()}
    for name, panel in panels.items():
        for _ in range(steps):
            names = list(panel.sliders)
            slider = panel.sliders[names[rng.integers(len(names))] if rng.random() < 0.3 else "alpha"]
            if rng.random() < 0.7:
                slider.value = min(slider.max, max(slider.min, slider.value + slider.step * rng.choice([-1, 1])))
            else:
                slider.value = slider.min + slider.step * int(rng.integers(round((slider.max - slider.min) / slider.step) + 1))
            yield name, panel.values, panel.png


def test_a_moved_panel_shows_exactly_what_a_fresh_figure_shows():
    """A step updates the panel's figure and keeps the last layout unless a tick label or title
    changed its size: every pixel is still the one a newly made figure gets."""
    differ = [(name, values) for name, values, png in _moved_panels(seed=8, steps=25)
              if not np.array_equal(_pixels(png), _pixels(_fresh_panel_png(name, values, 2000)))]
    assert differ == []


# moves after which the labels need other margins (wider y tick labels: 100%, 20, 500)
WIDER_LABELS = {"tokens": {"alpha": 0.0}, "speedup": {"draft_cost": 0.0, "alpha": 1.0},
                "serving": {"t_flop": 0.002}}


def _jumped_panels():
    panels = {"tokens": plotting.explore_tokens(rounds=2000), "speedup": plotting.explore_speedup(),
              "serving": plotting.explore_serving()}
    for name, moves in WIDER_LABELS.items():
        for slider, value in moves.items():
            panels[name].sliders[slider].value = value
        yield name, panels[name].values, panels[name].png


def test_a_panel_whose_labels_grew_is_laid_out_again():
    differ = [name for name, values, png in _jumped_panels()
              if not np.array_equal(_pixels(png), _pixels(_fresh_panel_png(name, values, 2000)))]
    assert differ == []


def test_a_layout_kept_when_it_should_have_changed_is_seen(monkeypatch):
    """The checks above can fail: with the layout never worked out again, those panels differ."""
    from specdec_lab.plotting import canvas

    monkeypatch.setattr(canvas, "layout_key", lambda fig, size_of: ())
    differ = [name for name, values, png in _jumped_panels()
              if not np.array_equal(_pixels(png), _pixels(_fresh_panel_png(name, values, 2000)))]
    assert differ == list(WIDER_LABELS)


def test_a_step_updates_the_panels_figure_and_lays_it_out_only_when_needed():
    panel = plotting.explore_speedup(alpha=0.8, draft_cost=0.05)
    figure, draws = panel._canvas._figure, []
    for alpha in np.arange(0.81, 0.96, 0.01):
        before = panel._canvas._key
        panel.sliders["alpha"].value = round(float(alpha), 2)
        draws.append(panel._canvas._key != before)
        assert panel._canvas._figure is figure                      # the same figure, updated
        assert figure.get_layout_engine() is not None               # (kept, not switched off)
    assert 0 < sum(draws) <= len(draws) // 2, draws                 # most steps keep the layout
    panel.sliders["draft_cost"].value = 0.2
    assert panel._canvas._figure is figure


def test_the_crossover_label_stays_inside_its_axes():
    """Near the right edge N* is written left of its line (outside the axes it would be cut off,
    or, in the layout, squeeze the panels)."""
    for max_users in (32, 40, 60, 128):
        fig = plotting.serving_figure(alpha=0.8, k=5, draft_cost=0.05, t_flop=0.02, max_users=max_users)
        plotting.figure_png(fig)
        right = fig.axes[1]
        (mark,) = [t for t in right.texts if t.get_text().startswith("N*")]
        box, axes_box = mark.get_window_extent(), right.get_window_extent()
        assert axes_box.x0 <= box.x0 and box.x1 <= axes_box.x1, max_users


def test_a_kept_histogram_refuses_another_k():
    from specdec_lab.plotting.figures import TokensPlot

    plot = TokensPlot(5, 1000)
    with pytest.raises(ValueError, match="K = 5") as error:
        plot.update(monte_carlo_check(0.8, 6, rounds=1000, seed=1))
    assert "K = 6" in str(error.value)



@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.8, 1.0])
def test_the_histograms_share_axis_stops_at_100_percent(alpha):
    """A share of the rounds is never over 100 %: at α = 1 (every round K + 1 tokens) the axis,
    raised to leave the legend room, had a 120 % tick (a helper's phone review). The same figure
    redrawn for another α keeps its ticks right too."""
    from specdec_lab.plotting.figures import TokensPlot

    plot = TokensPlot(5, 1000)
    for a in (alpha, 1.0 - alpha):
        fig = plot.update(monte_carlo_check(a, 5, rounds=1000, seed=1))
        ticks = fig.axes[0].get_yticks()
        assert len(ticks) >= 3 and ticks.max() <= 1 + 1e-9, (a, ticks)
        tallest = max(plot.bars[i].get_height() for i in range(6))
        assert fig.axes[0].get_ylim()[1] == pytest.approx(1.32 * max(tallest, plot.closed.get_ydata().max()))

@pytest.mark.parametrize("p", [8.5e-31, 1.7e-5, 0.0, 0.053])
def test_a_tiny_p_value_in_a_title_has_every_glyph(p):
    """The Chinese font has no superscript minus: p_text's 8.5×10⁻³¹ in a title drew a box (seen
    in the lossless lab's second figure). Titles write the power of ten in mathtext."""
    from specdec_lab.chisquare import p_text

    def missing(title):
        fig = Figure()
        fig.add_subplot().set_title(f"「一個字」後面接什麼字？（284 次，{title}）")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            plotting.figure_png(fig)
        return [str(w.message) for w in caught if "missing from" in str(w.message)]

    assert missing(p_text(p, mathtext=True)) == []
    if "⁻" in p_text(p):
        assert missing(p_text(p)) != []          # the check can fail


# nothing drawn over the data -------------------------------------------------------------------

def _your_gpu_profiles():
    """The your-gpu notebook's three profiles (its positional cell)."""
    from specdec_lab.vllm import estimate_alpha, parse_metrics
    from specdec_lab.vllm.examples import EXAMPLE_METRICS, EXAMPLE_TAIL_COLLAPSE

    estimate = estimate_alpha(parse_metrics(EXAMPLE_METRICS), draft_cost=0.05)
    return {"你的量測": estimate.conditional_rates,
            f"i.i.d. α = {estimate.alpha:.2f}": [estimate.alpha] * len(EXAMPLE_TAIL_COLLAPSE),
            "尾部崩塌（並行草稿）": EXAMPLE_TAIL_COLLAPSE}


def _bench_sweep():
    from specdec_lab.vllm import bench_sweep, read_bench_results
    from specdec_lab.vllm.examples import EXAMPLE_BENCH_RESULTS

    return bench_sweep(runs=read_bench_results(EXAMPLE_BENCH_RESULTS))


LEGEND_CASES = {
    **CASES,
    "positional_your_gpu": lambda: plotting.positional_figure(_your_gpu_profiles(), draft_cost=0.03),
    "positional_no_cost": lambda: plotting.positional_figure(_your_gpu_profiles()),
    # a learner's own rates can be anywhere: low ones at the start, high ones at the end
    "positional_low_then_high": lambda: plotting.positional_figure(
        {"你的量測": [0.1, 0.15, 0.2, 0.5, 0.9, 0.95], "平的": [0.5] * 6}, draft_cost=0.02),
    "bench_sweep": lambda: plotting.bench_sweep_figure(_bench_sweep()),
}


def covered_points(fig: Figure) -> list[tuple]:
    """The data points (markers of the figure's lines, in display pixels, with the marker's
    radius) that lie under a legend of the figure or of any of its axes."""
    plotting.figure_png(fig)
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    boxes = [legend.get_window_extent() for legend in legends]
    covered = []
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_marker() in (None, "", "None", " ") or not line.get_visible():
                continue
            radius = line.get_markersize() * fig.dpi / 72 / 2
            points = np.column_stack(line.get_data()).astype(float)
            every = line.get_markevery()                     # the markers drawn: None, N or (start, N)
            if isinstance(every, (int, tuple)):
                start, step = every if isinstance(every, tuple) else (0, every)
                points = points[start::step]
            for x, y in ax.transData.transform(points):
                for box in boxes:
                    if box.x0 - radius < x < box.x1 + radius and box.y0 - radius < y < box.y1 + radius:
                        covered.append((line.get_label(), round(x), round(y)))
    return covered


@pytest.mark.parametrize("name", list(LEGEND_CASES))
def test_no_legend_covers_a_data_point(name):
    """The your-gpu figure's legend sat on the tail collapse's points 7-9 (seen in the lab)."""
    assert covered_points(LEGEND_CASES[name]()) == []


def test_a_legend_over_a_point_is_seen():
    """The check can fail: the positional figure's legend put back inside the left panel."""
    fig = plotting.positional_figure(_your_gpu_profiles(), draft_cost=0.03)
    fig.legends.clear()
    fig.axes[0].legend(loc="lower left", fontsize=12)
    assert any(label.startswith("尾部崩塌") for label, _, _ in covered_points(fig))


@pytest.mark.parametrize("name", list(LEGEND_CASES))
def test_a_phones_notebook_gets_figures_it_shows_near_full_size(name, monkeypatch):
    """At 390 px the notebook is ~348 px wide: a figure made for a wide panel (530-680 px) was
    shown at half size, its labels 6-8 px. In a notebook narrower than style.NARROW_BELOW the
    figures are at most ~460 px (shown at 3/4 or more), two panels one above the other, and still
    no legend covers a point."""
    from PIL import Image

    monkeypatch.setenv("SPECDEC_LAB_WIDTH", "348")
    fig = LEGEND_CASES[name]()
    width, height = Image.open(io.BytesIO(plotting.figure_png(fig))).size
    assert 300 <= width <= 460, (width, height)
    boxes = [ax.get_position() for ax in fig.axes]
    if len(boxes) == 2:                                   # stacked: the second panel under the first
        assert boxes[1].y1 < boxes[0].y0 and abs(boxes[1].x0 - boxes[0].x0) < 0.1, boxes
    assert covered_points(fig) == []


def test_a_wide_notebook_keeps_the_panels_side_by_side(monkeypatch):
    monkeypatch.setenv("SPECDEC_LAB_WIDTH", "640")
    left, right = plotting.serving_figure().axes
    assert abs(left.get_position().y0 - right.get_position().y0) < 0.01
    assert right.get_position().x0 > left.get_position().x1


@pytest.mark.parametrize("written, narrow", [("348", True), ("348\n", True), ("1024", False), ("", False),
                                             ("wide", False), (None, False)])
def test_the_notebooks_width_is_read_from_the_labs_drive(written, narrow, monkeypatch, tmp_path):
    """The lab's page writes it there (site/lab/page/phone-width.js, 20.); nothing written: not narrow."""
    monkeypatch.delenv("SPECDEC_LAB_WIDTH", raising=False)
    monkeypatch.setattr(style, "LAB_WIDTH_FILE", tmp_path / ".specdec-lab-width")
    if written is not None:
        style.LAB_WIDTH_FILE.write_text(written, encoding="utf-8")
    assert style.notebook_is_narrow() is narrow


@pytest.mark.parametrize("alpha, draft_cost", [(0.8, 0.05), (0.6, 0.3), (0.1, 0.3), (0.95, 0.01), (1.0, 0.0)])
def test_the_no_gain_line_is_named_where_no_hatching_runs_through_it(alpha, draft_cost):
    """The speedup figure drew "1×（不加速）" at the right end of its 1× line, inside the hatched
    region where a larger K only loses (it reaches the right edge whenever the best K is not the
    largest): now the legend names the line, and no text in the axes overlaps the hatching."""
    fig = plotting.speedup_figure(alpha, draft_cost)
    plotting.figure_png(fig)
    ax = fig.axes[0]
    hatched = [p.get_window_extent() for p in ax.patches if p.get_hatch()]
    in_axes = [t for t in ax.texts if t.get_text()]
    assert [t.get_text() for t in in_axes if any(t.get_window_extent().overlaps(h) for h in hatched)] == []
    assert "1×（不加速）" in texts(fig)


def test_the_sweeps_axis_names_the_flag_in_a_monospace_font():
    """"--max-concurrency" in the text font read as "–max-concurrency" (its two hyphens touch)."""
    from matplotlib import font_manager
    fig = plotting.bench_sweep_figure(_bench_sweep())
    for ax in fig.axes:
        label = ax.xaxis.label
        assert label.get_text() == "--max-concurrency"
        assert "Mono" in Path(font_manager.findfont(label.get_fontproperties())).name


def test_lesson2_tree_serving_panel_redraws_when_the_draft_cost_moves():
    """6️⃣ of lesson 2: a dearer draft changes the figure (the best trees get shallower, their
    speedups lower), and the panel keeps showing a PNG."""
    panel = plotting.explore_tree_serving(draft_cost=0.05)
    before = panel.png
    panel.sliders["draft_cost"].value = 0.2
    assert panel.png.startswith(b"\x89PNG") and panel.png != before


def test_execute_warns_about_a_cell_that_draws_a_figure_and_stores_none():
    """A course_figure is shown when the cell ends with it, after its `with` block; a cell that
    draws inside the block only (as an instructor new to it writes) stores no figure, and
    notebooks/execute.py names that cell instead of saying only "0 figures stored"."""
    import nbformat
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notebooks"))
    import execute  # notebooks/execute.py
    drawn = nbformat.v4.new_output("display_data", data={"image/png": "iVBOR"})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from specdec_lab.plotting import course_figure"),
        nbformat.v4.new_code_cell("with course_figure(4, 3) as (fig, ax):\n    ax.plot([1, 2])"),
        nbformat.v4.new_code_cell("with course_figure(4, 3) as (fig, ax):\n    ax.plot([1, 2])\nfig",
                                  outputs=[drawn]),
    ])
    (warning,) = execute.undrawn_figures(nb, "k_sweep.ipynb")
    assert warning.startswith("警告：k_sweep.ipynb 第 2 格畫了圖，卻沒有存下任何圖") and "`with`" in warning
