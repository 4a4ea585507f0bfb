"""Tables in the notebooks' stored outputs line up in a monospace font, where a Chinese character
takes two columns (``specdec_lab.tables.display_width``).

f-string padding (``f"{'任務':<8}"``) counts characters, not columns, so a table printed that way
drifts apart as soon as a cell holds Chinese; the notebooks show tables through
``specdec_lab.tables.Table`` instead. This reads every text output stored in notebooks/*.ipynb
(what the 實驗場 shows before Python is ready), finds the table-like runs of lines (lines whose
fields are separated by two or more spaces) and checks that every column starts at one display
column (left-aligned) or ends at one (right-aligned) in all of the run's lines.
"""
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from specdec_lab.lossless_experiments import LookupRow, LookupTable
from specdec_lab.tables import Table, display_width

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
GAP = re.compile(r"(?<=\S) {2,}(?=\S)")  # two or more spaces between fields, not indentation


def output_texts(path: Path):
    """(where, text) of every stored text output: prints, and the text form of displayed values."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for n, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        for out in cell.get("outputs", []):
            text = out.get("text") if out["output_type"] == "stream" else out.get("data", {}).get("text/plain")
            if text:
                yield f"{path.name}, code cell {n}", "".join(text)


def fields(line: str) -> list[tuple[int, int]]:
    """(first, last + 1) display column of each field of ``line``."""
    spans, start = [], 0
    for gap in [*GAP.finditer(line), None]:
        end = gap.start() if gap else len(line.rstrip())
        first = display_width(line[:start])
        spans.append((first, first + display_width(line[start:end])))
        start = gap.end() if gap else start
    return spans


def table_runs(text: str) -> list[list[str]]:
    """Runs of two or more consecutive lines that each have a field gap."""
    runs, current = [], []
    for line in [*text.splitlines(), ""]:
        if GAP.search(line):
            current.append(line)
            continue
        if len(current) >= 2:
            runs.append(current)
        current = []
    return runs


def misalignments(lines: list[str]) -> list[str]:
    """What does not line up in one table-like run of lines (empty when every column does)."""
    spans = [fields(line) for line in lines]
    if len({len(s) for s in spans}) != 1:
        return [f"the lines have {sorted({len(s) for s in spans})} fields"]
    problems = []
    for column in range(len(spans[0])):
        starts = {s[column][0] for s in spans}
        ends = {s[column][1] for s in spans}
        if len(starts) > 1 and len(ends) > 1:
            problems.append(f"field {column + 1} starts at display columns {sorted(starts)} "
                            f"and ends at {sorted(ends)}")
    return problems


def test_the_notebooks_show_tables():
    """Not vacuous: the stored outputs hold table-like runs, among them lossless D and the trees."""
    found = {where: runs for path in NOTEBOOKS for where, text in output_texts(path)
             if (runs := table_runs(text))}
    assert {w.split(",")[0] for w in found} >= {"lesson1.ipynb", "lossless.ipynb", "your_gpu.ipynb"}
    lines = [line for runs in found.values() for run in runs for line in run]
    assert any(line.startswith("自由發揮") for line in lines)  # lossless D
    assert any(line.startswith("樹，32 個候選") for line in lines)  # your_gpu's trees


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_tables_line_up_by_display_width(path):
    problems = [f"{where}: {problem}\n" + "\n".join(run)
                for where, text in output_texts(path) for run in table_runs(text)
                for problem in misalignments(run)]
    assert not problems, "\n\n".join(problems)


# the check can fail, and Table passes it -----------------------------------------------------------

ROWS = (LookupRow("改寫", 1193, 0.452, 0.89, 2.51, 0.03), LookupRow("自由發揮", 2559, 0.063, 0.65, 1.16, 0.01))


def padded_by_characters(rows) -> list[str]:
    """A table padded with f-string widths, which count characters: it drifts with Chinese."""
    lines = [f"{'任務':<8}{'輪數':>6}{'有猜的輪':>10}{'每輪前進':>10}"]
    lines += [f"{r.task:<8}{r.rounds:>6}{r.proposed:>10.1%}{r.tokens_per_round:>10.2f}" for r in rows]
    return lines


def test_a_table_padded_by_characters_is_caught():
    lines = padded_by_characters(ROWS)
    assert table_runs("\n".join(lines)) == [lines]
    assert misalignments(lines)


def test_the_same_padding_lines_up_without_chinese():
    """The failure above is the Chinese, not the detector: with ASCII words the same f-string
    widths line up."""
    rows = [replace(r, task=name) for r, name in zip(ROWS, ("copy", "free"))]
    lines = [f"{'task':<8}{'rounds':>8}{'proposed':>10}{'per round':>11}"]
    lines += [f"{r.task:<8}{r.rounds:>8}{r.proposed:>10.1%}{r.tokens_per_round:>11.2f}" for r in rows]
    assert len(table_runs("\n".join(lines))) == 1 and not misalignments(lines)


@pytest.mark.parametrize("align", ["", "<>>>>", ">>>>>"])
def test_a_table_lines_up_whatever_its_alignment(align):
    table = LookupTable(ROWS).table
    text = str(Table(table.headers, table.rows, caption="一行說明，不算表", align=align))
    (run,) = table_runs(text)
    assert len(run) == 1 + len(ROWS) and not misalignments(run)
