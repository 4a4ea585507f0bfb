"""The one build: the lessons (MkDocs) and the 實驗場 (JupyterLite on a self-hosted Pyodide) into one
static folder, build/site/, deployable to any static host (lab under build/site/lab/).

    python site/build.py                 # everything
    python site/build.py --lessons      # only the MkDocs pages (the lab already built is kept)
    python site/build.py --lab          # only the lab
    python site/build.py --notebooks DIR  # take the lab's notebooks from DIR instead of notebooks/

PYODIDE_SRC=<folder> takes Pyodide from an unpacked official release instead of the registries
(see site/lab/runtime.toml). Downloads are cached in ${XDG_CACHE_HOME:-~/.cache}/specdec-lab/.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
SITE = BUILD / "site"    # the static site; the lab as built (BUILD / "lab") is copied into SITE / "lab"

sys.path.insert(0, str(ROOT / "site"))
from lab.builder.build_lab import build_lab, pyodide_dir  # noqa: E402
from lab.builder.fetch import BuildError  # noqa: E402
import brotli_siblings  # noqa: E402  (site/brotli_siblings.py)
from offline import manifest as offline_manifest, workers as offline_workers  # noqa: E402  (site/offline/)


def offline_wanted() -> bool:
    """The site carries its offline copy (workers, offline.json; the pages' offline.js registers
    only then, from mkdocs.yml's extra.offline) unless SPECDEC_OFFLINE=0."""
    return os.environ.get("SPECDEC_OFFLINE", "1") != "0"


def build_lessons(site: Path, config: Path = ROOT / "mkdocs.yml") -> bool:
    """mkdocs build --strict into `site` (MkDocs empties it first), of the course whose
    mkdocs.yml is `config`. False when there is no mkdocs.yml yet."""
    if not config.exists():
        print("（還沒有 mkdocs.yml：只建實驗場）", file=sys.stderr)
        site.mkdir(parents=True, exist_ok=True)
        return False
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # not --quiet: with it MkDocs (1.6) counts no warnings, and --strict let a broken link or a
    # nav entry naming no file through
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                    "-f", str(config), "-d", str(site)], check=True, cwd=config.parent, env=env)
    return True


def place_lab(lab: Path, site: Path) -> None:
    """Copy the built lab to site/lab as hard links (fast, and real files for any host)."""
    target = site / "lab"
    if target.exists():
        shutil.rmtree(target)
    if not lab.exists():
        raise BuildError(f"{lab} 不存在：先跑 python site/build.py --lab")
    try:
        shutil.copytree(lab, target, copy_function=os.link)
    except OSError:
        shutil.copytree(lab, target)


def swap_in(new: Path, site: Path) -> None:
    """Put the folder `new` where `site` is (two renames: a request in between, some
    microseconds, finds no file), and remove the old one."""
    old = site.with_name(site.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if site.exists():
        site.rename(old)
    new.rename(site)
    if old.exists():
        shutil.rmtree(old)


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def cache_note(before: list[str], after: str) -> str | None:
    """What a rebuild means for learners' caches: the Pyodide folder's name is a hash of what it
    holds, and browsers keep it for good, so a new name makes every learner who opened the lab
    fetch Python's start again (README, 教室)."""
    if not before:
        return None
    if before == [after]:
        return f"  Pyodide 資料夾與上次組建相同（{after}）：學生瀏覽器裡快取的 Python 照樣能用"
    return (f"  Pyodide 資料夾換了名字（{'、'.join(before)} → {after}）：打開過實驗場的學生要重新下載"
            "（README「教室」一節）")


def build(lessons: bool = True, lab: bool = True, notebooks: Path = ROOT / "notebooks",
          build_dir: Path = BUILD) -> Path:
    """Build into build_dir (the lab in build_dir/lab, the site in build_dir/site); return the site.

    The site is built beside the last one (build_dir/site.next) and takes its place only when
    whole: `make serve` goes on serving the last good build while it rebuilds, and after a failed
    rebuild (MkDocs empties its folder before it fails: a quiz typo took the classroom's course
    down until it was fixed)."""
    t0 = time.time()
    site = build_dir / "site"
    before = [p.name for p in (site / "lab" / "static").glob("pyodide-*")]
    if lab:
        build_lab(build_dir, notebooks)
    new = build_dir / "site.next"
    if new.exists():
        shutil.rmtree(new)
    if lessons:
        build_lessons(new)
    elif site.exists():
        shutil.copytree(site, new, copy_function=os.link, ignore=shutil.ignore_patterns("lab"))
    place_lab(build_dir / "lab", new)
    offline = None
    if offline_wanted():                           # the offline copy (docs/offline.md)
        offline_workers.add_workers(new)
        offline = offline_manifest.write_manifest(new)     # last of the files, before their .br
    siblings = brotli_siblings.write_siblings(new)
    swap_in(new, site)
    print(f"  Brotli：{siblings['files']} 個 .br 檔（比 gzip 少 {siblings['saved'] / 1e6:.1f} MB）", file=sys.stderr)
    total = folder_bytes(site) / 1e6
    pyodide = pyodide_dir(site / "lab")
    print(f"{site}：{total:.1f} MB（其中 Pyodide {folder_bytes(pyodide) / 1e6:.1f} MB），"
          f"{time.time() - t0:.1f} 秒", file=sys.stderr)
    if offline:
        print(f"  離線清單 {offline_manifest.MANIFEST}：{len(offline['files'])} 個檔案，版本 {offline['version']}",
              file=sys.stderr)
    note = cache_note(before, pyodide.name)
    if note:
        print(note, file=sys.stderr)
    if lessons:
        url = os.environ.get("SPECDEC_SITE_URL")
        print(f"  課文頁組建給 {url}" if url else
              "  課文頁組建給 http://127.0.0.1:8000/（本機）；要上傳到別處，先設 SPECDEC_SITE_URL"
              "（README 的「部署」）", file=sys.stderr)
    return site


def failure(err: Exception) -> str:
    """The last line of a failed build. A tool that stopped (mkdocs, jupyter lite) has already said
    where and why (`lessons/x.md:12: …`) above: name the tool, not its whole command line."""
    if isinstance(err, subprocess.CalledProcessError):
        argv = [str(a) for a in err.cmd]
        tool = " ".join(argv[2:4]) if argv[1:2] == ["-m"] else Path(argv[0]).name
        return f"{tool} 停下來了（結束碼 {err.returncode}），原因在上面的訊息裡"
    return str(err)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", action="store_true", help="只建課文頁（沿用已建好的實驗場）")
    parser.add_argument("--lab", action="store_true", help="只建實驗場")
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks",
                        help="實驗場的筆記本所在資料夾（預設 notebooks/）")
    args = parser.parse_args(argv)
    both = not (args.lessons or args.lab)
    try:
        build(lessons=both or args.lessons, lab=both or args.lab, notebooks=args.notebooks)
    except (BuildError, subprocess.CalledProcessError) as err:
        print(f"建置失敗：{failure(err)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
