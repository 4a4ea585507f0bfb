"""Build the 實驗場: a JupyterLite site (notebook app, Pyodide kernel) on the self-hosted,
verified Pyodide, with specdec_lab and the widget wheels registered in the lock.

    stage   build/lite-src/    the JupyterLite "lite dir": config from site/lab/, static/pyodide/
    output  build/lab/         the finished lab, later copied to build/site/lab/; Pyodide in
                               static/pyodide-<content hash>/ (cacheable for good)
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from lab.builder import bytecode, contents, fetch, later, lock, pyodide_dist, split_wheel, zip_import

LAB = Path(__file__).parent.parent      # site/lab/: the lab's config files
KERNEL = LAB / "kernel"                 # what runs in the learner's kernel (its worker)
PAGE = LAB / "page"                     # the notebook page's script, in files (PAGE_MODULES)
ROOT = LAB.parent.parent
CONFIG_FILES = ["jupyter-lite.json", "jupyter_lite_config.json", "overrides.json"]


def load_config() -> dict:
    return tomllib.loads((LAB / "runtime.toml").read_text(encoding="utf-8"))


def project_wheel(out: Path, project: Path = ROOT) -> Path:
    """specdec_lab as a wheel (`project`: another copy of the project, for tests)."""
    return wheel_of(project, out)


def wheel_of(source: Path, out: Path) -> Path:
    """The Python project at `source` as a wheel in `out` (`pip wheel --no-deps`), built fresh each
    time; the same sources give the same bytes (SOURCE_DATE_EPOCH), so an unchanged package keeps
    its cached bytecode and the browser keeps its cached Pyodide folder."""
    stem = distribution_name(source).replace("-", "_")
    for old in out.glob(f"{stem}-*.whl"):
        old.unlink()
    for folder in [*(source / "build").glob("lib"), *(source / "build").glob("bdist.*")]:
        shutil.rmtree(folder)    # setuptools' own build folders: a file gone from the sources would stay in them
    env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}   # 1980-01-01, the oldest a zip can say
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(source),
                    "-w", str(out)], check=True, env=env)
    (wheel,) = out.glob(f"{stem}-*.whl")
    return wheel


def kernel_wheel(out: Path) -> Path:
    """specdec_kernel (site/lab/kernel/) as a wheel, built from a copy: setuptools leaves its
    build/ and .egg-info folders beside the sources it builds."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "kernel"
        shutil.copytree(KERNEL, copy, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "*.js"))
        return wheel_of(copy, out)


def distribution_name(source: Path) -> str:
    """The lock name of the Python project at `source` (its pyproject.toml's project.name)."""
    pyproject = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    return pyodide_dist.normalize(pyproject["project"]["name"])


KERNEL_EXTENSION = "@jupyterlite/pyodide-kernel-extension"


def extension_wheels(names: list[str]) -> list[Path]:
    """The named wheels from the installed jupyterlite-pyodide-kernel's labextension (pypi/),
    each checked against the sha256 in the all.json shipped beside them."""
    folder = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / KERNEL_EXTENSION / "static" / "pypi"
    index = json.loads((folder / "all.json").read_text())
    wheels = []
    for name in names:
        releases = index[name]["releases"]
        (files,) = [files for version, files in releases.items() if not version.endswith(".999")]
        (info,) = files
        wheel = folder / info["filename"]
        if fetch.sha256_of(wheel) != info["digests"]["sha256"]:
            raise fetch.BuildError(f"{wheel}: sha256 與 all.json 不符")
        wheels.append(wheel)
    return wheels


def kernel_wheels(cfg: dict, build: Path) -> list[tuple[Path, dict]]:
    """The wheels to register in the lock, each with its wheel_entry options: the kernel's own
    (runtime.toml [lock]), the lab's part of the kernel (specdec_kernel, site/lab/kernel/), which
    the kernel's loader loads first, and the project's, last."""
    wheels = [(wheel, {}) for wheel in extension_wheels(cfg["lock"]["kernel_extension"])]
    for line in cfg["lock"]["pypi"]:
        requirement, sha256 = line.split()
        wheels.append((fetch.pypi_wheel(requirement, sha256), {}))
    project = project_wheel(build / "wheels")
    for name, part in cfg["kernel"].get("split_out", {}).items():     # data loaded with a module
        split_dir = build / "wheels" / "split"
        split_dir.mkdir(parents=True, exist_ok=True)
        for old in split_dir.glob(f"{name.replace('-', '_')}-*.whl"):
            old.unlink()
        _, split = split_wheel.split_out(project, part["folder"], name, split_dir)
        wheels.append((split, {"data_only": True}))
    wheels.append((kernel_wheel(build / "wheels" / "kernel"), {}))
    wheels.append((project, {}))
    return wheels


