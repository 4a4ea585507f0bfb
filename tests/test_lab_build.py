"""The 實驗場's build (site/lab/): the self-hosted Pyodide, the lock, the JupyterLite config.

Fast tests check the pieces on small made-up inputs (a digest mismatch fails the build, lock
entries, the trimmed closure). Build tests build the lab once into a temp folder and check what a
browser will get: the expected files, every Pyodide file against the official lock from npm,
the lock's entries for specdec_lab and the widget wheels, no external URL the browser would load,
and the site's size.
"""
from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import importlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site"))
from lab.builder import build_lab, contents, fetch, later, lock, pyodide_dist  # noqa: E402
from lab.builder.fetch import BuildError  # noqa: E402
from support.site import after_start_files  # noqa: E402

CFG = build_lab.load_config()


# fast: the pieces ----------------------------------------------------------------------------------

def make_wheel(path: Path, name: str, version: str, requires: list[str], modules: list[str]) -> Path:
    wheel = path / f"{name}-{version}-py3-none-any.whl"
    meta = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    with zipfile.ZipFile(wheel, "w") as z:
        for module in modules:
            z.writestr(module, "x = 1\n")
        z.writestr(f"{name}-{version}.dist-info/METADATA", "\n".join(meta) + "\n\n")
    return wheel


def fake_release(folder: Path, packages: list[str], tamper: str | None = None) -> Path:
    """A folder shaped like an unpacked Pyodide release: core files and one wheel per package;
    with `tamper`, that package's wheel no longer matches its lock entry."""
    folder.mkdir()
    for name in CFG["pyodide"]["core_files"]:
        (folder / name).write_bytes(b"core " + name.encode())
    entries = {}
    for name in packages:
        wheel = make_wheel(folder, name, "1.0", [], [f"{name}/__init__.py"])
        file_name, data = wheel.name, wheel.read_bytes()
        if name == tamper:
            with zipfile.ZipFile(wheel, "a") as z:
                z.writestr(f"{name}/extra.py", "y = 2\n")
        entries[name] = {"name": name, "version": "1.0", "file_name": file_name,
                         "sha256": hashlib.sha256(data).hexdigest(), "depends": [],
                         "imports": [name], "install_dir": "site", "package_type": "package",
                         "unvendored_tests": False}
    info = {"version": CFG["pyodide"]["version"], "python": "3.12.7", "arch": "wasm32",
            "platform": "emscripten_3_1_58", "abi_version": "2024_0"}
    (folder / "pyodide-lock.json").write_text(json.dumps({"info": info, "packages": entries}))
    return folder


def tiny_config(roots: list[str]) -> dict:
    return {**CFG, "packages": {"course": roots, "kernel": []}}


def test_pyodide_src_release_is_trimmed_and_checked(tmp_path, monkeypatch):
    src = fake_release(tmp_path / "release", ["numpy", "scipy"])
    monkeypatch.setenv("PYODIDE_SRC", str(src))
    summary = pyodide_dist.assemble(tmp_path / "out", tiny_config(["numpy"]))
    assert summary["packages"] == ["numpy"]
    shipped = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_file())
    assert "numpy-1.0-py3-none-any.whl" in shipped and "scipy-1.0-py3-none-any.whl" not in shipped
    lock_data = json.loads((tmp_path / "out" / "pyodide-lock.json").read_text())
    assert list(lock_data["packages"]) == ["numpy"]
    assert (tmp_path / "out" / "licenses" / "Pyodide-MPL-2.0.txt").read_text().startswith(
        "Mozilla Public License Version 2.0")


def test_a_wheel_that_differs_from_the_lock_fails_the_build(tmp_path, monkeypatch):
    src = fake_release(tmp_path / "release", ["numpy"], tamper="numpy")
    monkeypatch.setenv("PYODIDE_SRC", str(src))
    with pytest.raises(BuildError, match="sha256"):
        pyodide_dist.assemble(tmp_path / "out", tiny_config(["numpy"]))


def test_a_release_of_another_version_is_refused(tmp_path, monkeypatch):
    src = fake_release(tmp_path / "release", ["numpy"])
    lock_path = src / "pyodide-lock.json"
    lock_data = json.loads(lock_path.read_text())
    lock_data["info"]["version"] = "0.26.4"
    lock_path.write_text(json.dumps(lock_data))
    monkeypatch.setenv("PYODIDE_SRC", str(src))
    with pytest.raises(BuildError, match="0.26.4"):
        pyodide_dist.assemble(tmp_path / "out", tiny_config(["numpy"]))


def test_closure_follows_dependencies_and_rejects_unknown_packages():
    lock_data = {"info": {"version": "x"}, "packages": {
        "a": {"depends": ["B_c"]}, "b-c": {"depends": []}, "d": {"depends": []}}}
    assert pyodide_dist.closure(lock_data, ["a"]) == ["a", "b-c"]
    with pytest.raises(BuildError, match="nope"):
        pyodide_dist.closure(lock_data, ["nope"])


def test_lock_entry_reads_imports_dependencies_and_extras(tmp_path):
    wheel = make_wheel(tmp_path, "demo_pkg", "0.1.0",
                       ["numpy>=1.24", "matplotlib>=3.8; extra == 'plot'", "ipywidgets; extra == \"plot\"",
                        "pytest; extra == 'test'",
                        "tomli; python_version < '3.11'"],
                       ["demo_pkg/__init__.py", "demo_helper.py"])
    entry = lock.wheel_entry(wheel, extras=("plot",))
    assert entry["name"] == "demo-pkg" and entry["version"] == "0.1.0"
    assert entry["imports"] == ["demo_helper", "demo_pkg"]
    assert entry["depends"] == ["ipywidgets", "matplotlib", "numpy"]   # not pytest, not tomli
    assert entry["sha256"] == fetch.sha256_of(wheel)


def test_closure_does_not_go_through_skipped_packages():
    lock_data = {"info": {"version": "x"}, "packages": {
        "a": {"depends": ["b", "c"]}, "b": {"depends": ["d"]}, "c": {"depends": []}, "d": {"depends": []}}}
    assert pyodide_dist.closure(lock_data, ["a"], skip=["B"]) == ["a", "c"]


def test_registering_drops_the_packages_not_loaded_from_every_entrys_depends(tmp_path):
    """A wheel whose requirement is declared not loaded (runtime.toml [kernel] not_loaded) is
    registered without it, and an entry already in the lock loses it too; the rest stays."""
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "pyodide-lock.json").write_text(json.dumps({"info": {}, "packages": {
        "base": {"name": "base", "depends": ["front_end"]},
        "front-end": {"name": "front-end", "depends": []}}}))
    wheel = make_wheel(tmp_path, "widgets", "1.0", ["base", "front-end>=1"], ["widgets.py"])
    assert lock.register(tmp_path / "dist", [(wheel, {})], not_loaded=["front_end"]) == ["widgets"]
    written = json.loads((tmp_path / "dist" / "pyodide-lock.json").read_text())["packages"]
    assert written["widgets"]["depends"] == ["base"]
    assert written["base"]["depends"] == []
    lock.register(tmp_path / "dist", [(wheel, {})])           # without the list, kept
    written = json.loads((tmp_path / "dist" / "pyodide-lock.json").read_text())["packages"]
    assert written["widgets"]["depends"] == ["base", "front-end"]


def test_registering_a_wheel_with_a_dependency_missing_from_the_lock_fails(tmp_path):
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "pyodide-lock.json").write_text(json.dumps({"info": {}, "packages": {}}))
    wheel = make_wheel(tmp_path, "lonely", "1.0", ["not-in-the-lock"], ["lonely.py"])
    with pytest.raises(BuildError, match="not-in-the-lock"):
        lock.register(tmp_path / "dist", [(wheel, {})])


def test_the_loaded_on_use_extra_must_exist(tmp_path):
    """An extra the project's wheel does not have stops the build, naming it."""
    dist = tmp_path / "dist"
    dist.mkdir()
    wheel = make_wheel(dist, "specdec_lab", "0.1.0", ["numpy>=1.24", "matplotlib; extra == 'plot'"],
                       ["specdec_lab/__init__.py"])
    (dist / "pyodide-lock.json").write_text(json.dumps({"info": {"version": "0.27.7"}, "packages": {
        "specdec-lab": {"name": "specdec-lab", "file_name": wheel.name, "depends": ["numpy"]},
        "numpy": {"name": "numpy", "depends": []}, "matplotlib": {"name": "matplotlib", "depends": []}}}))
    cfg = dict(CFG, kernel=dict(CFG["kernel"], loaded_on_use={"specdec_lab.plotting": "plot"}, split_out={}))
    assert build_lab.loaded_on_use(cfg, dist) == {"specdec_lab.plotting": ["matplotlib"]}
    # a folder split out of the wheel comes with its module's packages; with a module not loaded
    # on use it would never come: the build stops, naming it
    lock_data = json.loads((dist / "pyodide-lock.json").read_text())
    lock_data["packages"]["specdec-lab-fonts"] = {"name": "specdec-lab-fonts", "depends": []}
    (dist / "pyodide-lock.json").write_text(json.dumps(lock_data))
    cfg["kernel"]["split_out"] = {"specdec-lab-fonts": {"folder": "specdec_lab/fonts/", "with": "specdec_lab.plotting"}}
    assert build_lab.loaded_on_use(cfg, dist) == {"specdec_lab.plotting": ["matplotlib", "specdec-lab-fonts"]}
    cfg["kernel"]["split_out"]["specdec-lab-fonts"]["with"] = "specdec_lab.plots"
    with pytest.raises(BuildError, match="specdec_lab.plots"):
        build_lab.loaded_on_use(cfg, dist)
    cfg["kernel"]["split_out"] = {}
    cfg["kernel"]["loaded_on_use"] = {"specdec_lab.plotting": "plots"}
    with pytest.raises(BuildError, match="plots"):
        build_lab.loaded_on_use(cfg, dist)


