"""notebooks/lesson1.ipynb executed in CPython (nbclient + ipykernel): it runs without errors, its
outputs say what the lesson claims, and the outputs stored in the file are the ones the current
code produces (refresh them with `.venv/bin/python notebooks/execute.py`)."""
import base64
import copy
import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from specdec_lab import best_k, crossover_concurrency, expected_tokens, knee_k, speedup

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "lesson1.ipynb"
sys.path.insert(0, str(ROOT / "notebooks"))
# nbformat and notebooks/execute.py (nbclient) are imported inside the tests that use them: they
# take about 4 s to import, which `pytest -m fast` would otherwise pay just to collect this module

REFRESH = "筆記本裡存的輸出過期了：執行 .venv/bin/python notebooks/execute.py 更新"
MAX_CELL_LINES = 6
MAX_LINE_WIDTH = 72


@pytest.fixture(scope="module")
def stored():
    import nbformat

    return nbformat.read(NOTEBOOK, as_version=4)


@pytest.fixture(scope="module")
def fresh():
    import execute  # notebooks/execute.py

    return execute.execute(NOTEBOOK)


def code_cells(nb, tag=None):
    return [c for c in nb.cells
            if c.cell_type == "code" and (tag is None or tag in c.metadata.get("tags", []))]


def text_of(cell) -> str:
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        else:
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def decode_png(b64: str) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB"), dtype=float) / 255


def images_differ(a: str, b: str) -> str | None:
    """None when two PNGs show the same picture: same size, and under 0.1 % of the pixels changed
    by more than 10 % in any channel (Agg is deterministic for pinned matplotlib and font, so
    identical code gives identical pixels; a changed word in a title changes more than that)."""
    x, y = decode_png(a), decode_png(b)
    if x.shape != y.shape:
        return f"size {x.shape[1]}×{x.shape[0]} vs {y.shape[1]}×{y.shape[0]}"
    changed = float((np.abs(x - y).max(axis=2) > 0.1).mean())
    return f"{changed:.2%} of the pixels changed" if changed > 0.001 else None


NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def texts_differ(a: str, b: str) -> bool:
    """Two outputs differ unless they read the same word for word, numbers included, except that
    a number printed to full precision (15+ digits) may differ in its last digits (1e-14): numpy
    takes different SIMD paths for power and exp on different CPUs, so 28.660666666666668 here is
    28.66066666666667 on another machine. A changed figure (30,000 vs 30,001) still differs."""
    if a == b:
        return False
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return True
    return any(x != y and not (full_precision(x) and full_precision(y) and
                               abs(float(x) - float(y)) <= 1e-14 * abs(float(x)))
               for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)))


def full_precision(number: str) -> bool:
    """Printed as Python's repr of a float that needs all its digits (15 or more significant)."""
    return significant_digits(number) >= 15


def significant_digits(number: str) -> int:
    """How many significant digits a number printed as NUMBER matches carries ("28.66" -> 4)."""
    return len(number.split("e")[0].replace(".", "").lstrip("0"))


def output_differences(old, new) -> list[str]:
    """What differs between the outputs of two executions of the same notebook: text (numbers to
    the last digits, texts_differ), figures by picture."""
    problems = []
    old_cells, new_cells = code_cells(old), code_cells(new)
    if [c.source for c in old_cells] != [c.source for c in new_cells]:
        return ["the code cells differ"]
    for n, (a, b) in enumerate(zip(old_cells, new_cells)):
        where = f"code cell {n} ({a.source.splitlines()[0][:40]!r})"
        kinds = lambda cell: [(o.output_type, sorted(o.get("data", {}))) for o in cell.outputs]  # noqa: E731
        if kinds(a) != kinds(b):
            problems.append(f"{where}: outputs {kinds(a)} vs {kinds(b)}")
            continue
        for x, y in zip(a.outputs, b.outputs):
            if x.output_type == "stream" and (x.name != y.name or texts_differ(x.text, y.text)):
                problems.append(f"{where}: printed {x.text!r} vs {y.text!r}")
            for mime, value in x.get("data", {}).items():
                other = y["data"][mime]
                if mime == "image/png":
                    why = images_differ(value, other)
                    if why:
                        problems.append(f"{where}: figure differs ({why})")
                elif texts_differ(str(value), str(other)):
                    problems.append(f"{where}: {mime} {str(value)[:80]!r} vs {str(other)[:80]!r}")
    return problems


# it runs ---------------------------------------------------------------------------------------