def project_name() -> str:
    """The project's lock name (pyproject.toml's project.name)."""
    return distribution_name(ROOT)


def kernel_package() -> str:
    """The lock name of the lab's part of the kernel (site/lab/kernel/pyproject.toml)."""
    return distribution_name(KERNEL)


def loaded_on_use(cfg: dict, pyodide: Path) -> dict[str, list[str]]:
    """runtime.toml [kernel.loaded_on_use] as module -> the lock names of the packages it needs:
    those its extra of the project's wheel (in `pyodide`, registered) requires beyond the wheel's
    own requirements. Each must resolve in the lock."""
    lock_data = json.loads((pyodide / pyodide_dist.LOCK).read_text())
    entries = {pyodide_dist.normalize(k): v for k, v in lock_data["packages"].items()}
    wheel = pyodide / entries[project_name()]["file_name"]
    own = set(lock.wheel_entry(wheel)["depends"])
    not_loaded = {pyodide_dist.normalize(n) for n in cfg["kernel"]["not_loaded"]}
    modules = {}
    for module, extra in cfg["kernel"].get("loaded_on_use", {}).items():
        needs = [d for d in lock.wheel_entry(wheel, extras=(extra,))["depends"]
                 if d not in own and d not in not_loaded]
        if not needs:
            raise fetch.BuildError(f"runtime.toml [kernel.loaded_on_use]：{wheel.name} 沒有 {extra!r} extra 的依賴")
        pyodide_dist.closure(lock_data, needs)          # every one in the lock, or the build stops
        modules[module] = [entries[n]["name"] for n in needs]
    for name, part in cfg["kernel"].get("split_out", {}).items():
        if part["with"] not in modules:
            raise fetch.BuildError(f"runtime.toml [kernel.split_out] {name}：{part['with']!r} "
                                   f"不在 [kernel.loaded_on_use] 裡（它要跟哪個模組一起載入？）")
        modules[part["with"]].append(entries[pyodide_dist.normalize(name)]["name"])
    return modules


def stage(build: Path, notebooks: Path, cfg: dict) -> Path:
    lite = build / "lite-src"   # not a prefix of build/lab: JupyterLite skips such config
    if lite.exists():
        shutil.rmtree(lite)
    (lite / "files").mkdir(parents=True)
    for name in CONFIG_FILES:
        shutil.copy(LAB / name, lite / name)
    for nb in sorted(notebooks.glob("*.ipynb")):
        contents.copy_notebook(nb, lite / "files" / nb.name)   # stream text as one string
    pyodide_dir = lite / "static" / "pyodide"
    summary = pyodide_dist.assemble(pyodide_dir, cfg)
    print(f"  Pyodide {cfg['pyodide']['version']}：{summary['source']}，"
          f"{len(summary['packages'])} 個套件（sha256 皆與官方 lock 相符）", file=sys.stderr)
    added = lock.register(pyodide_dir, kernel_wheels(cfg, build),   # the project's wheel last
                          not_loaded=kept_out_at_start(cfg))
    print(f"  登錄到 pyodide-lock.json：{', '.join(added)}", file=sys.stderr)
    check_preload(lite, pyodide_dir)
    zip_imported = cfg["kernel"]["zip_imported"]
    folders = zip_import.prepare(pyodide_dir, zip_imported)
    print(f"  {len(folders)} 個 wheel 由 Python 直接從 zip 匯入（加了 {sum(folders.values())} 個資料夾項目）",
          file=sys.stderr)
    profile = notebooks / cfg["bytecode"]["profile_notebook"]
    compiled = bytecode.add_bytecode(pyodide_dir, preload_list(lite / "jupyter-lite.json"), profile,
                                     project=added[-1], zip_imported=zip_imported,
                                     on_use=loaded_on_use(cfg, pyodide_dir),
                                     also_imported=cfg["bytecode"].get("also_imported", []))
    print(f"  預先編譯 bytecode：{compiled['modules']} 個模組、{compiled['archives']} 個檔案"
          f"（{compiled['from_cache']} 個取自快取）", file=sys.stderr)
    if compiled["archives"]:          # (without Node.js no bytecode: every source stays)
        archives = later_archives(lite, pyodide_dir, cfg, added[-1])
        moved = later.split_archives(pyodide_dir, archives, keep_sources={
            name for name in archives if pyodide_dist.normalize(name.split("-")[0]) in
            {pyodide_dist.normalize(n) for n in cfg["later"]["keep_sources"]}}, imported=set(compiled["imported"]))
        print(f"  啟動時與第一張圖時下載的檔案少了 {moved['moved'] / 1e6:.1f} MB（原始碼與沒用到的模組，"
              f"用到時才從 {moved['archives']} 個 .later.zip 取；剩 {moved['kept'] / 1e6:.1f} MB）", file=sys.stderr)
    return lite