def test_a_data_folder_splits_out_into_a_wheel_of_its_own(tmp_path):
    """runtime.toml [kernel.split_out]: the folder's files leave the project's wheel for a new one
    (same version, no imports, no dependencies); every other entry stays byte for byte; each
    wheel's RECORD lists what it holds; unpacked together they are the original."""
    from lab.builder import split_wheel
    wheel = make_wheel(tmp_path, "specdec_lab", "0.1.0", ["numpy>=1.24"],
                       ["specdec_lab/__init__.py", "specdec_lab/plotting/style.py"])
    with zipfile.ZipFile(wheel, "a") as z:
        z.writestr("specdec_lab/fonts/Font.otf", b"\x00OTTO" * 100)
        z.writestr("specdec_lab/fonts/OFL.txt", "licence")
    with zipfile.ZipFile(wheel) as z:
        original = {n: z.read(n) for n in z.namelist()}
    (tmp_path / "out").mkdir()
    project, fonts = split_wheel.split_out(wheel, "specdec_lab/fonts/", "specdec-lab-fonts", tmp_path / "out")
    assert project == wheel and fonts.name == "specdec_lab_fonts-0.1.0-py3-none-any.whl"
    union = {}
    for part, info in ((project, "specdec_lab-0.1.0.dist-info"), (fonts, "specdec_lab_fonts-0.1.0.dist-info")):
        with zipfile.ZipFile(part) as z:
            files = {n: z.read(n) for n in z.namelist()}
        record = files.pop(f"{info}/RECORD").decode().splitlines()
        assert {line.split(",")[0] for line in record} == set(files) | {f"{info}/RECORD"}
        for line in record[:-1]:
            name, digest, size = line.split(",")
            expected = base64.urlsafe_b64encode(hashlib.sha256(files[name]).digest()).rstrip(b"=").decode()
            assert digest == "sha256=" + expected and int(size) == len(files[name])
        union.update({n: d for n, d in files.items() if not n.startswith(info)})
        if part == project:
            assert not [n for n in files if n.startswith("specdec_lab/fonts/")]
            assert files["specdec_lab-0.1.0.dist-info/METADATA"] == original["specdec_lab-0.1.0.dist-info/METADATA"]
        else:
            assert {n for n in files if not n.startswith(info)} == {"specdec_lab/fonts/Font.otf", "specdec_lab/fonts/OFL.txt"}
    assert union == {n: d for n, d in original.items() if ".dist-info/" not in n}
    entry = lock.wheel_entry(fonts, data_only=True)
    assert entry["name"] == "specdec-lab-fonts" and entry["imports"] == [] and entry["depends"] == []
    assert lock.wheel_entry(project)["imports"] == ["specdec_lab"]


def test_a_split_out_folder_must_be_there(tmp_path):
    from lab.builder import split_wheel
    wheel = make_wheel(tmp_path, "specdec_lab", "0.1.0", [], ["specdec_lab/__init__.py", "specdec_lab/fonts/x.py"])
    with pytest.raises(BuildError, match="specdec_lab/data/"):
        split_wheel.split_out(wheel, "specdec_lab/data/", "specdec-lab-data", tmp_path)
    with pytest.raises(BuildError, match="/ 結尾"):
        split_wheel.split_out(wheel, "specdec_lab/fonts", "specdec-lab-fonts", tmp_path)


def test_npm_integrity_check(tmp_path):
    blob = tmp_path / "x.tgz"
    blob.write_bytes(b"hello")
    good = "sha512-" + __import__("base64").b64encode(hashlib.sha512(b"hello").digest()).decode()
    assert fetch._matches_sri(blob, good)
    assert not fetch._matches_sri(blob, good[:-4] + "AAA=")


def test_bytecode_is_added_beside_the_source_and_the_check_can_fail(tmp_path, monkeypatch):
    """site/lab/node/add_bytecode.py (in the build it runs in Pyodide; here in this CPython, so with
    this CPython's magic number): members unchanged, a .pyc after each chosen .py, RECORD lines;
    a module that does not compile stays source only; Python uses the .pyc without checking."""
    import importlib.util
    from lab.node import add_bytecode as compiler   # site/lab/node/add_bytecode.py
    wheel = make_wheel(tmp_path, "demo", "1.0", [], [])
    with zipfile.ZipFile(wheel, "a") as z:
        z.writestr("demo/__init__.py", "VALUE = 1\n")
        z.writestr("demo/skipped.py", "X = 2\n")
        z.writestr("demo/broken.py", "print 'python 2'\n")
        z.writestr("demo-1.0.dist-info/RECORD", "demo/__init__.py,sha256=x,10\n")
    out = tmp_path / "out.whl"
    compiled, failed = compiler.add_bytecode(str(wheel), str(out), "wheel",
                                             ["demo/__init__.py", "demo/broken.py"])
    assert (compiled, failed) == (1, 1)
    here = dict(magic=importlib.util.MAGIC_NUMBER, tag=sys.implementation.cache_tag)
    assert added_bytecode(wheel.read_bytes(), out.read_bytes(), "wheel", **here) == \
        [f"demo/__pycache__/__init__.{sys.implementation.cache_tag}.pyc"]

    # the .pyc is what Python runs, without re-reading the source (it is "unchecked")
    unpacked = tmp_path / "site"
    zipfile.ZipFile(out).extractall(unpacked)
    (unpacked / "demo" / "__init__.py").write_text("VALUE = 'edited'\n")
    monkeypatch.syspath_prepend(str(unpacked))
    monkeypatch.delitem(sys.modules, "demo", raising=False)
    assert importlib.import_module("demo").VALUE == 1

    # the check fails when anything but bytecode changed
    def rewrite(path, change):
        changed = tmp_path / f"changed-{len(list(tmp_path.iterdir()))}.whl"
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(changed, "w") as dst:
            for name in src.namelist():
                data = change(name, src.read(name))
                if data is not None:
                    dst.writestr(name, data)
            if (extra := change("extra", None)) is not None:
                dst.writestr("demo/extra.txt", extra)
        return changed.read_bytes()
    pyc = f"demo/__pycache__/__init__.{sys.implementation.cache_tag}.pyc"
    for change in [lambda n, d: b"VALUE = 3\n" if n == "demo/skipped.py" else d,           # a source edited
                   lambda n, d: d[:8] + bytes(8) + d[16:] if n == pyc else d,                   # another source's hash
                   lambda n, d: b"x" if n == "extra" else d,                                    # a file added
                   lambda n, d: None if n == "demo/broken.py" else d]:                          # a file dropped
        with pytest.raises(AssertionError):
            added_bytecode(wheel.read_bytes(), rewrite(out, change), "wheel", **here)


def test_a_zip_imported_wheel_gets_an_entry_for_every_folder_and_imports_from_the_zip(tmp_path, monkeypatch):
    """site/lab/builder/zip_import.py: zipimport has no implicit directories, so a namespace package (a
    folder without __init__.py, like micropip._vendored) imports from the wheel only once its
    folder has an entry of its own; the members stay as they were."""
    from lab.builder import zip_import
    wheel = make_wheel(tmp_path, "nsdemo", "1.0", [],
                       ["nsdemo/__init__.py", "nsdemo/_vendored/inner/mod.py", "top.py"])
    with zipfile.ZipFile(wheel) as z:
        before = {n: z.read(n) for n in z.namelist()}
    assert zip_import.make_importable(wheel) == 4
    with zipfile.ZipFile(wheel) as z:
        assert sorted(n for n in z.namelist() if n.endswith("/")) == [
            "nsdemo-1.0.dist-info/", "nsdemo/", "nsdemo/_vendored/", "nsdemo/_vendored/inner/"]
        assert {n: z.read(n) for n in z.namelist() if not n.endswith("/")} == before
    assert zip_import.make_importable(wheel) == 0                 # nothing left to add
    monkeypatch.syspath_prepend(str(wheel))
    for name in ["nsdemo", "nsdemo._vendored", "nsdemo._vendored.inner", "nsdemo._vendored.inner.mod", "top"]:
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert importlib.import_module("nsdemo._vendored.inner.mod").x == 1
    assert f"{wheel.name}/nsdemo/_vendored/inner/mod.py" in sys.modules["nsdemo._vendored.inner.mod"].__file__
    assert importlib.import_module("top").__file__ == f"{wheel}/top.py"


def test_zip_import_refuses_compiled_extensions_and_unknown_packages(tmp_path):
    from lab.builder import zip_import
    wheel = make_wheel(tmp_path, "fast", "1.0", [], ["fast/__init__.py", "fast/_speedups.cpython-312-wasm32-emscripten.so"])
    with pytest.raises(BuildError, match="_speedups"):
        zip_import.make_importable(wheel)
    (tmp_path / "pyodide-lock.json").write_text(json.dumps({"info": {}, "packages": {
        "fast": {"name": "fast", "file_name": wheel.name, "depends": []},
        "openssl": {"name": "openssl", "file_name": "openssl-1.1.1w.zip", "depends": []}}}))
    for name in ["typo-package", "openssl"]:                     # not in the lock; not a wheel
        with pytest.raises(BuildError, match=name):
            zip_import.prepare(tmp_path, [name])


def test_bytecode_for_a_zip_imported_wheel_sits_beside_its_module_and_names_the_wheels_path(tmp_path, monkeypatch):
    """add_bytecode.py's "zipimport" kind: <module>.pyc beside <module>.py (zipimport never reads
    __pycache__), RECORD lines, compiled for the path the module will have inside the wheel in
    site-packages (zipimport does not correct it); Python uses the .pyc without the source."""
    import importlib.util
    from lab.node import add_bytecode as compiler   # site/lab/node/add_bytecode.py
    wheel = make_wheel(tmp_path, "demo", "1.0", [], [])
    with zipfile.ZipFile(wheel, "a") as z:
        z.writestr("demo/__init__.py", "VALUE = 1\n")
        z.writestr("demo/sub/mod.py", "def where():\n    return 1 / 0\n")
        z.writestr("demo-1.0.dist-info/RECORD", "demo/__init__.py,sha256=x,10\n")
    from lab.builder import zip_import
    zip_import.make_importable(wheel)
    served = tmp_path / "served" / wheel.name
    served.parent.mkdir()
    assert compiler.add_bytecode(str(wheel), str(served), "zipimport",
                                 ["demo/__init__.py", "demo/sub/mod.py"]) == (2, 0)
    here = dict(magic=importlib.util.MAGIC_NUMBER, tag=sys.implementation.cache_tag)
    assert added_bytecode(wheel.read_bytes(), served.read_bytes(), "zipimport", **here) == \
        ["demo/__init__.pyc", "demo/sub/mod.pyc"]
    with pytest.raises(AssertionError):                           # not the layout of a wheel unzipped
        added_bytecode(wheel.read_bytes(), served.read_bytes(), "wheel", **here)

    # the .pyc is what zipimport runs (the source edited in the zip is not read) ...
    edited = tmp_path / "edited" / wheel.name
    edited.parent.mkdir()
    with zipfile.ZipFile(served) as src, zipfile.ZipFile(edited, "w") as dst:
        for info in src.infolist():
            data = b"VALUE = 'edited'\n" if info.filename == "demo/__init__.py" else src.read(info)
            dst.writestr(info, data)
    monkeypatch.syspath_prepend(str(edited))
    for name in ["demo", "demo.sub", "demo.sub.mod"]:
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert importlib.import_module("demo").VALUE == 1
    # ... and its code says where the module lives in Pyodide: site-packages/<wheel>/<member>
    code = importlib.import_module("demo.sub.mod").where.__code__
    import site
    site_packages = site.getsitepackages()[0]
    assert code.co_filename == f"{site_packages}/{wheel.name}/demo/sub/mod.py"


