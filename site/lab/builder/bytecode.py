"""Compiled bytecode for the Python the 實驗場 imports, made at build time.

Pyodide's wheels and its standard library ship as .py source only, so the browser compiles every
module it imports, in WebAssembly, each time the page opens (`import IPython` alone: 2.7 s).
This step adds CPython 3.12 bytecode, compiled by Pyodide itself under Node.js (this machine's
CPython writes another bytecode format), for
  - every module the kernel imports as it starts and while lesson 1 runs (an import profile,
    made by running them in Pyodide: site/lab/node/import_profile.py), and
  - every module of the project's own wheel.
Compiling everything instead would add twice the megabytes for the same speed: about 60% of the
shipped modules are never imported by the course.

The files taken from the official release were checked against its lock before this step
(pyodide_dist.assemble); what is served is that file with bytecode added (site/lab/node/add_bytecode.py
says exactly what changes), a build product, so the lock served with it carries the new sha256.
tests/test_lab_build.py checks that every shipped file is its checked original plus bytecode only
(and, for the wheels Python imports from as they are, site/lab/builder/zip_import.py's directory entries).
The profile is cached until Pyodide's or the kernel's packages change, the compiled files by their
input's sha256 (~/.cache/specdec-lab/bytecode/; delete it to profile again). Without Node.js the build goes on with source
only: slower to start, same behaviour.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from lab.builder import fetch
from lab.builder.pyodide_dist import LOCK, normalize

LAB = Path(__file__).parent.parent
RUNNER = LAB / "node" / "run_in_pyodide.mjs"
PROFILE = LAB / "node" / "import_profile.py"
COMPILE = LAB / "node" / "add_bytecode.py"
STDLIB = "python_stdlib.zip"
STDLIB_PATH = "/lib/python312.zip/"                 # where Pyodide puts the standard library
SITE_PACKAGES = "/lib/python3.12/site-packages/"


def recipe_digest() -> str:
    """Changes whenever the way bytecode is made changes (then nothing cached is used)."""
    digest = hashlib.sha256()
    for path in (RUNNER, PROFILE, COMPILE):   # (specdec_kernel, which they load: a wheel of the lock)
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def add_bytecode(pyodide_dir: Path, preload: list[str], notebook: Path, project: str,
                 zip_imported: list[str] = (), on_use: dict[str, list[str]] | None = None,
                 also_imported: list[str] = ()) -> dict:
    """Replace the standard library's zip and the wheels in `pyodide_dir` by versions with
    bytecode for the modules the profile finds (all of `project`'s, a lock name) and update the
    lock's sha256. `preload` is what the kernel loads with Python, `notebook` what the profile
    runs, `on_use` the packages loaded when a module is first used (build_lab.loaded_on_use);
    the `zip_imported` wheels (lock names) get their bytecode where zipimport reads it;
    `also_imported` modules are imported after the notebook (what only a browser imports).
    Returns a summary for the build log, and the files the profile found imported ("imported")."""
    on_use = on_use or {}
    node = shutil.which("node")
    if not node:
        print("  （找不到 Node.js：Python 套件不預先編譯，實驗場啟動會慢幾秒）", file=sys.stderr)
        return {"archives": 0, "modules": 0, "from_cache": 0, "imported": []}
    lock_path = pyodide_dir / LOCK
    lock = json.loads(lock_path.read_text())
    wheels = {normalize(name): e for name, e in lock["packages"].items() if e["file_name"].endswith(".whl")}
    cache = fetch.cache_dir() / "bytecode" / f"{lock['info']['version']}-{recipe_digest()}"
    cache.mkdir(parents=True, exist_ok=True)

    digests = {name: fetch.sha256_of(pyodide_dir / name)
               for name in [STDLIB] + [e["file_name"] for e in wheels.values()]}
    others = sorted(d for name, d in digests.items() if name != wheels[normalize(project)]["file_name"])
    # the profile is kept until Pyodide's or the kernel's packages (or which of them load at start)
    # change, or another notebook is named: not for each edit of the notebook or the project (a
    # lab build stays ~10 s), which rarely changes which of the other packages' modules are imported
    key = hashlib.sha256("".join(others + [notebook.name, json.dumps(on_use), json.dumps(list(also_imported)),
                                           json.dumps(preload),
                                           json.dumps({k: e["depends"] for k, e in lock["packages"].items()}, sort_keys=True)])
                         .encode()).hexdigest()[:16]
    profile_file = cache / f"profile-{key}.json"
    if not profile_file.exists():
        run_in_pyodide(node, pyodide_dir, PROFILE, {"packages.json": preload, "on_use.json": on_use,
                                                    "modules.json": list(also_imported)},
                       [notebook], profile_file)
    profile = json.loads(profile_file.read_text())
    if profile["failed_cells"]:
        print(f"  （import 側寫時 {len(profile['failed_cells'])} 格出錯：{profile['failed_cells'][:2]}）",
              file=sys.stderr)

    modules = profiled_members(pyodide_dir, profile["files"], wheels)
    modules[wheels[normalize(project)]["file_name"]] = None          # all of the project's
    from_zip = {wheels[normalize(n)]["file_name"] for n in zip_imported}
    jobs, outputs = [], {}
    for name, members in modules.items():
        if members == []:
            continue
        kind = "stdlib" if name == STDLIB else "zipimport" if name in from_zip else "wheel"
        key = hashlib.sha256(json.dumps([kind, members]).encode()).hexdigest()[:8]
        outputs[name] = cache / f"{digests[name][:32]}-{key}-{name}"
        if not outputs[name].exists():
            jobs.append([str(pyodide_dir / name), str(outputs[name]), kind, members])
    compiled = compile_in_pyodide(node, pyodide_dir, jobs) if jobs else 0
    for name, output in outputs.items():
        shutil.copyfile(output, pyodide_dir / name)
    for entry in wheels.values():
        entry["sha256"] = fetch.sha256_of(pyodide_dir / entry["file_name"])
    lock_path.write_text(json.dumps(lock, ensure_ascii=False, indent=1))
    return {"archives": len(outputs), "modules": sum(len(m) if m else 0 for m in modules.values()),
            "compiled_now": compiled, "from_cache": len(outputs) - len(jobs), "imported": profile["files"]}


def profiled_members(pyodide_dir: Path, files: list[str], wheels: dict) -> dict[str, list[str]]:
    """Archive name -> its .py members among the imported `files` (paths inside Pyodide)."""
    members = {STDLIB: sorted(f.removeprefix(STDLIB_PATH) for f in files if f.startswith(STDLIB_PATH)
                              and f.endswith(".py"))}
    imported = {f.removeprefix(SITE_PACKAGES) for f in files if f.startswith(SITE_PACKAGES)}
    for entry in wheels.values():
        with zipfile.ZipFile(pyodide_dir / entry["file_name"]) as wheel:
            members[entry["file_name"]] = sorted(n for n in wheel.namelist() if n in imported and n.endswith(".py"))
    return members


def run_in_pyodide(node: str, pyodide_dir: Path, script: Path, inputs: dict, args: list[Path],
                   output: Path) -> None:
    """Run `script` in the Pyodide of `pyodide_dir` under Node.js with the JSON files `inputs`
    (name -> data) and `args` as arguments, then `output`; the output file appears only when the
    run succeeded."""
    with tempfile.TemporaryDirectory(dir=output.parent) as tmp:
        paths = []
        for name, data in inputs.items():
            paths.append(Path(tmp) / name)
            paths[-1].write_text(json.dumps(data))
        staged = Path(tmp) / output.name
        done = subprocess.run([node, str(RUNNER), str(pyodide_dir.resolve()), str(script),
                               *map(str, paths), *(str(a.resolve()) for a in args), str(staged)],
                              capture_output=True, text=True)
        if done.returncode != 0 or not staged.exists():
            raise fetch.BuildError(f"在 Pyodide 裡執行 {script.name} 失敗：\n"
                                   f"{done.stdout[-2000:]}{done.stderr[-3000:]}")
        staged.replace(output)


def compile_in_pyodide(node: str, pyodide_dir: Path, jobs: list[list]) -> int:
    """add_bytecode.py for [source, target, kind, members] jobs; each target is written under a
    temporary name and renamed when all are done. Returns the number of modules compiled."""
    with tempfile.TemporaryDirectory(dir=Path(jobs[0][1]).parent) as tmp:
        staged = [[f"/host{Path(src).resolve()}", f"/host{Path(tmp).resolve() / Path(dst).name}", kind, members]
                  for src, dst, kind, members in jobs]
        report = Path(tmp) / "report.json"
        run_in_pyodide(node, pyodide_dir, COMPILE, {"jobs.json": staged}, [], report)
        for (_, final, _, _), (_, stage, _, _) in zip(jobs, staged):
            Path(stage.removeprefix("/host")).replace(final)
        return sum(r["compiled"] for r in json.loads(report.read_text()))