def later_archives(lite: Path, pyodide_dir: Path, cfg: dict, project: str) -> dict[str, str]:
    """The archives Python fetches as the kernel starts (the standard library, the lab's part of
    the kernel and the wheels jupyter-lite.json preloads, with their dependencies) and before a cell first uses a module of
    [kernel.loaded_on_use] (matplotlib, ipywidgets ...), file name -> how Python reads it
    (site/lab/builder/later.py); not the project's wheel, whose sources stay, nor its split-out data."""
    lock_data = json.loads((pyodide_dir / pyodide_dist.LOCK).read_text())
    entries = {pyodide_dist.normalize(k): v for k, v in lock_data["packages"].items()}
    from_zip = {pyodide_dist.normalize(n) for n in cfg["kernel"]["zip_imported"]}
    own = {pyodide_dist.normalize(n) for n in [project, *cfg["kernel"].get("split_out", {})]}
    roots = preload_list(lite / "jupyter-lite.json") + [kernel_package()] + \
        [p for packages in loaded_on_use(cfg, pyodide_dir).values() for p in packages]
    archives = {bytecode.STDLIB: "stdlib"}
    for key in pyodide_dist.closure(lock_data, roots):
        if key not in own and entries[key]["file_name"].endswith(".whl"):
            archives[entries[key]["file_name"]] = "zipimport" if key in from_zip else "wheel"
    return archives


def preload_list(lite_config: Path) -> list[str]:
    """What Pyodide loads as the kernel starts: jupyter-lite.json's loadPyodideOptions.packages
    but for those the Pyodide loader keeps out (kept_out_at_start)."""
    kernel = kernel_settings(lite_config.parent)
    not_loaded = {pyodide_dist.normalize(n) for n in kept_out_at_start(load_config())}
    return [p for p in kernel.get("loadPyodideOptions", {}).get("packages", [])
            if pyodide_dist.normalize(p) not in not_loaded]


def kept_out_at_start(cfg: dict) -> list[str]:
    """The packages jupyter-lite.json names that the kernel's loader keeps out of Python's start:
    runtime.toml [kernel] not_loaded (not shipped) and loaded_on_import (loaded by a cell's import)."""
    return cfg["kernel"]["not_loaded"] + cfg["kernel"].get("loaded_on_import", [])


def check_preload(lite: Path, pyodide_dir: Path) -> None:
    """Every package jupyter-lite.json preloads must be in the lock (else the kernel never starts)."""
    lock_data = json.loads((pyodide_dir / pyodide_dist.LOCK).read_text())
    pyodide_dist.closure(lock_data, preload_list(lite / "jupyter-lite.json"))


def build_lab(build: Path, notebooks: Path) -> Path:
    """Build the lab into build/lab and return that folder."""
    cfg = load_config()
    lite = stage(build, notebooks, cfg)
    out = build / "lab"
    if out.exists():
        shutil.rmtree(out)
    subprocess.run([sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite),
                    "--output-dir", str(out)], cwd=lite, check=True,
                   stdout=subprocess.DEVNULL)
    add_pyodide_loader(out, cfg)
    content_address_pyodide(out)
    write_boot_manifest(out, after_start(out, cfg))
    add_page_script(out)
    add_translations(out)
    return out