def test_a_course_translation_must_keep_its_placeholders_and_not_repeat_the_pack(tmp_path):
    """site/lab/ui-zh_TW.json: a text that drops the %1 its English has, or says what the language
    pack already says, stops the build; a plural text (a list) may name the count it leaves out."""
    source = tmp_path / "ui.json"
    source.write_text(json.dumps({"jupyterlab": {"": {"Kernel status: %1": "核心狀態"}}}), encoding="utf-8")
    with pytest.raises(BuildError, match="%1"):
        build_lab.ui_strings(source)
    source.write_text(json.dumps({"jupyterlab": {"": {"Cut Cell": ["剪下儲存格"]}, "menu": {"File": "檔案"}}}),
                      encoding="utf-8")
    course = build_lab.ui_strings(source)
    assert course == {"jupyterlab": {"Cut Cell": ["剪下儲存格", "剪下儲存格"], "menu\u0004File": ["檔案"]}}
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "jupyterlab.json").write_text(json.dumps({"": {"domain": "jupyterlab"}, "menu\u0004File": ["檔案"]}))
    with pytest.raises(BuildError, match="語言包已經譯成"):
        build_lab.translations(pack, course)


def test_the_courses_interface_strings_use_the_packs_terms():
    """The course's own translations say 核心 (kernel), 儲存格 (cell) and 筆記本 (notebook) as the
    language pack's menus do: not 區塊 or 單元 (the pack's own stray words), 內核, Notebook."""
    texts = [text for domain in build_lab.ui_strings().values() for text, *_ in domain.values()]
    assert len(texts) > 50
    assert [t for t in texts if re.search(r"區塊|單元|內核|Notebook|Kernel|\bcell", t)] == []


def test_the_labs_page_script_is_its_listed_files_joined_in_order_into_valid_javascript(tmp_path):
    """specdec-lab.js is site/lab/page/'s files, each in build_lab.PAGE_MODULES once and in that
    order, inside one strict function and nothing else around them but comments: a file left out
    of the list would never reach the browser. Each file and the joined script parse (node --check)."""
    page = ROOT / "site" / "lab" / "page"
    listed = build_lab.PAGE_MODULES
    assert len(set(listed)) == len(listed), listed
    assert sorted(p.name for p in page.iterdir()) == sorted(listed)
    script = build_lab.page_script_text()
    rest, at = script, 0
    for name in listed:
        text = (page / name).read_text(encoding="utf-8")
        found = script.find(text, at)
        assert found >= at, f"{name} is not in the joined script after the files listed before it"
        at = found + len(text)
        rest = rest.replace(text, "", 1)
    assert script.startswith("// ") and "\n(function () {\n  'use strict';\n" in script
    assert script.endswith("\n})();\n")
    wrapper = [line for line in rest.splitlines()
               if line.strip() and not line.startswith("//") and line not in ("(function () {", "  'use strict';", "})();")]
    assert wrapper == []
    joined = tmp_path / build_lab.PAGE_SCRIPT
    joined.write_text(script, encoding="utf-8")
    for path in [*(page / name for name in listed), joined]:
        done = subprocess.run([shutil.which("node"), "--check", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{path.name}: {done.stderr}"


def test_the_english_the_labs_page_script_translates_has_its_chinese_in_the_courses_strings():
    """The lab's page script (21., site/lab/page/chinese.js) passes what the lab writes in English past its translator
    through site/lab/ui-zh_TW.json: the titles and aria-labels it lists (JupyterLite's "Click to
    open kernel logs", JupyterLab's "Cells" ...), Notebook's "Show %1" (View > 右側欄) and the
    notebook file type's name (File > 儲存筆記本 ...). The language pack has none of them: each
    must be in the course's strings, or the lab says it in English."""
    script = build_lab.page_script_text()
    wanted = re.findall(r"\['(\w+)', '(?:title|aria-label)', '([^']+)'\]", script)
    assert len(wanted) >= 9, wanted
    wanted += [("notebook", "Show %1"), ("jupyterlab", "Notebook")]
    course = build_lab.ui_strings()
    assert [(domain, msgid) for domain, msgid in wanted if msgid not in course.get(domain, {})] == []


def test_the_labs_page_script_narrows_the_lessons_signs_in_the_lessons_fonts():
    """The lab's page script (22., site/lab/page/looks.js) wraps in the live lab's Markdown what site/hooks/signs.py wraps
    in the lesson, and its style draws the spans with course.css's fonts: the three keep one set of
    signs and one font list, or a sign added to one is drawn full width in the other."""
    sys.path.insert(0, str(ROOT / "site" / "hooks"))
    try:
        signs = importlib.import_module("signs")
    finally:
        sys.path.remove(str(ROOT / "site" / "hooks"))
    script = build_lab.page_script_text()
    css = (ROOT / "site" / "assets" / "course.css").read_text(encoding="utf-8")
    assert re.search(r"const SIGN = /\[(.+?)\]/;", script).group(1) == signs.SIGNS + signs.SUPERSCRIPTS
    assert re.search(r"const SIGNS = /\(\[(.+?)\]\)\|\(\[(.+?)\]\+\)/g;", script).groups() == (
        signs.SIGNS, signs.SUPERSCRIPTS)
    for name in ("sd-sign", "sd-sup"):
        lesson = re.search(r"\.md-typeset \.%s \{\s*font-family: (.+), var\(--md-text-font-family\);" % name, css)
        lab = re.search(r"\.jp-RenderedMarkdown \.%s \{ font-family: (.+), \$\{FONTS\}; \}" % name, script)
        assert lab.group(1).replace("'", '"') == lesson.group(1), name


# build: the lab as a browser gets it --------------------------------------------------------------

@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The lab built from notebooks/ into a temp build folder (Pyodide from the cache/registries)."""
    build = tmp_path_factory.mktemp("labbuild")
    return build_lab.build_lab(build, ROOT / "notebooks")


def official_npm_files() -> dict[str, bytes]:
    tarball = fetch.npm_tarball(CFG["pyodide"]["npm_tarball"], CFG["pyodide"]["npm_integrity"])
    with tarfile.open(tarball) as tar:
        return {m.name.removeprefix("package/"): tar.extractfile(m).read()
                for m in tar.getmembers() if m.isfile()}


@pytest.mark.build
def test_a_readme_edit_leaves_the_projects_wheel_as_it_was(tmp_path):
    """The lab serves specdec_lab's wheel from the Pyodide folder, whose name is a hash of what it
    holds (browsers cache it for good): the wheel, built by build_lab.project_wheel's command, must
    not change with the repository's README, or every README edit would send every learner the
    whole of Python's start again."""
    wheels = []
    for n, readme in enumerate([(ROOT / "README.md").read_text(encoding="utf-8"), "# edited\n"]):
        copy_ = tmp_path / f"copy{n}"
        shutil.copytree(ROOT / "src", copy_ / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        shutil.copy(ROOT / "pyproject.toml", copy_)
        (copy_ / "README.md").write_text(readme, encoding="utf-8")
        wheels.append(build_lab.project_wheel(copy_ / "dist", project=copy_).read_bytes())
    assert wheels[0] == wheels[1], "the wheel changes with README.md (its METADATA carries it?)"


@pytest.mark.build
def test_lab_has_the_expected_files(lab):
    pyodide = build_lab.pyodide_dir(lab).relative_to(lab).as_posix()
    assert re.fullmatch(r"static/pyodide-[0-9a-f]{12}", pyodide)
    for rel in ["index.html", "notebooks/index.html", "tree/index.html", "jupyter-lite.json",
                "specdec-lab.js", "specdec-boot.json", "files/lesson1.ipynb",
                f"{pyodide}/pyodide.js", f"{pyodide}/pyodide-loader.js", f"{pyodide}/pyodide.asm.js",
                f"{pyodide}/pyodide.asm.wasm", f"{pyodide}/python_stdlib.zip",
                f"{pyodide}/pyodide-lock.json", f"{pyodide}/licenses/README.txt",
                f"{pyodide}/licenses/Pyodide-MPL-2.0.txt",
                f"{pyodide}/licenses/CPython-PSF-LICENSE.txt",
                "extensions/@jupyter-widgets/jupyterlab-manager/package.json",
                "extensions/@jupyterlite/pyodide-kernel-extension/package.json"]:
        assert (lab / rel).is_file(), rel
    boot = json.loads((lab / "specdec-boot.json").read_text())
    assert boot["base"] == pyodide + "/"
    for f in boot["files"]:
        assert (lab / pyodide / f["name"]).stat().st_size == f["bytes"], f["name"]
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        assert (lab / "files" / nb.name).is_file(), nb.name
    page = (lab / "notebooks" / "index.html").read_text()
    assert page.index('src="../specdec-lab.js"') < page.index("config-utils.js")
    version = json.loads((lab / "jupyter-lite.json").read_text())["jupyter-config-data"]["appVersion"]
    assert f'src="../specdec-lab.js" data-app-version="{version}"' in page    # (specdec-lab.js, 15.)


def stream_texts(notebook: dict) -> list:
    return [o["text"] for c in notebook["cells"] for o in c.get("outputs", [])
            if o["output_type"] == "stream"]


def output_texts(notebook: dict) -> list:
    """Every text an output shows: a stream's, and each non-JSON value of its data."""
    return [v for c in notebook["cells"] for o in c.get("outputs", [])
            for v in ([o["text"]] if o["output_type"] == "stream" else
                      [v for m, v in o.get("data", {}).items() if not contents.is_json(m)])]


def test_output_texts_are_joined_and_json_is_left_alone():
    notebook = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]},
        {"output_type": "execute_result", "data": {"text/plain": ["array([1,\n", "       2])"],
                                                   "application/json": ["x", "y"],
                                                   "application/vnd.jupyter.widget-view+json": {"model_id": "m"}}},
        {"output_type": "display_data", "data": {"text/html": ["<p>1</p>\n", "<p>2</p>"]}}]}]}
    outputs = contents.joined_texts(notebook)["cells"][0]["outputs"]
    assert outputs[0]["text"] == "a\nb\n"
    assert outputs[1]["data"] == {"text/plain": "array([1,\n       2])", "application/json": ["x", "y"],
                                  "application/vnd.jupyter.widget-view+json": {"model_id": "m"}}
    assert outputs[2]["data"]["text/html"] == "<p>1</p>\n<p>2</p>"