def test_executes_without_errors_or_warnings(fresh):
    for cell in code_cells(fresh):
        for out in cell.outputs:
            assert out.output_type != "error", f"{cell.source}\n{out.get('ename')}: {out.get('evalue')}"
            # stderr would carry a missing-glyph warning or "building the font cache"
            assert not (out.output_type == "stream" and out.name == "stderr"), out.text


def test_every_code_cell_ran(fresh):
    assert all(cell.execution_count for cell in code_cells(fresh))


# its outputs say what the lesson says ----------------------------------------------------------

MC_LINE = re.compile(r"α = (?P<alpha>[\d.]+)、K = (?P<k>\d+)：模擬 (?P<rounds>[\d,]+) 輪平均 (?P<mean>[\d.]+)，\s*"
                     r"閉式解 (?P<closed>[\d.]+)，標準誤 (?P<se>[\d.]+)，z = (?P<z>[-+\d.]+)")


@pytest.mark.parametrize("which", ["stored", "fresh"])
def test_monte_carlo_agrees_with_the_closed_form(which, request):
    nb = request.getfixturevalue(which)
    (cell,) = code_cells(nb, "monte-carlo")
    m = MC_LINE.search(text_of(cell))
    assert m, text_of(cell)
    alpha, k = float(m["alpha"]), int(m["k"])
    mean, closed, se = float(m["mean"]), float(m["closed"]), float(m["se"])
    assert int(m["rounds"].replace(",", "")) == 30_000
    assert closed == pytest.approx(expected_tokens(alpha, k), abs=5e-5)
    # the standard error of 30,000 rounds: sqrt(Var / n), Var of the truncated geometric
    j = np.arange(1, k + 2)
    p = np.append(alpha ** (j[:-1] - 1) * (1 - alpha), alpha**k)
    var = float((p * j**2).sum() - ((p * j).sum()) ** 2)
    assert se == pytest.approx(np.sqrt(var / 30_000), rel=0.05)
    assert abs(mean - closed) <= 5 * se


