"""Reading the lessons' Markdown for the tests that check their numbers against the package
(tests/test_lesson_numbers.py for lesson 1, tests/test_beyond_numbers.py for the beyond lessons)."""
from pathlib import Path

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


def lesson(name: str) -> str:
    """The Markdown of ``lessons/<name>``."""
    return (LESSONS / name).read_text(encoding="utf-8")


def says(snippet: str, text: str, where: str) -> None:
    """Assert that ``snippet`` (built from a computed value) appears verbatim in the lesson."""
    assert snippet in text, f"{where}: expected the lesson to say {snippet!r} (the package's value)"


def table(text: str, header: str) -> list[list[str]]:
    """Rows (lists of cell strings, Markdown emphasis and code marks removed) of the Markdown table
    whose header line starts with ``header``; leading indentation (tables inside folds) is allowed."""
    lines = [line.strip() for line in text.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:  # skip the header and the |---| line
        if not line.startswith("|"):
            break
        rows.append([c.strip().replace("**", "").replace("`", "") for c in line.strip("|").split("|")])
    assert rows, f"the table {header!r} has no rows"
    return rows