@pytest.mark.build
def test_the_lab_serves_each_notebook_with_its_output_texts_as_one_string(lab):
    """site/lab/builder/contents.py: JupyterLite's notebook model joins a stored list of lines with ","
    (Array.prototype.join), so the lab's copy holds each output text (a stream's, a result's
    text/plain, an HTML table ...) as one string; nothing else differs."""
    lists = results = 0
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        original = json.loads(nb.read_text(encoding="utf-8"))
        served = json.loads((lab / "files" / nb.name).read_text(encoding="utf-8"))
        lists += sum(isinstance(t, list) and len(t) > 1 for t in output_texts(original))
        results += sum(isinstance(t, list) and len(t) > 1 for t in output_texts(original)) - \
            sum(isinstance(t, list) and len(t) > 1 for t in stream_texts(original))
        assert all(isinstance(t, str) for t in output_texts(served)), nb.name
        assert ["".join(t) if isinstance(t, list) else t for t in output_texts(original)] == output_texts(served), nb.name
        assert served == contents.joined_texts(copy.deepcopy(original)), nb.name   # nothing else
    assert lists > 5 and results > 0      # the notebooks do show multi-line text, printed and as results


@pytest.mark.build
def test_boot_manifest_says_what_a_later_import_loads(lab):
    """specdec-boot.json names the packages loaded with Python and, for each import name of the
    others, what its first import brings: the page script announces those, with megabytes."""
    boot = json.loads((lab / "specdec-boot.json").read_text())
    pyodide = build_lab.pyodide_dir(lab)
    lock_data = json.loads((pyodide / "pyodide-lock.json").read_text())
    entries = {pyodide_dist.normalize(k): v for k, v in lock_data["packages"].items()}
    name = {k: v["name"].lower() for k, v in entries.items()}     # as "packages" and Pyodide's log
    preload = build_lab.preload_list(lab / "jupyter-lite.json")
    at_start = {name[k] for k in pyodide_dist.closure(lock_data, preload)}
    assert set(boot["at_start"]) == at_start and "numpy" in at_start and "matplotlib" not in at_start
    # `import specdec_lab` brings the project alone: matplotlib comes with the first use of
    # specdec_lab.plotting (runtime.toml [kernel.loaded_on_use])
    assert boot["imports"]["specdec_lab"] == ["specdec-lab"]
    brought = boot["imports"]["matplotlib"]
    assert brought[0] == "matplotlib" and len(brought) == len(set(brought))
    assert set(brought) == {name[k] for k in pyodide_dist.closure(lock_data, ["matplotlib"])} - at_start
    assert {"pillow", "contourpy", "kiwisolver"} <= set(brought)
    rest = [boot["packages"][n] for n in brought[1:]]
    assert rest == sorted(rest, reverse=True)                     # the largest named first
    assert boot["imports"]["PIL"] == ["pillow"] and boot["imports"]["ipywidgets"] == ["ipywidgets"]
    assert not {"numpy", "IPython", "ipykernel"} & set(boot["imports"])   # loaded at start
    by_name = {name[k]: e for k, e in entries.items()}
    for package in {n for names in boot["imports"].values() for n in names}:
        assert boot["packages"][package] == (pyodide / by_name[package]["file_name"]).stat().st_size


@pytest.mark.build
def test_in_pyodide_the_plotting_module_mends_the_font_list_instead_of_rebuilding_it(lab, tmp_path):
    """Pyodide's matplotlib rejects its own font list and rebuilds it on every page;
    specdec_lab.plotting mends it first (plotting/font_list.py). Same fonts, same figure, no rebuild."""
    import shutil
    from lab.builder import bytecode
    script = ROOT / "tests" / "support" / "fonts_in_pyodide.py"
    seen = {}
    for mode in ("shipped", "rebuild"):
        out = tmp_path / f"{mode}.json"
        bytecode.run_in_pyodide(shutil.which("node"), build_lab.pyodide_dir(lab), script,
                                {"mode.json": mode}, [], out)
        seen[mode] = json.loads(out.read_text())
    assert seen["rebuild"]["rebuilt"] and not seen["shipped"]["rebuilt"]
    assert seen["shipped"]["fonts"] == seen["rebuild"]["fonts"]
    assert any(f[1] == "Humor Sans" for f in seen["shipped"]["fonts"])
    assert seen["shipped"]["defaults"] == seen["rebuild"]["defaults"]
    assert seen["shipped"]["figure"] == seen["rebuild"]["figure"]


@pytest.mark.build
def test_the_start_archives_hold_bytecode_and_the_rest_comes_later(lab):
    """What Python fetches as the kernel starts holds no source, stub or header (site/lab/builder/later.py):
    those are in the .later.zip beside each archive, which later.json lists member by member and
    the kernel's loader carries; the boot manifest (what the page counts and prefetches) has none."""
    pyodide = build_lab.pyodide_dir(lab)
    boot = json.loads((lab / "specdec-boot.json").read_text())
    archives = [f["name"] for f in boot["files"] if f["name"].endswith((".whl", ".zip"))]
    assert "python_stdlib.zip" in archives and len(archives) > 15
    assert not [f["name"] for f in boot["files"] if f["name"].endswith(later.SUFFIX) or f["name"] == later.INDEX]
    for name in archives:
        with zipfile.ZipFile(pyodide / name) as z:
            assert not [n for n in z.namelist() if later.goes_later(n)], name
    index = json.loads((pyodide / later.INDEX).read_text())
    assert {e["file"] for e in index} == {p.name for p in pyodide.glob("*" + later.SUFFIX)}
    assert {later.later_name(n) for n in archives} <= {e["file"] for e in index}
    moved = 0
    for entry in index:
        with zipfile.ZipFile(pyodide / entry["file"]) as z:
            sources = sorted(n for n in z.namelist() if n.endswith((".py", later.EXTENSION)))
        assert sorted(entry["modules"] + entry["sources"]) == sources, entry["file"]
        assert not set(entry["modules"]) & set(entry["sources"])
        moved += (pyodide / entry["file"]).stat().st_size
    by_file = {e["file"]: e for e in index}
    assert by_file["python_stdlib.later.zip"]["root"] == "/lib/python312.zip/"
    numpy_later = next(e for f, e in by_file.items() if f.startswith("numpy-"))
    assert numpy_later["root"] == "/lib/python3.12/site-packages/"
    assert "numpy/_core/fromnumeric.py" in numpy_later["sources"] and "numpy/f2py/__init__.py" in numpy_later["modules"]
    # extension modules nothing imported are later too (Pyodide would compile every .so of numpy
    # as it loads it); those `import numpy` and numpy.random need stay
    with zipfile.ZipFile(pyodide / numpy_later["file"].replace(later.SUFFIX, ".whl")) as z:
        start_extensions = {n.rpartition("/")[2].split(".")[0] for n in z.namelist() if n.endswith(later.EXTENSION)}
    later_extensions = {n.rpartition("/")[2].split(".")[0] for n in numpy_later["modules"] if n.endswith(later.EXTENSION)}
    assert {"_multiarray_umath", "_umath_linalg", "_generator", "mtrand", "bit_generator"} <= start_extensions
    assert {"_pocketfft_umath", "_rational_tests"} <= later_extensions and not start_extensions & later_extensions
    # the wheels the first figure brings (runtime.toml [kernel.loaded_on_use]) hold bytecode too,
    # but for those that read their own lines as they run ([later] keep_sources): their unused
    # modules and stubs only are later
    keep = {pyodide_dist.normalize(n) for n in CFG["later"]["keep_sources"]}
    assert keep == {"pyparsing", "matplotlib"}
    entries = {pyodide_dist.normalize(k): v for k, v in
               json.loads((pyodide / "pyodide-lock.json").read_text())["packages"].items()}
    for package in ["matplotlib", "pillow", "pyparsing", "ipywidgets", "python-dateutil"]:
        name = entries[package]["file_name"]
        with zipfile.ZipFile(pyodide / name) as z:
            sources = [n for n in z.namelist() if n.endswith(".py")]
        assert name not in archives and later.later_name(name) in by_file, package
        assert bool(sources) == (package in keep), package
        assert by_file[later.later_name(name)]["modules"], package
        assert bool(by_file[later.later_name(name)]["sources"]) == (package not in keep), package
    assert moved > 6e6           # megabytes no longer before the first output or the first figure
    assert build_lab.built_loader_config(pyodide)["later"] == index


@pytest.mark.build
def test_in_pyodide_later_modules_and_source_lines_come_from_their_archives(lab, tmp_path):
    """site/lab/kernel/specdec_kernel/later_import.py in the Pyodide the browser runs (installed as the kernel's loader
    installs it): nothing is fetched as the kernel's packages import; a module only a later
    archive holds imports from it; a traceback through the standard library and numpy shows their
    lines; inspect.getsource reads a module that runs from bytecode."""
    import shutil
    from lab.builder import bytecode
    wanted = ["email.mime.text", "pygments.lexers.rust", "numpy.f2py", "numpy.fft._pocketfft_umath"]
    index = json.loads((build_lab.pyodide_dir(lab) / later.INDEX).read_text())
    listed = {later_module for e in index for later_module in map(later_module_name, e["modules"])}
    assert set(wanted) <= listed
    out = tmp_path / "later.json"
    bytecode.run_in_pyodide(shutil.which("node"), build_lab.pyodide_dir(lab),
                            ROOT / "tests" / "support" / "later_in_pyodide.py", {"modules.json": wanted}, [], out)
    seen = json.loads(out.read_text())
    assert seen["fetched_at_start"] == []
    for name in wanted:
        assert seen["files"][name].startswith("/lib/later/"), seen["files"][name]
    assert seen["fft"] == [10.0, -2.0, -2.0, -2.0]     # the later extension module linked and ran
    # IPython started with the stand-ins: its terminal (prompt_toolkit) never imported, sqlite3 a
    # stand-in until a cell's import loaded its package, real from then on
    assert seen["terminal_imported"] == [] and seen["sqlite3_stand_in"] is True
    assert seen["sqlite3"] == 42 and seen["sqlite3_connection"] is True
    assert 'File "/lib/python312.zip/json/decoder.py"' in seen["tracebacks"]["json"]
    assert "obj, end = self.scan_once(s, idx)" in seen["tracebacks"]["json"]
    assert "numpy/_core/function_base.py" in seen["tracebacks"]["numpy"]
    assert "raise ValueError(" in seen["tracebacks"]["numpy"]
    assert seen["source"].startswith("def dumps(obj, *, skipkeys=False")
    assert len(seen["fetched"]) == 3 and "python_stdlib.later.zip" in seen["fetched"]