@pytest.mark.parametrize("which", ["stored", "fresh"])
def test_every_slider_cell_shows_a_figure(which, request):
    from PIL import Image

    cells = code_cells(request.getfixturevalue(which), "figure")
    assert len(cells) == 3  # 1️⃣ histogram, 3️⃣ speedup, 4️⃣ serving
    for cell in cells:
        pngs = [o["data"]["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]
        assert len(pngs) == 1, cell.source
        width, height = Image.open(io.BytesIO(base64.b64decode(pngs[0]))).size
        assert 400 <= width <= 720 and 250 <= height <= 480


def test_stored_notebook_shows_without_a_kernel(stored):
    """No widget views (they would read "Loading widget..." until Python starts), no widget state."""
    from execute import WIDGET_VIEW

    assert "widgets" not in stored.metadata
    for cell in code_cells(stored):
        for out in cell.outputs:
            assert WIDGET_VIEW not in out.get("data", {})


def test_best_k_and_crossover_cells(fresh):
    (best,) = code_cells(fresh, "best-k")
    assert f"最佳 K = {best_k(0.8, 0.05)}（{speedup(0.8, best_k(0.8, 0.05), 0.05):.2f}×）" in text_of(best)
    (cross,) = code_cells(fresh, "crossover")
    assert f"{crossover_concurrency(0.8, 5, 0.05, t_flop=0.02):.1f} 人" in text_of(cross)


def test_verification_tables_follow_the_rules(fresh):
    (greedy,) = code_cells(fresh, "greedy")
    (sampling,) = code_cells(fresh, "sampling")
    for cell in (greedy, sampling):
        html = cell.outputs[0]["data"]["text/html"]
        assert "<table>" in html and "✓ 接受" in html
    rows = [line.split() for line in text_of(sampling).splitlines()[2:]]
    for row in (r for r in rows if r[2] != "—"):
        accept_prob, u = float(row[4]), float(row[5])
        p, q = float(row[2]), float(row[3])  # each rounded to 2 decimals
        low, high = min(1.0, (p - 0.005) / (q + 0.005)), min(1.0, (p + 0.005) / max(q - 0.005, 1e-9))
        assert low - 0.005 <= accept_prob <= high + 0.005
        assert ("✓" in row[6]) == (u < accept_prob)


def test_solutions_match_the_package(stored):
    solutions = [c.source for c in stored.cells
                 if c.cell_type == "markdown" and "solution" in c.metadata.get("tags", [])]
    assert len(solutions) == 3
    assert all(s.lstrip().startswith("<details>") and "</details>" in s for s in solutions)
    one, two, three = solutions
    row = " | ".join(f"{expected_tokens(a, 5):.2f}" for a in (0.40, 0.50, 0.60, 0.70, 0.80, 0.90, 0.95))
    assert f"| 每輪 token 數 | {row} |" in one
    assert f"只有 {expected_tokens(0.4, 100):.2f} 個" in one
    best, knee = best_k(0.85, 0.06), knee_k(0.85, 0.06)
    s_best, s_knee = speedup(0.85, best, 0.06), speedup(0.85, knee, 0.06)
    assert f"K = {best}（{s_best:.2f}×）" in two and f"K = {knee}（{s_knee:.2f}×）" in two
    assert f"{s_knee / s_best:.0%}" in two
    slow, fast = (crossover_concurrency(0.8, 5, 0.05, t_flop=t) for t in (0.02, 0.01))
    assert fast > slow and "往右" in three
    assert f"是 {fast:.1f} 人" in three and f"{slow:.1f} 人" in three


# it stays short and in step with the lesson ----------------------------------------------------

def display_width(line: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def test_cells_are_short_calls_into_the_package(stored):
    for cell in code_cells(stored):
        assert len(cell.source.splitlines()) <= MAX_CELL_LINES, cell.source
        # the side panel shows about 75 monospace columns; Chinese characters take two
        assert max(display_width(line) for line in cell.source.splitlines()) <= MAX_LINE_WIDTH
        assert not re.search(r"^\s*(def|class) ", cell.source, re.M), cell.source
        assert "matplotlib" not in cell.source  # figures come from specdec_lab.plotting


def test_sections_are_numbered_like_lesson_1(stored):
    headings = [line for c in stored.cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("## ")]
    marks = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "你的實驗區"]
    assert [next(m for m in marks if m in h) for h in headings] == marks


def test_kernel_is_pyodides(stored):
    assert stored.metadata.kernelspec.name == "python"


# the stored outputs are not stale --------------------------------------------------------------

def test_stored_outputs_match_the_current_code(stored, fresh):
    assert output_differences(stored, fresh) == [], REFRESH


OTHER_NOTEBOOKS = sorted(p.name for p in NOTEBOOK.parent.glob("*.ipynb") if p != NOTEBOOK)


@pytest.mark.parametrize("name", OTHER_NOTEBOOKS)
def test_the_other_notebooks_stored_outputs_match_the_current_code(name):
    """The same check for the beyond notebooks, whose figures share the plotting code."""
    import execute
    import nbformat

    path = NOTEBOOK.parent / name
    stored_nb = nbformat.read(path, as_version=4)
    assert output_differences(stored_nb, execute.execute(path)) == [], f"{name}: {REFRESH}"


@pytest.mark.parametrize("path", sorted(NOTEBOOK.parent.glob("*.ipynb")), ids=lambda p: p.name)
def test_a_displayed_float_is_stored_as_the_lab_shows_it(path):
    """CPython's kernel stores a displayed float as the lab's kernel shows it, with at most 12
    significant digits (site/lab/kernel/specdec_kernel/float_display.py; notebooks/execute.py installs it): lesson 1's
    crossover reads 28.6606666667, not 28.66066666666667. Printed text is the cell's own."""
    import nbformat

    shown = [o["data"]["text/plain"] for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
             for o in c.outputs if o.output_type in ("execute_result", "display_data") and "text/plain" in o.get("data", {})]
    long = [n for text in shown for n in NUMBER.findall(text)
            if "." in n and significant_digits(n) > 13]
    assert long == [], long


def test_consecutive_prints_are_stored_as_one_output():
    """How the kernel split a cell's prints into messages depends on the machine's load; the
    stored notebook does not (three chunks here or two there once made the check flaky)."""
    import execute
    import nbformat

    out = lambda name, text: nbformat.v4.new_output("stream", name=name, text=text)  # noqa: E731
    cell = nbformat.v4.new_code_cell("...", outputs=[
        out("stdout", "a\n"), out("stdout", "b\n"), out("stderr", "!\n"), out("stdout", "c\n")])
    nb = execute.merge_streams(nbformat.v4.new_notebook(cells=[cell]))
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [
        ("stdout", "a\nb\n"), ("stderr", "!\n"), ("stdout", "c\n")]


def test_a_progress_line_shows_while_a_cell_runs_and_is_not_stored(tmp_path):
    """specdec_lab.progress in a real kernel: the line is shown and updated in place while the
    work runs, emptied when it ends, and the stored notebook keeps only the cell's own prints
    (stored with the empty output, whether a slow cell showed a line would depend on the machine)."""
    import execute
    import nbformat
    from nbclient import NotebookClient

    source = ("import time\nfrom specdec_lab.progress import Progress\nprint('前')\n"
              "with Progress('取樣', 10, delay=0, every=0) as bar:\n"
              "    for i in range(1, 11):\n        bar.update(i); time.sleep(0.02)\nprint('後')")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "progress.ipynb"
    nbformat.write(nb, path)
    updates = []
    live = nbformat.read(path, as_version=4)
    client = NotebookClient(live, kernel_name=execute.CPYTHON_KERNEL, timeout=120)
    client.on_cell_executed = None
    real = client.process_message

    def spy(msg, cell, cell_index):
        if msg["msg_type"] in ("display_data", "update_display_data"):
            updates.append(msg["content"]["data"].get("text/plain"))
        return real(msg, cell, cell_index)
    client.process_message = spy
    client.execute()
    assert updates[0] == "取樣：已寫 1 / 10 字（10%），約剩 1 秒" and updates[-2] == "取樣：已寫 10 / 10 字（100%）"
    assert updates[-1] is None  # emptied
    stored = execute.execute(path)
    assert [(o.output_type, o.get("text")) for o in stored.cells[0].outputs] == [("stream", "前\n後\n")]


def test_numbers_differ_beyond_their_last_digits():
    assert not texts_differ("28.660666666666668", "28.66066666666667")
    assert texts_differ("28.660666666666668", "28.660666666667668")
    assert texts_differ("模擬 30,000 輪", "模擬 30,001 輪")
    assert texts_differ("α = 0.80", "α = 0.8")
    assert texts_differ("1e-3", "1e-4")


def test_staleness_check_can_fail(fresh):
    """The comparison above notices a changed number and a changed figure."""
    from specdec_lab import plotting

    changed = copy.deepcopy(fresh)
    (mc,) = code_cells(changed, "monte-carlo")
    mc.outputs[0].text = mc.outputs[0].text.replace("30,000", "30,001")
    speedup_cell = code_cells(changed, "figure")[1]
    other = plotting.figure_png(plotting.speedup_figure(0.8, 0.06))  # one percent more draft cost
    speedup_cell.outputs[0]["data"]["image/png"] = base64.b64encode(other).decode()
    problems = output_differences(fresh, changed)
    assert len(problems) == 2
    assert "printed" in problems[0] and "figure differs" in problems[1]


def test_execute_names_a_missing_notebook_and_those_there_are(capsys):
    """`notebooks/execute.py nosuch.ipynb` ended in a FileNotFoundError traceback."""
    sys.path.insert(0, str(ROOT / "notebooks"))
    import execute  # notebooks/execute.py
    assert execute.main(["nosuch.ipynb"]) == 2
    said = capsys.readouterr().err
    assert "nosuch.ipynb" in said and "lesson1.ipynb" in said


# lesson 2 (lessons/draft-trees.md and its notebook) -------------------------------------------

LESSON2 = ROOT / "lessons" / "draft-trees.md"
NOTEBOOK2 = ROOT / "notebooks" / "lesson2.ipynb"
KEYCAPS = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣"]


@pytest.fixture(scope="module")
def stored2():
    import nbformat

    return nbformat.read(NOTEBOOK2, as_version=4)


@pytest.fixture(scope="module")
def fresh2():
    import execute

    return execute.execute(NOTEBOOK2)


def stored_text2(nb) -> str:
    return "\n".join(text_of(cell) for cell in code_cells(nb))


def test_lesson2_executes_without_errors_or_warnings(fresh2):
    for cell in code_cells(fresh2):
        assert cell.execution_count, cell.source
        for out in cell.outputs:
            assert out.output_type != "error", f"{cell.source}\n{out.get('ename')}: {out.get('evalue')}"
            assert not (out.output_type == "stream" and out.name == "stderr"), out.text


def test_lesson2_imports_are_in_its_first_cell_tagged_setup(stored2):
    first, *rest = code_cells(stored2)
    assert "setup" in first.metadata.get("tags", [])
    assert "import specdec_lab" in first.source or "from specdec_lab" in first.source
    assert [c.source for c in rest if re.search(r"^\s*(import|from) \w", c.source, re.M)] == []


def test_lesson2_cells_are_short_calls_into_the_package(stored2):
    for cell in code_cells(stored2):
        if "setup" not in cell.metadata.get("tags", []):      # (the imports, all in the first cell)
            assert len(cell.source.splitlines()) <= MAX_CELL_LINES, cell.source
        assert max(display_width(line) for line in cell.source.splitlines()) <= MAX_LINE_WIDTH, cell.source
        assert not re.search(r"^\s*(def|class|lambda) ", cell.source, re.M), cell.source
        assert "matplotlib" not in cell.source


def test_lesson2_sections_are_the_lessons_sections(stored2):
    """The notebook's ## 1️⃣ … 6️⃣ are the lesson's ## 1. … 6., and every 「實驗場 N️⃣」 the lesson
    sends the learner to is a section of this notebook."""
    headings = [line for c in stored2.cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("## ")]
    assert [next((k for k in KEYCAPS if k in h), "你的實驗區" if "你的實驗區" in h else h) for h in headings] \
        == KEYCAPS + ["你的實驗區"]
    lesson = LESSON2.read_text(encoding="utf-8")
    numbered = re.findall(r"^## (\d)\. ", lesson, re.M)
    assert numbered == [str(i) for i in range(1, 7)]
    sent_to = set(re.findall(r"實驗場 \*\*(\S+?)\*\*", lesson))
    assert sent_to == set(KEYCAPS), sent_to


@pytest.mark.parametrize("which", ["stored2", "fresh2"])
def test_lesson2_tree_rounds_agree_with_the_formula_within_5_standard_errors(which, request):
    (cell,) = code_cells(request.getfixturevalue(which), "monte-carlo")
    m = re.search(r"模擬 30,000 輪平均 (?P<mean>[\d.]+)，公式 (?P<closed>[\d.]+)，標準誤 (?P<se>[\d.]+)", text_of(cell))
    assert m, text_of(cell)
    mean, closed, se = float(m["mean"]), float(m["closed"]), float(m["se"])
    assert closed == pytest.approx(1 + 0.6 + 0.2 + 0.36 + 0.12 + 0.12 + 0.216, abs=5e-5)
    assert 0 < se and abs(mean - closed) <= 5 * se


def test_lesson2_reproduces_sequoia_appendix_f3(fresh2):
    (cell,) = code_cells(fresh2, "appendix-f3")
    assert "replacement=True: 0.75" in text_of(cell) and "replacement=False: 1.0" in text_of(cell)


def test_lesson2_numbers_in_the_lesson_are_the_notebooks(stored2):
    """Figures the lesson quotes from its lab, as the stored notebook prints them."""
    printed = stored_text2(stored2)
    lesson = LESSON2.read_text(encoding="utf-8")
    for number in ("2.6172", "2.6160", "0.0060", "z = +0.21"):        # §2's Monte Carlo
        assert number in printed, number
    assert "三萬輪平均 2.617，式子 2.616，標準誤 0.006" in lesson and "z = +0.21" in lesson
    for printed_number in ("2.493", "3.223", "4.558"):                 # §4's deep trees
        assert printed_number in printed and printed_number in lesson, printed_number
    for users, nodes, depth, gain in ((1, 49, 5, "3.27"), (8, 5, 2, "2.18"), (64, 0, 0, "1.00")):
        assert f"{users:2} 人：{nodes} 個節點、深 {depth}，{gain}×" in printed       # §6's table
        assert f"| {users} | {nodes}" in lesson and gain in lesson
    for pair in ("1 個候選：0.600　0.600", "2 個候選：0.640　0.689", "3 個候選：0.676　1.000"):
        assert pair in printed, pair                                     # §3's table
    assert "| 2 | 0.640 | 0.689 |" in lesson and "| 3 | 0.676 | 1.000 |" in lesson
    for chi2, dof in (("67.3", "60"), ("48.1", "61"), ("1088.7", "66"), ("260.3", "61")):   # §3's χ²
        assert re.search(rf"{re.escape(chi2)}\s+{dof}\s", printed), chi2
        assert f"{float(chi2):,.1f} / {dof}" in lesson, chi2
    for row in ("0.52 0.65 0.66 0.69 0.88", "0.58 0.42 0.37 0.26 0.18",              # §5's stand-ins
                "0.39 0.76 0.89 0.89 0.88 0.86 0.84 0.95", "0.54 0.74 0.80 1.00"):
        assert row in printed and row.replace(" ", "、") in lesson, row
    for tokens, gain in (("2.38", "2.27×"), ("1.95", "1.56×"), ("3.54", "3.37×"), ("1.66", "1.50×")):
        assert re.search(rf"{tokens}\s+{gain}", printed) and f"| {tokens} | {gain} |" in lesson, tokens
    for row in ("8.00      1.92           1.37×                  0.87×", "2.90      1.92           1.61×"):
        assert row in printed, row                                      # §5's confidence sweep
    assert "| 0（全驗） | 8.00 | 1.92 | 1.37× | 0.87× |" in lesson and "| 0.1 | 2.90 | 1.92 | 1.61× | 1.29× |" in lesson