LITE_KERNEL = "@jupyterlite/pyodide-kernel-extension:kernel"


def kernel_settings(lab: Path) -> dict:
    """The Pyodide kernel's settings in `lab`'s jupyter-lite.json (a lite dir or a built lab)."""
    config = json.loads((lab / "jupyter-lite.json").read_text())
    return config["jupyter-config-data"]["litePluginSettings"][LITE_KERNEL]


@contextlib.contextmanager
def editing_kernel_settings(lab: Path):
    """`with editing_kernel_settings(lab) as settings:` changes the kernel's settings in `lab`'s
    jupyter-lite.json. The file is replaced, never written through (it may be a hard link)."""
    path = lab / "jupyter-lite.json"
    config = json.loads(path.read_text())
    yield config["jupyter-config-data"]["litePluginSettings"][LITE_KERNEL]
    path.unlink()
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False))


def pyodide_dir(lab: Path) -> Path:
    """The folder of a built lab that holds Pyodide (its name carries a content hash)."""
    return lab / kernel_settings(lab)["pyodideUrl"].removeprefix("./").rsplit("/", 1)[0]


PYODIDE_LOADER = "pyodide-loader.js"
NAME_HINTS_FILE = "specdec-name-hints.json"   # what specdec_kernel.name_hints needs of the notebooks, beside them
FLOAT_DISPLAY = KERNEL / "specdec_kernel" / "float_display.py"   # CPython's kernel runs it too (notebooks/execute.py)
CONFIG_PLACE = '["CONFIG"]'


def loader_config(out: Path, cfg: dict) -> dict:
    """The one JSON object the kernel's loader holds (its CONFIG) and gives specdec_kernel.start:
    the lab's part of the kernel (a lock name), runtime.toml's [kernel] not_loaded (with
    loaded_on_import), zip_imported and loaded_on_use (with the packages each module needs),
    later.json, the files fetched once the start's are in, and the path from the Pyodide folder
    to specdec-name-hints.json (outside that content-addressed folder: a notebook's edit must not
    rename it)."""
    folder = pyodide_dir(out)
    return {"package": kernel_package(), "not_loaded": kept_out_at_start(cfg),
            "zip_imported": cfg["kernel"]["zip_imported"], "loaded_on_use": loaded_on_use(cfg, folder),
            "later": json.loads((folder / later.INDEX).read_text()) if (folder / later.INDEX).exists() else [],
            "after_start": after_start(out, cfg),
            "name_hints_file": os.path.relpath(out / NAME_HINTS_FILE, folder).replace(os.sep, "/")}


def built_loader_config(folder: Path) -> dict:
    """The CONFIG of the loader built into the Pyodide folder `folder`."""
    script = (folder / PYODIDE_LOADER).read_text(encoding="utf-8")
    return json.loads(re.search(r"^  const CONFIG = (.*);$", script, flags=re.M)[1])


def add_pyodide_loader(out: Path, cfg: dict) -> None:
    """The kernel loads Pyodide through site/lab/kernel/pyodide-loader.js, put beside pyodide.js
    with its CONFIG (loader_config) and Pyodide's pyodide.js filled in; what specdec_kernel.name_hints
    needs of the lab's notebooks (files/*.ipynb) goes to specdec-name-hints.json beside them.
    jupyter-lite.json's loadPyodideOptions.packages names the not_loaded ones too, so that the
    kernel does not install them itself (it would install jedi)."""
    not_loaded = cfg["kernel"]["not_loaded"]
    folder = pyodide_dir(out)
    script = (KERNEL / PYODIDE_LOADER).read_text(encoding="utf-8")
    if script.count(CONFIG_PLACE) != 1:
        raise fetch.BuildError(f"{PYODIDE_LOADER}: 找不到要填入 CONFIG 的位置")
    script = script.replace(CONFIG_PLACE, json.dumps(loader_config(out, cfg), ensure_ascii=False))
    if script.count(PYODIDE_JS_PLACE) != 1:
        raise fetch.BuildError(f"{PYODIDE_LOADER}: 找不到放 pyodide.js 的位置")
    script = script.replace(PYODIDE_JS_PLACE, pyodide_js_inline(folder))
    (folder / PYODIDE_LOADER).write_text(script, encoding="utf-8")
    hints = contents.name_hints(sorted((out / "files").glob("*.ipynb")))
    (out / NAME_HINTS_FILE).write_text(json.dumps(hints, ensure_ascii=False), encoding="utf-8")
    with editing_kernel_settings(out) as settings:
        settings["pyodideUrl"] = settings["pyodideUrl"].rsplit("/", 1)[0] + "/" + PYODIDE_LOADER
        packages = settings.setdefault("loadPyodideOptions", {}).setdefault("packages", [])
        packages += [name for name in not_loaded if name not in packages]