def later_module_name(path: str) -> str:
    sys.path.insert(0, str(ROOT / "site" / "lab" / "kernel"))
    from specdec_kernel.later_import import module_name
    return module_name(path)


@pytest.mark.build
def test_lab_config_is_offline_memory_backed_and_exposes_the_app(lab):
    config = json.loads((lab / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert config["exposeAppInBrowser"] is True
    assert config["enableMemoryStorage"] is True
    for key in ["contentsStorageDrivers", "settingsStorageDrivers", "workspacesStorageDrivers"]:
        assert config[key] == ["memoryStorageDriver"], key
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert re.fullmatch(r"\./static/pyodide-[0-9a-f]{12}/pyodide-loader\.js", kernel["pyodideUrl"])
    assert kernel["disablePyPIFallback"] is True
    assert all(url.startswith("./") for url in kernel["pipliteUrls"])
    lock_data = json.loads((build_lab.pyodide_dir(lab) / "pyodide-lock.json").read_text())
    pyodide_dist.closure(lock_data, build_lab.preload_list(lab / "jupyter-lite.json"))   # all in the lock


@pytest.mark.build
def test_the_labs_interface_is_in_traditional_chinese(lab):
    """The lab serves its own zh_TW translations (api/translations/, nothing from the network) and
    its settings pick them: the menus (the pack has no "File", "Kernel" ...), the restart dialog
    the ⏩ button raises, the notebook's footer and the kernel's status are in Chinese; the
    Language menu is left out (settings live in memory: a switch to English would not survive
    the reload it asks for)."""
    api = lab / "api" / "translations"
    listed = json.loads((api / "all.json").read_text(encoding="utf-8"))
    assert set(listed["data"]) == {"en", "zh_TW"} and listed["message"] == ""
    served = json.loads((api / "zh_TW.json").read_text(encoding="utf-8"))
    assert served["message"] == ""          # (a message is written to the console on every load)
    data = served["data"]
    assert {"jupyterlab", "notebook"} <= set(data)
    for domain, strings in data.items():
        assert strings[""]["language"] == "zh-TW" and strings[""]["plural_forms"], domain
    ui = data["jupyterlab"]
    assert [ui[f"menu\u0004{m}"][0] for m in ["File", "Edit", "View", "Run", "Kernel", "Settings", "Help"]] == \
        ["檔案", "編輯", "檢視", "執行", "核心", "設定", "說明"]
    assert ui["Restart Kernel?"] == ["要重新啟動核心嗎？"]
    assert "所有變數" in ui["Do you want to restart the kernel of %1? All variables will be lost."][0]
    assert ui["Restart"] == ["重新啟動"] and ui["Cancel"] == ["取消"]       # the pack's
    assert ui["Click to add a cell."] == ["按這裡新增一個儲存格。"]
    assert ui["Idle"] == ["閒置"] and ui["Kernel status: %1"] == ["核心狀態：%1"]
    assert len(ui["Cut this cell"]) == 2        # a plural msgid: gettext reads it only as a pair
    for domain, strings in build_lab.ui_strings().items():     # every course string is served
        assert {k: data[domain][k] for k in strings} == strings, domain
    config = json.loads((lab / "jupyter-lite.json").read_text())["jupyter-config-data"]
    overrides = config["settingsOverrides"]
    assert overrides["@jupyterlab/translation-extension:plugin"] == {"locale": "zh_TW"}
    (menu,) = overrides["@jupyterlab/mainmenu-extension:plugin"]["menus"]
    assert menu["items"] == [{"type": "submenu", "submenu": {"id": "jp-mainmenu-settings-language"},
                              "disabled": True}]


@pytest.mark.build
def test_the_packages_the_course_does_not_load_are_neither_loaded_nor_shipped(lab):
    """runtime.toml [kernel] not_loaded (jedi, ipywidgets' front-end wheels): no entry of the
    served lock, nothing Pyodide loads at start or at any import, no file. The kernel is told they
    are there (it would install jedi itself) and the loader keeps them from Pyodide."""
    not_loaded = CFG["kernel"]["not_loaded"]
    assert {"jedi", "widgetsnbextension", "jupyterlab-widgets"} <= set(not_loaded)
    pyodide = build_lab.pyodide_dir(lab)
    lock_data = json.loads((pyodide / "pyodide-lock.json").read_text())
    names = {pyodide_dist.normalize(k) for k in lock_data["packages"]}
    dropped = {pyodide_dist.normalize(n) for n in not_loaded} | {"parso"}   # parso: jedi's own
    assert not dropped & names
    everything = pyodide_dist.closure(lock_data, sorted(names))   # every depends resolves ...
    assert not dropped & set(everything)                          # ... and none is dropped
    assert not [f.name for f in pyodide.iterdir()
                if pyodide_dist.normalize(f.name.split("-")[0]) in dropped]
    packages = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]
    assert packages["ipywidgets"]["depends"] == ["comm", "ipython", "traitlets"]
    config = json.loads((lab / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"][build_lab.LITE_KERNEL]
    assert set(not_loaded) <= set(kernel["loadPyodideOptions"]["packages"])
    assert not set(not_loaded) & set(build_lab.preload_list(lab / "jupyter-lite.json"))
    assert kernel["pyodideUrl"].rsplit("/", 1)[1] == build_lab.PYODIDE_LOADER
    assert build_lab.built_loader_config(pyodide)["not_loaded"] == not_loaded + CFG["kernel"]["loaded_on_import"]
    assert 'setattr(shell.Completer, "use_jedi", False)' in (KERNEL / "__init__.py").read_text()
    boot = json.loads((lab / "specdec-boot.json").read_text())
    assert not dropped & {pyodide_dist.normalize(n) for n in boot["packages"]}


@pytest.mark.build
def test_the_loader_fetches_the_projects_and_the_first_figures_files_after_the_start(lab):
    """the loader config's after_start: the project's wheel first (the first cell imports it),
    then every package of [kernel.loaded_on_use] (matplotlib, the fonts, pillow ...), none of the
    start's own, each served."""
    listed = after_start_files(lab)
    pyodide = build_lab.pyodide_dir(lab)
    boot = json.loads((lab / "specdec-boot.json").read_text())
    assert listed[0].startswith("specdec_lab-") and len(listed) == len(set(listed)) > 8
    assert {"matplotlib", "specdec_lab_fonts", "pillow", "ipywidgets"} <= {n.split("-")[0] for n in listed}
    assert not set(listed) & {f["name"] for f in boot["files"]}
    assert all((pyodide / name).is_file() for name in listed)


@pytest.mark.build
def test_sqlite3_is_shipped_but_loaded_by_a_cells_import_only(lab):
    """runtime.toml [kernel] loaded_on_import: in the lock, its file served, but no entry depends on
    it (ipython's official entry does), the loader keeps it out of the start, the kernel is told it
    is there (it would install it itself), the boot manifest says a cell's `import sqlite3` brings it."""
    assert CFG["kernel"]["loaded_on_import"] == ["sqlite3"]
    pyodide = build_lab.pyodide_dir(lab)
    packages = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]
    assert (pyodide / packages["sqlite3"]["file_name"]).is_file()
    assert not [name for name, e in packages.items() if "sqlite3" in e["depends"]]
    kernel = build_lab.kernel_settings(lab)
    assert "sqlite3" in kernel["loadPyodideOptions"]["packages"]
    assert "sqlite3" not in build_lab.preload_list(lab / "jupyter-lite.json")
    boot = json.loads((lab / "specdec-boot.json").read_text())
    assert "sqlite3" not in boot["at_start"] and boot["imports"]["sqlite3"] == ["sqlite3"]
    assert not [f["name"] for f in boot["files"] if f["name"].startswith("sqlite3")]


@pytest.mark.build
def test_the_plotting_modules_packages_are_the_plot_extras_and_the_loader_has_them(lab, tmp_path):
    """runtime.toml [kernel.loaded_on_use]: specdec_lab.plotting's packages are the wheel's "plot"
    extra (matplotlib, ipywidgets), each in the lock with its dependencies; the kernel's loader has
    them and load_on_use.py's source, and wraps the loadPackagesFromImports the kernel calls."""
    assert CFG["kernel"]["loaded_on_use"] == {"specdec_lab.plotting": "plot"}
    pyodide = build_lab.pyodide_dir(lab)
    on_use = build_lab.loaded_on_use(CFG, pyodide)
    assert on_use == {"specdec_lab.plotting": ["ipywidgets", "matplotlib", "specdec-lab-fonts"]}
    lock_data = json.loads((pyodide / "pyodide-lock.json").read_text())
    pyodide_dist.closure(lock_data, on_use["specdec_lab.plotting"])          # all in the lock
    loader = (pyodide / build_lab.PYODIDE_LOADER).read_text()
    assert build_lab.built_loader_config(pyodide)["loaded_on_use"] == on_use
    assert served_kernel_module(pyodide, "load_on_use.py", tmp_path) == (KERNEL / "load_on_use.py").read_text()
    assert "pyodide.loadPackagesFromImports = async" in loader


# CPython 3.12's bytecode header (Pyodide 0.27's interpreter): magic number, and the flags of an
# "unchecked hash-based" .pyc (PEP 552) written by site/lab/node/add_bytecode.py
MAGIC_312 = (3531).to_bytes(2, "little") + b"\r\n"
UNCHECKED_HASH = (1).to_bytes(4, "little")


def added_bytecode(original: bytes, ours: bytes, kind: str, magic: bytes = MAGIC_312,
                   tag: str = "cpython-312") -> list[str]:
    """Check that `ours` is the zip `original` with bytecode added and nothing else changed:
    every original member byte for byte (a wheel's RECORD gains one line per .pyc), and each added
    member is the .pyc of an original .py (kind "wheel": <folder>/__pycache__/<module>.cpython-312.pyc,
    "stdlib" and "zipimport": <module>.pyc beside it) whose header carries `magic` and that
    source's hash. A "zipimport" wheel (runtime.toml [kernel] zip_imported) also has an empty
    directory entry for every folder of its members and no other. Returns the added .pyc names."""
    import _imp
    with zipfile.ZipFile(io.BytesIO(original)) as a, zipfile.ZipFile(io.BytesIO(ours)) as b:
        before, after = set(a.namelist()), b.namelist()
        assert len(after) == len(set(after))
        added = [n for n in after if n not in before]
        assert before <= set(after)
        if kind == "zipimport":
            folders = {name[:i + 1] for name in after if not name.endswith("/")
                       for i, char in enumerate(name) if char == "/"}
            entries = {n for n in after if n.endswith("/")}
            assert entries == folders, sorted(entries ^ folders)
            for name in entries - before:
                assert b.getinfo(name).file_size == 0, name
            added = [n for n in added if not n.endswith("/")]
        record_lines = []
        for name in before:
            if name.endswith(".dist-info/RECORD") and kind != "stdlib":
                old, new = a.read(name).decode().splitlines(), b.read(name).decode().splitlines()
                assert new[:len(old)] == old, name
                record_lines = new[len(old):]
            else:
                assert a.read(name) == b.read(name), name
        for name in added:
            if kind == "wheel":
                folder, _, cached = name.rpartition("__pycache__/")
                stem = cached.partition(".")[0]
                assert cached == f"{stem}.{tag}.pyc", name
            else:
                folder, stem = "", name.removesuffix(".pyc")
                assert name.endswith(".pyc") and "__pycache__" not in name, name
            source = a.read(folder + stem + ".py")
            data = b.read(name)
            assert data[:4] == magic and data[4:8] == UNCHECKED_HASH, name
            assert data[8:16] == _imp.source_hash(int.from_bytes(magic, "little"), source), name
        if kind != "stdlib":
            listed = sorted(line.split(",")[0] for line in record_lines)
            assert listed == sorted(added)
            for line in record_lines:
                name, digest, size = line.split(",")
                data = b.read(name)
                assert int(size) == len(data)
                assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return added


ZIP_IMPORTED = {pyodide_dist.normalize(n) for n in CFG["kernel"]["zip_imported"]}


def wheel_kind(file_name: str) -> str:
    """How the build compiled a served wheel: "zipimport" for runtime.toml [kernel] zip_imported."""
    return "zipimport" if pyodide_dist.normalize(file_name.split("-")[0]) in ZIP_IMPORTED else "wheel"


# out of every lock entry's depends: not shipped, or loaded by a cell's import only (sqlite3)
KEPT_OUT = {pyodide_dist.normalize(n) for n in CFG["kernel"]["not_loaded"] + CFG["kernel"]["loaded_on_import"]}


KERNEL = ROOT / "site" / "lab" / "kernel" / "specdec_kernel"     # the lab's part of the kernel


def served_kernel_module(pyodide: Path, name: str, tmp: Path) -> str:
    """specdec_kernel/<name>'s source as the served specdec-kernel wheel holds it (with its later part)."""
    entry = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]["specdec-kernel"]
    whole = served_whole(pyodide / entry["file_name"], "wheel", tmp)
    with zipfile.ZipFile(io.BytesIO(whole)) as wheel:
        return wheel.read(f"specdec_kernel/{name}").decode("utf-8")


def served_whole(path: Path, kind: str, tmp: Path) -> bytes:
    """A served archive as the build made it before site/lab/builder/later.py moved its sources and unused
    modules to the .later.zip beside it: the two rejoined (or the archive itself, if none)."""
    sibling = path.with_name(later.later_name(path.name))
    if not sibling.exists():
        return path.read_bytes()
    whole = tmp / f"whole-{path.name}"
    later.rejoin(path, sibling, "wheel" if kind == "wheel" else kind, whole)
    return whole.read_bytes()


@pytest.mark.build
def test_every_pyodide_file_is_the_official_one_plus_bytecode(lab, tmp_path):
    """Files from the official release: the build checked each against the official lock, then
    added bytecode (site/lab/builder/bytecode.py) and moved some members to a .later.zip beside it
    (site/lab/builder/later.py). Here: each original still has the official sha256, what is served (with
    its later part) is that original plus bytecode only, and the served lock names the served bytes."""
    official = official_npm_files()
    official_lock = json.loads(official["pyodide-lock.json"])
    by_file = {e["file_name"]: e for e in official_lock["packages"].values()}
    source = pyodide_dist.choose_source(CFG)
    pyodide = build_lab.pyodide_dir(lab)
    ours = json.loads((pyodide / "pyodide-lock.json").read_text())
    our_files = {e["file_name"]: e for e in ours["packages"].values()}
    for name in CFG["pyodide"]["core_files"]:
        if name == "python_stdlib.zip":
            assert added_bytecode(official[name], served_whole(pyodide / name, "stdlib", tmp_path), "stdlib"), name
        else:
            assert (pyodide / name).read_bytes() == official[name], name
    checked = compiled = 0
    for path in sorted(pyodide.iterdir()):
        if path.is_dir() or path.name in CFG["pyodide"]["core_files"] or \
                path.name in ("pyodide-lock.json", build_lab.PYODIDE_LOADER, later.INDEX) or \
                path.name.endswith(later.SUFFIX):   # the loader and the later parts: the lab's own
            continue
        entry = our_files[path.name]
        assert fetch.sha256_of(path) == entry["sha256"], path.name        # the lock says what is served
        if path.name in by_file:                                            # one of Pyodide's own packages
            original = source.read_wheel(path.name)
            assert hashlib.sha256(original).hexdigest() == by_file[path.name]["sha256"], path.name
            if path.suffix == ".whl":
                compiled += bool(added_bytecode(original, served_whole(path, wheel_kind(path.name), tmp_path),
                                                wheel_kind(path.name)))
            else:
                assert path.read_bytes() == original, path.name
            # the lock entry is the official one but for the sha256 and the packages the course
            # does not load (runtime.toml [kernel] not_loaded: matplotlib without fonttools, pytz)
            # or loads on import only (ipython without sqlite3)
            kept = [d for d in by_file[path.name]["depends"] if pyodide_dist.normalize(d) not in KEPT_OUT]
            assert {**entry, "sha256": None} == {**by_file[path.name], "sha256": None, "depends": kept}
            checked += 1
    assert checked >= 20 and compiled >= 15     # 24 of Pyodide's packages are shipped
    # nothing of the official lock is left dangling
    for entry in ours["packages"].values():
        assert (pyodide / entry["file_name"]).is_file(), entry["file_name"]


@pytest.mark.build
def test_registered_wheels_are_their_pinned_originals_plus_bytecode(lab, tmp_path):
    """The wheels the build adds to the lock: each is its pinned original (the sha256 PyPI
    publishes, the kernel extension's all.json, the project's wheel as built) plus bytecode."""
    pyodide = build_lab.pyodide_dir(lab)
    ours = {e["name"]: e for e in json.loads((pyodide / "pyodide-lock.json").read_text())["packages"].values()}
    originals = {}
    for line in CFG["lock"]["pypi"]:
        requirement, sha256 = line.split()
        originals[pyodide_dist.normalize(requirement.split("==")[0])] = fetch.pypi_wheel(requirement, sha256)
    for wheel in build_lab.extension_wheels(CFG["lock"]["kernel_extension"]):
        originals[pyodide_dist.normalize(wheel.name.split("-")[0])] = wheel
    (project,) = (lab.parent / "wheels").glob("*.whl")
    originals["specdec-lab"] = project
    (kernel,) = (lab.parent / "wheels" / "kernel").glob("*.whl")
    originals["specdec-kernel"] = kernel
    for name, original in originals.items():
        served = pyodide / ours[name]["file_name"]
        added = added_bytecode(original.read_bytes(), served_whole(served, wheel_kind(served.name), tmp_path),
                               wheel_kind(served.name))
        if name in ("specdec-lab", "specdec-kernel"):      # their modules are all compiled
            with zipfile.ZipFile(original) as z:
                modules = [n for n in z.namelist() if n.endswith(".py")]
            assert len(added) == len(modules) > (10 if name == "specdec-lab" else 5)


@pytest.mark.build
def test_bytecode_covers_what_the_kernel_imports_and_little_else(lab, tmp_path):
    """The import profile found the kernel's start and lesson 1's imports: they have bytecode;
    most of what is shipped but never imported stays source only (megabytes for nothing)."""
    pyodide = build_lab.pyodide_dir(lab)
    lock_data = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]
    names = set()
    total = 0
    for entry in lock_data.values():
        if entry["file_name"].endswith(".whl"):
            whole = served_whole(pyodide / entry["file_name"], wheel_kind(entry["file_name"]), tmp_path)
            with zipfile.ZipFile(io.BytesIO(whole)) as wheel:
                listed = wheel.namelist()
            names |= {n for n in listed if n.endswith(".pyc")}
            total += sum(n.endswith(".py") for n in listed)
    with zipfile.ZipFile(io.BytesIO(served_whole(pyodide / "python_stdlib.zip", "stdlib", tmp_path))) as stdlib:
        stdlib_names = set(stdlib.namelist())
    for module in ["numpy/_core/_methods", "matplotlib/figure", "matplotlib/backends/backend_agg",
                   "specdec_lab/plotting/style", "specdec_lab/monte_carlo"]:      # unzipped
        folder, _, stem = module.rpartition("/")
        assert f"{folder}/__pycache__/{stem}.cpython-312.pyc" in names, module
    for module in ["IPython/core/interactiveshell", "pyodide_kernel/kernel", "ipywidgets/widgets/widget",
                   "traitlets/traitlets", "micropip/_vendored/packaging/src/packaging/version"]:
        assert f"{module}.pyc" in names, module       # imported from the wheel: beside the source
    for module in ["json/__init__", "asyncio/base_events", "inspect"]:
        assert f"{module}.pyc" in stdlib_names, module
    assert 500 < len(names) < 0.7 * total


