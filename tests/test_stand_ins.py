"""site/lab/kernel/specdec_kernel/stand_ins.py, in this CPython, on made-up modules: a stand-in answers the first import of
its module without importing the real one; a name it holds calls the real module when used; any
other name is the real module's as soon as it can be imported, the fallback (or a clear error)
until then. The kernel's own stand-ins (sqlite3, IPython.terminal.embed) run in Pyodide in
tests/test_lab_build.py."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "lab" / "kernel"))
from specdec_kernel import stand_ins  # noqa: E402  (plain Python, run inside Pyodide)

pytestmark = pytest.mark.fast


@pytest.fixture
def imports(tmp_path, monkeypatch):
    """A folder on sys.path for made-up modules; sys.meta_path and sys.modules as they were after."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_a_held_name_imports_the_real_module_only_when_called(imports):
    (imports / "term").mkdir()
    (imports / "term" / "__init__.py").write_text("")
    (imports / "term" / "embed.py").write_text(
        "import heavy\ndef embed(x):\n    return ('real', x)\nclass Shell:\n    pass\n")
    (imports / "heavy.py").write_text("LOADED = True\n")
    stand_ins.install({"term.embed": ({"embed": stand_ins.stood_in("term.embed", "embed")}, {})})

    from term.embed import embed            # as `import IPython` does
    assert "heavy" not in sys.modules and sys.modules["term.embed"].__stand_in__
    assert not hasattr(sys.modules["term.embed"], "__path__")    # a dunder probe imports nothing
    assert "heavy" not in sys.modules
    assert embed(3) == ("real", 3) and "heavy" in sys.modules
    assert not getattr(sys.modules["term.embed"], "__stand_in__", False)     # the real one now
    import term.embed
    assert term.embed.Shell.__module__ == "term.embed"


def test_another_name_is_the_real_modules_and_the_stand_in_answers_one_import_only(imports):
    (imports / "heavy.py").write_text("VALUE = 42\n")
    finder = stand_ins.install({"heavy": ({}, {})})
    import heavy
    assert heavy.__stand_in__ and finder.waiting == {}
    assert heavy.VALUE == 42                  # the real module, imported as the name was asked for
    assert sys.modules["heavy"] is not heavy and sys.modules["heavy"].VALUE == 42


def test_until_the_real_module_can_be_imported_the_fallback_answers(imports):
    """sqlite3 before its package is loaded: IPython reads `Connection` as the kernel starts."""
    stand_ins.install({"db": ({}, {"Connection": stand_ins.NotAConnection})})
    import db
    assert db.Connection is stand_ins.NotAConnection and not isinstance(object(), db.Connection)
    with pytest.raises(AttributeError, match=r"db\.connect：db 還沒載入.*import db"):
        db.connect(":memory:")
    assert sys.modules["db"] is db            # the stand-in stays while the real one is missing
    # the package arrives (Pyodide loads it before a cell that imports it): every name is real
    (imports / "db.py").write_text("class Connection:\n    pass\ndef connect(path):\n    return Connection()\n")
    importlib.invalidate_caches()
    assert isinstance(db.connect(":memory:"), db.Connection)
    assert db.Connection is not stand_ins.NotAConnection
    import db as again
    assert not getattr(again, "__stand_in__", False)


def test_a_held_name_whose_module_cannot_be_imported_says_so(imports):
    stand_ins.install({"gone": ({"embed": stand_ins.stood_in("gone", "embed")}, {})})
    from gone import embed
    with pytest.raises(ModuleNotFoundError, match="gone"):
        embed()