PYODIDE_JS_PLACE = "/* PYODIDE_JS */"


def pyodide_js_inline(folder: Path) -> str:
    """Pyodide's pyodide.js as the loader runs it inside a function of its own: without its
    source map comment (the map is for pyodide.js's own URL)."""
    source = (folder / "pyodide.js").read_text(encoding="utf-8")
    lines = [line for line in source.splitlines() if not line.startswith("//# sourceMappingURL=")]
    if "globalThis.loadPyodide" not in source:
        raise fetch.BuildError(f"{folder / 'pyodide.js'}: 不是預期的 pyodide.js（沒有 globalThis.loadPyodide）")
    return "\n".join(lines)


def after_start(out: Path, cfg: dict) -> list[str]:
    """The files the kernel's loader fetches once the start's are in (pyodide-loader.js): the
    project's wheel, which the first cell's import loads, then those of the packages of
    [kernel.loaded_on_use] (the first figure's) and of their dependencies, largest first; none
    that loads at start."""
    folder = pyodide_dir(out)
    lock_data = json.loads((folder / pyodide_dist.LOCK).read_text())
    entries = {pyodide_dist.normalize(k): v for k, v in lock_data["packages"].items()}
    at_start = set(pyodide_dist.closure(lock_data, preload_list(out / "jupyter-lite.json")))
    figure = set(pyodide_dist.closure(lock_data, [p for packages in loaded_on_use(cfg, folder).values()
                                                   for p in packages]))     # with their dependencies
    files = [entries[n]["file_name"] for n in figure - at_start - {project_name()}]
    return [entries[project_name()]["file_name"]] + sorted(files, key=lambda f: -(folder / f).stat().st_size)


def content_address_pyodide(out: Path) -> None:
    """Move static/pyodide to static/pyodide-<hash of the lock and the core files>: every file
    under it keeps its content for as long as its URL exists, so it can be cached for good."""
    folder = pyodide_dir(out)
    digest = hashlib.sha256((folder / pyodide_dist.LOCK).read_bytes())
    for core in sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".whl"):
        digest.update(core.name.encode() + fetch.sha256_of(core).encode())
    target = folder.with_name(f"pyodide-{digest.hexdigest()[:12]}")
    folder.rename(target)
    with editing_kernel_settings(out) as settings:
        loader = settings["pyodideUrl"].rsplit("/", 1)[1]    # pyodide.js or the lab's own loader
        settings["pyodideUrl"] = f"./{target.relative_to(out).as_posix()}/{loader}"