@pytest.mark.build
def test_pure_python_wheels_are_served_to_be_imported_from_and_the_kernel_loader_knows_them(lab):
    """runtime.toml [kernel] zip_imported: each a pure-Python wheel of the lock (its layout, directory
    entries and bytecode beside the source, is checked with the originals above); every other
    pure-Python wheel shipped reads its own files by path and is unzipped as before; the kernel's
    Pyodide loader carries the list."""
    pyodide = build_lab.pyodide_dir(lab)
    entries = {pyodide_dist.normalize(k): v
               for k, v in json.loads((pyodide / "pyodide-lock.json").read_text())["packages"].items()}
    assert ZIP_IMPORTED <= set(entries)
    pure = set()
    for name, entry in entries.items():
        if entry["file_name"].endswith(".whl"):
            sibling = pyodide / later.later_name(entry["file_name"])    # (an unused .so goes later)
            files = []
            for archive in [pyodide / entry["file_name"]] + ([sibling] if sibling.exists() else []):
                with zipfile.ZipFile(archive) as z:
                    files += z.namelist()
            if not any(".so" in n.rsplit("/", 1)[-1] for n in files):
                pure.add(name)
    assert ZIP_IMPORTED <= pure
    # its fonts/ opened by path, and the font's own wheel unpacked into that folder (pytz: not
    # shipped); the lab's part of the kernel is loaded before the loader imports any wheel so
    assert pure - ZIP_IMPORTED == {"specdec-lab", "specdec-lab-fonts", "specdec-kernel"}
    assert {"ipython", "prompt-toolkit", "pygments", "traitlets", "micropip"} <= ZIP_IMPORTED
    assert build_lab.built_loader_config(pyodide)["zip_imported"] == CFG["kernel"]["zip_imported"]


@pytest.mark.build
def test_lock_lets_a_plain_import_load_the_course(lab):
    pyodide = build_lab.pyodide_dir(lab)
    packages = json.loads((pyodide / "pyodide-lock.json").read_text())["packages"]
    names = {pyodide_dist.normalize(k): v for k, v in packages.items()}
    assert names["specdec-lab"]["imports"] == ["specdec_lab"]
    assert names["specdec-lab"]["depends"] == ["numpy"]    # the plotting module's: loaded on use
    with zipfile.ZipFile(pyodide / names["specdec-lab"]["file_name"]) as wheel:
        assert "specdec_lab/__init__.py" in wheel.namelist()
        assert not [n for n in wheel.namelist() if n.startswith("specdec_lab/fonts/")]
    # the course font: its own wheel, no import loads it, specdec_lab.plotting does (with matplotlib)
    assert names["specdec-lab-fonts"]["imports"] == [] and names["specdec-lab-fonts"]["depends"] == []
    with zipfile.ZipFile(pyodide / names["specdec-lab-fonts"]["file_name"]) as wheel:
        fonts = [n for n in wheel.namelist() if not n.startswith("specdec_lab_fonts-")]
    assert sorted(fonts) == sorted("specdec_lab/fonts/" + p.name for p in (ROOT / "src" / "specdec_lab" / "fonts").iterdir()
                                   if p.is_file() and p.suffix != ".pyc")
    boot = json.loads((lab / "specdec-boot.json").read_text())
    assert "specdec-lab-fonts" not in boot["at_start"]
    assert not [f for f in boot["files"] if f["name"].startswith("specdec_lab_fonts")]
    for name, version in [("comm", "0.2.3"), ("ipywidgets", "8.1.8"), ("pyodide-kernel", "0.6.1")]:
        assert names[name]["version"] == version, name
    for name, entry in names.items():   # every dependency resolves inside the lock
        assert {pyodide_dist.normalize(d) for d in entry["depends"]} <= set(names), name
    # what the course does not use is not shipped
    assert not {"scipy", "pandas", "pyarrow", "scikit-learn"} & set(names)


CSS_EXTERNAL = re.compile(r"""(?:url\(\s*["']?|@import\s+["'])\s*(?:https?:)?//""", re.IGNORECASE)
ABSOLUTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)


class LoadedUrls(HTMLParser):
    """The URLs an HTML page makes the browser load by itself (not the links one may follow)."""

    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed", "track", "input"):
            self.urls.append(attrs.get("src") or "")
        elif tag == "link":
            self.urls.append(attrs.get("href") or "")
        elif tag == "object":
            self.urls.append(attrs.get("data") or "")


CDN_HOSTS = re.compile(r"https?://(cdn\.jsdelivr\.net|unpkg\.com|cdnjs\.cloudflare\.com|"
                       r"fonts\.googleapis\.com|fonts\.gstatic\.com|www\.googletagmanager\.com|"
                       r"www\.google-analytics\.com|cdn\.plot\.ly|pypi\.org|files\.pythonhosted\.org)")
# JavaScript constants naming a CDN that this build's configuration overrides: the Pyodide kernel's
# fallback when no pyodideUrl is set (ours is ./static/pyodide-<hash>/pyodide-loader.js) and PyPI for %pip
# (disablePyPIFallback is on). The browser test asserts that no request leaves 127.0.0.1.
KNOWN_UNUSED = {"cdn.jsdelivr.net", "pypi.org", "files.pythonhosted.org"}


def scan_for_external_loads(root: Path) -> tuple[list[str], set[str]]:
    """(HTML/CSS/JSON places that make the browser load another origin, CDN hosts named in JS)."""
    loads, js_hosts = [], set()
    for path in root.rglob("*"):
        if not path.is_file() or path.stat().st_size > 20_000_000:
            continue
        rel = path.relative_to(root).as_posix()
        if path.suffix in (".html", ".htm"):
            parser = LoadedUrls()
            parser.feed(path.read_text(errors="replace"))
            loads += [f"{rel}: {url}" for url in parser.urls if ABSOLUTE.match(url)]
        elif path.suffix == ".css":
            loads += [f"{rel}: {m.group(0)}" for m in CSS_EXTERNAL.finditer(path.read_text(errors="replace"))]
        elif path.name in ("jupyter-lite.json", "specdec-boot.json", "pyodide-lock.json") or \
                rel.endswith("/pypi/all.json"):   # the configs that name what the browser fetches
            loads += [f"{rel}: {u}" for u in re.findall(r'"(https?://[^"]+)"', path.read_text())]
        elif path.suffix in (".js", ".mjs"):
            js_hosts |= {m.group(1) for m in CDN_HOSTS.finditer(path.read_text(errors="replace"))}
    return loads, js_hosts


@pytest.mark.build
def test_nothing_in_the_lab_loads_from_another_origin(lab):
    loads, js_hosts = scan_for_external_loads(lab)
    assert loads == []
    assert js_hosts <= KNOWN_UNUSED, js_hosts - KNOWN_UNUSED


def test_the_external_url_scan_can_fail(tmp_path):
    (tmp_path / "a.html").write_text('<script src="https://cdn.jsdelivr.net/x.js"></script>'
                                     '<a href="https://example.org/">ok: a link</a>'
                                     '<link rel="stylesheet" href="https://fonts.googleapis.com/css">')
    (tmp_path / "b.css").write_text("@import 'https://fonts.googleapis.com/css2';")
    (tmp_path / "c.js").write_text("fetch('https://unpkg.com/x')")
    loads, js_hosts = scan_for_external_loads(tmp_path)
    assert len(loads) == 3 and js_hosts == {"unpkg.com"}


@pytest.mark.build
def test_site_size_is_reported(lab, request):
    def mb(path: Path) -> float:
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6
    total, pyodide = mb(lab), mb(build_lab.pyodide_dir(lab))
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter:
        reporter.write_line(f"\n實驗場大小：{total:.1f} MB，其中 Pyodide {pyodide:.1f} MB")
    assert 10 < pyodide < total < 120


# fast: the local server of `make serve` ------------------------------------------------------------

def test_server_types_caching_and_live_reload(tmp_path):
    import threading
    import urllib.request
    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py

    files = {"index.html": "<html><body>課</body></html>",
             "lab/notebooks/index.html": "<html><body>lab</body></html>",
             "lab/static/pyodide-0123456789ab/pyodide.asm.wasm": "\0asm",
             "lab/static/pyodide-0123456789ab/x-1.0-py3-none-any.whl": "PK",
             "lab/build/100.fc995bd.js": "x", "lab/jupyter-lite.json": "{}",
             "search/search_index.json": json.dumps({"docs": ["投機解碼"] * 500}, ensure_ascii=False)}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    reloader = serve.Reloader()
    server = serve.make_server(tmp_path, port=0, reloader=reloader)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def get(path, **headers):
        request = urllib.request.Request(base + path, headers=headers)
        try:
            with urllib.request.urlopen(request) as response:
                body = response.read()
                if response.headers["Content-Encoding"] == "gzip":
                    body = gzip.decompress(body)
                return response.status, response.headers, body.decode("utf-8")
        except urllib.error.HTTPError as err:
            return err.code, err.headers, ""
    try:
        status, headers, _ = get("/lab/static/pyodide-0123456789ab/pyodide.asm.wasm")
        assert headers["Content-Type"] == "application/wasm"
        assert "immutable" in headers["Cache-Control"]
        assert "immutable" in get("/lab/build/100.fc995bd.js")[1]["Cache-Control"]
        status, headers, _ = get("/lab/jupyter-lite.json")
        assert headers["Cache-Control"] == "no-cache"
        assert get("/lab/jupyter-lite.json", **{"If-Modified-Since": headers["Last-Modified"]})[0] == 304
        lesson, lab = get("/")[2], get("/lab/notebooks/index.html")[2]
        assert serve.RELOAD_PATH in lesson and lesson.index("課") < lesson.index(serve.RELOAD_PATH)
        assert serve.RELOAD_PATH not in lab                       # the lab's pages stay as built
        version = get(serve.RELOAD_PATH + "?v=")[2]               # a new page learns the version
        assert version == reloader.version
        # text goes gzip-compressed to a browser that accepts it, as a static host would send it
        index = (tmp_path / "search/search_index.json").read_text(encoding="utf-8")
        status, headers, body = get("/search/search_index.json", **{"Accept-Encoding": "gzip, br"})
        assert headers["Content-Encoding"] == "gzip" and body == index
        assert int(headers["Content-Length"]) < len(index.encode()) / 10
        assert headers["Vary"] == "Accept-Encoding"
        assert "Content-Encoding" not in get("/search/search_index.json")[1]          # not asked for
        assert "Content-Encoding" not in get("/search/search_index.json",
                                             **{"Accept-Encoding": "gzip;q=0"})[1]
        assert get("/lab/static/pyodide-0123456789ab/pyodide.asm.wasm",
                   **{"Accept-Encoding": "gzip"})[1]["Content-Encoding"] == "gzip"
        assert "Content-Encoding" not in get("/lab/static/pyodide-0123456789ab/x-1.0-py3-none-any.whl",
                                             **{"Accept-Encoding": "gzip"})[1]         # a zip already
        lesson_gz = get("/", **{"Accept-Encoding": "gzip"})                           # live-reload page too
        assert lesson_gz[1]["Content-Encoding"] == "gzip" and serve.RELOAD_PATH in lesson_gz[2]
        assert get("/lab/jupyter-lite.json", **{"Accept-Encoding": "gzip",
                   "If-Modified-Since": headers["Last-Modified"]})[0] == 304
        missing = get("/lab/static/pyodide-0123456789ab/missing.js")
        assert missing[0] == 404 and missing[1]["Cache-Control"] == "no-cache"       # a 404 is not kept
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.build
def test_the_kernel_loader_leaves_no_pyproxy_to_the_garbage_collector(lab):
    """WebKit showed "NoGilError: Attempted to use PyProxy when Python GIL not held", uncaught, in
    the lab before the kernel was ready: the loader's toPy() globals were left to the garbage
    collector, whose finalizer needs the GIL, and WebKit ran it while Python had released it. Here
    the engine collects garbage, and runs finalizers, with the GIL released after the loader has
    started Pyodide (under Node.js, the lab's own files): nothing is thrown. (Without the loader's
    destroy() calls: two NoGilErrors.) The kernel leaves proxies of its own to the collector: the
    loader makes the finalizers wait for the GIL, so one dropped with the GIL released frees its
    object once the GIL is back, without an error (without the wait: a NoGilError and the object
    never freed)."""
    assert kernel_start_under_node(lab, "loader_gil.mjs", "--expose-gc") == {"errors": [], "freed": True}