def write_boot_manifest(out: Path, fetched_after_start: list[str] = ()) -> None:
    """specdec-boot.json: the files Python fetches as it starts (the core, the lab's part of the
    kernel and the packages jupyter-lite.json preloads, with their dependencies), those the loader fetches once it has
    started ("after_start": what a lab's offline copy keeps, site/offline/) and every package's size, so the page
    script can say how many megabytes are on their way; and for each import name of a package
    not loaded at start, the packages its first import brings (`import specdec_lab` loads
    matplotlib and more), so the page script can say what a cell is waiting for."""
    pyodide = pyodide_dir(out)
    lock_data = json.loads((pyodide / pyodide_dist.LOCK).read_text())
    entries = {pyodide_dist.normalize(k): v for k, v in lock_data["packages"].items()}
    at_start = pyodide_dist.closure(lock_data, preload_list(out / "jupyter-lite.json"))
    core = sorted(p.name for p in pyodide.iterdir() if p.is_file() and p.suffix not in (".whl", ".zip")
                  and p.name not in (later.INDEX, "pyodide.js") or p.name == "python_stdlib.zip")
    # (the loader holds later.json and pyodide.js)
    files = core + [entries[n]["file_name"] for n in [kernel_package(), *at_start]]   # the loader loads the first
    sizes = {e["name"].lower(): (pyodide / e["file_name"]).stat().st_size for e in entries.values()}

    def named(keys) -> list[str]:     # lock keys -> the names "packages" and Pyodide's log use
        return [entries[k]["name"].lower() for k in keys]

    def brought_by(key: str) -> list[str]:     # the package itself, then the largest first
        rest = named(k for k in pyodide_dist.closure(lock_data, [key]) if k not in at_start and k != key)
        return named([key]) + sorted(rest, key=sizes.get, reverse=True)
    manifest = {
        "base": pyodide.relative_to(out).as_posix() + "/",
        "files": [{"name": f, "bytes": (pyodide / f).stat().st_size} for f in files],
        "after_start": list(fetched_after_start),
        "packages": sizes,
        "at_start": named(at_start),
        "imports": {name: brought_by(key) for key, e in entries.items()
                    if key not in at_start and key != kernel_package() for name in e.get("imports", [])},
    }
    (out / "specdec-boot.json").write_text(json.dumps(manifest, indent=1))


PAGE_SCRIPT = "specdec-lab.js"
# the page script's files in site/lab/page/, in the order they run (core.js says what each does)
PAGE_MODULES = ["core.js", "service-worker.js", "kernel-start.js", "keyboard.js", "looks.js",
                "notebook.js", "phone-width.js", "chinese.js"]


def page_script_text() -> str:
    """specdec-lab.js as the browser gets it: PAGE_MODULES joined in their order inside one
    function, so they share one scope, run in one go and stay out of the page's globals."""
    parts = [f"// site/lab/page/{name}\n" + (PAGE / name).read_text(encoding="utf-8")
             for name in PAGE_MODULES]
    return ("// The 實驗場's page script, joined from site/lab/page/ by site/lab/builder/build_lab.py:"
            " edit those files.\n(function () {\n  'use strict';\n\n" + "\n".join(parts) + "\n})();\n")


def add_page_script(out: Path) -> None:
    """Put specdec-lab.js (page_script_text) into the notebook page, before JupyterLite's own code
    runs, with the built JupyterLite's version (appVersion) on its tag: the script notes it for
    JupyterLite's service worker (site/lab/page/service-worker.js, 15.)."""
    (out / PAGE_SCRIPT).write_text(page_script_text(), encoding="utf-8")
    page = out / "notebooks" / "index.html"
    html = page.read_text(encoding="utf-8")
    version = json.loads((out / "jupyter-lite.json").read_text())["jupyter-config-data"]["appVersion"]
    anchor = '<script\n      id="jupyter-config-data"'
    tag = f'<script src="../{PAGE_SCRIPT}" data-app-version="{version}"></script>\n    '
    if anchor not in html:
        raise fetch.BuildError(f"{page}: 找不到放 {PAGE_SCRIPT} 的位置（JupyterLite 的頁面改了？）")
    page.write_text(html.replace(anchor, tag + anchor, 1), encoding="utf-8")


LOCALE = "zh_TW"
LOCALE_NAME = "中文（台灣）"
LANGUAGE_PACK = "jupyterlab-language-pack-zh-tw"   # pyproject.toml's `lab` extra pins it
UI_STRINGS = "ui-zh_TW.json"      # the course's own translations: what the pack lacks or says otherwise
UI_DOMAINS = ["jupyterlab", "notebook"]    # the gettext domains the lab's front end loads
TRANSLATION_PLUGIN = "@jupyterlab/translation-extension:plugin"


def language_pack() -> Path:
    """The installed zh-TW language pack's LC_MESSAGES folder (its `jupyterlab.languagepack`
    entry point names the package)."""
    points = [p for p in importlib.metadata.entry_points(group="jupyterlab.languagepack") if p.name == LOCALE]
    if not points:
        raise fetch.BuildError(f"沒有裝 {LANGUAGE_PACK}（pyproject.toml 的 lab extra：pip install -e '.[lab]'）")
    spec = importlib.util.find_spec(points[0].value)
    return Path(spec.origin).parent / "locale" / LOCALE / "LC_MESSAGES"