def kernel_start_under_node(lab, script, *node_flags):
    """tests/support/<script> run by Node.js on the built lab's Pyodide folder with the kernel's
    packages (it starts Pyodide through the lab's loader, support/loader_start.mjs): what it
    printed last, as JSON."""
    import shutil
    import subprocess
    packages = build_lab.kernel_settings(lab)["loadPyodideOptions"]["packages"]
    done = subprocess.run([shutil.which("node"), *node_flags, str(ROOT / "tests" / "support" / script),
                           str(build_lab.pyodide_dir(lab)), json.dumps(packages)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.build
def test_the_kernels_files_hold_no_buffer_beyond_their_size(lab):
    """Pyodide unpacks a wheel into MEMFS 64 KB at a time and MEMFS doubles a file's buffer as it
    grows: a 700 KB font kept a 1 MB buffer, some 11 MB of the kernel worker's memory in lesson 1
    (benchmarks/lab_memory.py). The loader cuts every buffer under /lib to its file's size once a
    package is in. Here (under Node.js, the lab's own files: the kernel's packages at start, then
    matplotlib as a cell's import loads it) no file keeps a byte of slack (without the loader's
    change: megabytes), and what Python reads is the wheel's file: matplotlib's DejaVu Sans has
    the wheel's bytes and draws."""
    got = kernel_start_under_node(lab, "loader_files.mjs")
    assert got["files"] > 300 and got["bytes"] > 20e6, got      # (588 files, 34 MB)
    assert got["slack"] == 0, got
    wheel = next(build_lab.pyodide_dir(lab).glob("matplotlib-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        font = z.read("matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf")
    assert got["font"] == hashlib.sha256(font).hexdigest()
    assert got["drawn"] > 1000


@pytest.mark.build
def test_the_loader_holds_pyodides_own_loader_so_the_start_does_not_fetch_it(lab):
    """The kernel's worker fetched pyodide.js (15 KB) with importScripts as Python's start began;
    in WebKit a worker's request waits for the page's main thread, busy then with JupyterLab's
    start (0.1-0.3 s). The loader holds Pyodide's code as released, its source map line left out,
    and runs it instead (the kernel's start under Node.js, below, goes through it); the boot
    manifest (what Python fetches as it starts) no longer lists it."""
    pyodide = build_lab.pyodide_dir(lab)
    loader = (pyodide / build_lab.PYODIDE_LOADER).read_text(encoding="utf-8")
    released = (pyodide / "pyodide.js").read_text(encoding="utf-8")
    kept = "\n".join(line for line in released.splitlines() if not line.startswith("//# sourceMappingURL="))
    assert kept in loader and len(kept) > 10_000
    assert loader.count("globalThis.loadPyodide=loadPyodide.loadPyodide") == 1
    assert "sourceMappingURL" not in loader and build_lab.PYODIDE_JS_PLACE not in loader
    assert "'pyodide.js'" not in loader
    boot = json.loads((lab / "specdec-boot.json").read_text())
    assert "pyodide.js" not in {f["name"] for f in boot["files"]}
    assert {"pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"} <= {f["name"] for f in boot["files"]}


@pytest.mark.build
def test_the_kernel_starts_without_asking_the_drive_and_a_learners_files_still_import(lab):
    """Python looks in every sys.path entry in turn, and for '' (the working directory, the lab's
    drive once the kernel has mounted it) it first asks the directory's mtime: in the browser each
    question is a synchronous request through JupyterLite's service worker and the lab's page
    (76 in one kernel start in Chromium, about 0.5 s of waiting). Under Node.js, the lab's own
    files: the kernel's start (piplite's set-up, then "import pyodide_kernel", as
    jupyterlite-pyodide-kernel 0.6.1 runs them) in a working directory holding a learner's
    traitlets.py and mine.py asks that directory a few times only (IPython's shell puts '' back
    for the start's last imports: 6 here; 72 without the loader's change), is not broken by the
    learner's traitlets.py (it is without), and afterwards '' is on sys.path once, first, as
    before, and mine imports."""
    got = kernel_start_under_node(lab, "kernel_start.mjs")
    assert got["stats"] < 10, got
    assert {k: v for k, v in got.items() if k != "stats"} == {"path0": "", "cwdEntries": 1, "mine": 42, "error": None}


@pytest.mark.build
def test_the_kernel_compiles_shared_libraries_synchronously(lab):
    """WebKit queues an asynchronous WebAssembly compile behind every tier-up compilation already
    waiting for its one compiler thread (2-core machine): numpy's first library waited 1.3 s there
    while Python started. The loader has every library compiled with new WebAssembly.Module, which
    goes to the head of that queue. Here (Pyodide under Node.js, through the lab's own loader,
    numpy loaded and used) every compile given bytes is synchronous, at least one per shared
    library numpy has, numpy works, bytes that are not WebAssembly still fail as CompileError and a
    module already compiled still instantiates. (Without the loader's change: every library in
    the asynchronous list.)"""
    seen = kernel_start_under_node(lab, "loader_libraries.mjs")
    assert seen["asynchronous"] == []
    assert seen["libraries"] >= 5 and len(seen["synchronous"]) >= seen["libraries"]
    assert (seen["sum"], seen["bad"], seen["compiled"]) == (10, "CompileError", True)


@pytest.mark.build
def test_the_loader_reads_the_name_hints_of_the_labs_notebooks_beside_them(lab, tmp_path):
    """pyodide-loader.js installs site/lab/kernel/specdec_kernel/name_hints.py once the kernel has started, with what the
    lab's notebooks (files/*.ipynb) say: each one's first-cell names and its cells' ids (lesson 1's
    expected_tokens, np everywhere), so a 挑戰 cell run before the first cell says to run it. Those
    are in specdec-name-hints.json beside the notebooks, which the loader names by its path from
    the Pyodide folder: the loader itself holds nothing of the notebooks."""
    folder = build_lab.pyodide_dir(lab)
    loader = (folder / build_lab.PYODIDE_LOADER).read_text(encoding="utf-8")
    path = build_lab.built_loader_config(folder)["name_hints_file"]
    hints = json.loads((folder / path).read_text(encoding="utf-8"))
    assert (folder / path).resolve() == (lab / build_lab.NAME_HINTS_FILE).resolve()
    assert hints == contents.name_hints(sorted((lab / "files").glob("*.ipynb")))
    assert hints["first_cells"]["lesson1.ipynb"]["expected_tokens"] == "import"
    assert all(names["np"] == "import" for names in hints["first_cells"].values())
    assert '"first_cells"' not in loader
    source = (KERNEL / "name_hints.py").read_text(encoding="utf-8")
    assert served_kernel_module(folder, "name_hints.py", tmp_path) == source
    assert "tellTheKernelItStarted(pyodide, kernel, hints)" in loader


@pytest.mark.build
def test_editing_a_notebook_keeps_the_pyodide_folders_name(lab, tmp_path):
    """Issue 45: the Pyodide folder is named by a hash of what it holds and cached for good, so a
    lesson's edit must not rename it (every learner would fetch Python again): lossless.ipynb with a
    new cell and a first cell binding one more name, built again, gives the same folder, byte for
    byte; only the notebook and the files that say what it holds change."""
    notebooks = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", notebooks, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = notebooks / "lossless.ipynb"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    first = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    first["source"] = "".join(first["source"]) + "\nedited_name = 1\n"
    notebook["cells"].append({"cell_type": "markdown", "id": "edited-cell", "metadata": {},
                              "source": "多一段說明。"})
    path.write_text(json.dumps(notebook, ensure_ascii=False, indent=1), encoding="utf-8")
    edited = build_lab.build_lab(tmp_path / "build", notebooks)
    before, after = build_lab.pyodide_dir(lab), build_lab.pyodide_dir(edited)
    assert after.name == before.name
    files = lambda root: {p.relative_to(root).as_posix(): fetch.sha256_of(p)   # noqa: E731
                          for p in root.rglob("*") if p.is_file()}
    assert files(after) == files(before)
    old = files(lab)
    changed = {name for name, digest in files(edited).items() if old.get(name) != digest}
    assert "files/lossless.ipynb" in changed and build_lab.NAME_HINTS_FILE in changed
    assert not any(name.startswith("static/pyodide-") for name in changed), sorted(changed)


def test_the_loader_carries_the_float_display(lab, tmp_path):
    """The kernel's loader installs site/lab/kernel/specdec_kernel/float_display.py once the kernel
    has started (specdec_kernel's Kernel.started), as notebooks/execute.py does in CPython's
    kernel: the same source in both."""
    path = build_lab.FLOAT_DISPLAY
    source = path.read_text(encoding="utf-8")
    assert served_kernel_module(build_lab.pyodide_dir(lab), "float_display.py", tmp_path) == source
    assert "float_display.install(shell)" in (KERNEL / "__init__.py").read_text(encoding="utf-8")
    sys.path.insert(0, str(ROOT / "notebooks"))
    import execute
    assert execute.FLOAT_DISPLAY == path