PLACEHOLDER = re.compile(r"%\d+|\{[^}]*\}")


def ui_strings(source: Path = LAB / UI_STRINGS) -> dict[str, dict[str, list[str]]]:
    """site/lab/ui-zh_TW.json as gettext entries: domain -> {msgid, or context + "\\u0004" + msgid:
    [text]}. The file groups them as domain -> context ("" for none; "menu" for a menu's title)
    -> msgid -> text; a text in a list is a plural entry (JupyterLab's `_n("Cut Cell", "Cut Cells", n)`:
    Chinese says both alike), which gettext looks up only as [text, plural text]."""
    found = {}
    for domain, contexts in json.loads(source.read_text(encoding="utf-8")).items():
        if domain.startswith("_"):          # _about: what the file is
            continue
        for context, strings in contexts.items():
            for msgid, text in strings.items():
                plural = isinstance(text, list)
                if plural:
                    (text,) = text
                wanted, said = sorted(PLACEHOLDER.findall(msgid)), sorted(PLACEHOLDER.findall(text))
                if said != wanted and not (plural and set(said) <= {*wanted, "%1"}):   # %1: the count
                    raise fetch.BuildError(f"{source.name}：{msgid!r} 的譯文 {text!r} 少了或多了 %1 之類的位置")
                key = f"{context}\u0004{msgid}" if context else msgid
                found.setdefault(domain, {})[key] = [text, text] if plural else [text]
    return found


def translations(pack: Path, course: dict[str, dict[str, list[str]]]) -> dict:
    """The zh_TW language pack the lab serves (api/translations/zh_TW.json's "data"): the pack's
    domains the lab loads, with the course's strings added; a course string the pack already says
    the same way stops the build (the course file holds only what it must). Where the English ends
    in an ellipsis (…), the pack's three dots are one too: its menus said 從 URL 開啟... beside
    開啟… and 另存筆記本為…."""
    data = {}
    for domain in sorted(set(UI_DOMAINS) | set(course)):
        path = pack / f"{domain}.json"
        strings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        for key, text in strings.items():
            if key and key.endswith("…") and isinstance(text, list):
                strings[key] = [t.replace("...", "…") if isinstance(t, str) else t for t in text]
        strings.setdefault("", {"domain": domain, "language": LOCALE.replace("_", "-"),
                                "plural_forms": "nplurals=1; plural=0;", "version": "course"})
        for key, text in course.get(domain, {}).items():
            if strings.get(key, [None])[0] == text[0]:
                raise fetch.BuildError(f"{UI_STRINGS}：{key.replace(chr(4), ' | ')!r} 語言包已經譯成 {text[0]!r}，不必再寫")
            strings[key] = text
        data[domain] = strings
    return data


def add_translations(out: Path) -> None:
    """The lab's interface in Traditional Chinese: api/translations/zh_TW.json (the language
    pack's strings and site/lab/ui-zh_TW.json's), all.json listing it (JupyterLite's own build
    writes English only, without jupyterlab_server), and overrides.json's locale naming it."""
    overrides = json.loads((LAB / "overrides.json").read_text(encoding="utf-8"))
    if overrides.get(TRANSLATION_PLUGIN, {}).get("locale") != LOCALE:
        raise fetch.BuildError(f"overrides.json：{TRANSLATION_PLUGIN} 的 locale 不是 {LOCALE}")
    api = out / "api" / "translations"
    api.mkdir(parents=True, exist_ok=True)
    names = {"en": {"displayName": "English", "nativeName": "English"},
             LOCALE: {"displayName": LOCALE_NAME, "nativeName": LOCALE_NAME}}
    (api / "all.json").write_text(json.dumps({"data": names, "message": ""}, ensure_ascii=False, indent=1),
                                  encoding="utf-8")
    pack = translations(language_pack(), ui_strings())
    (api / f"{LOCALE}.json").write_text(json.dumps({"data": pack, "message": ""}, ensure_ascii=False,
                                                   separators=(",", ":")), encoding="utf-8")
