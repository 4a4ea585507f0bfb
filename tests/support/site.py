"""Build the lessons (MkDocs part of the site) into a folder, the way `mkdocs build` does it.

    result = build_lessons(tmp_path / "site")      # subprocess; result.returncode, result.output
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# lesson 1's five quiz questions (issue 3); an instructor who changes them updates this line
LESSON1_QUIZ_ANSWERS = ["C", "B", "D", "B", "A"]
# lesson 2's (lessons/draft-trees.md), likewise
LESSON2_QUIZ_ANSWERS = ["B", "D", "A", "C", "C"]
MKDOCS = [sys.executable, "-m", "mkdocs"]


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's nav in order, as their paths on the site ("index.md" is "",
    "x.md" is "x/"), read through MkDocs' own load_config."""
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.config import load_config
    nav = load_config(str(ROOT / "mkdocs.yml"))["nav"]
    return ["" if name == "index.md" else name.removesuffix(".md") + "/" for name in nav]


def lab_pages() -> dict[str, str]:
    """{notebook: page path} for every nav page whose front matter names a `lab:`, in nav order
    (lesson 1 first: {"lesson1.ipynb": "", "draft-trees/": …}). A new lesson with a notebook is in
    every test that takes its pages from here."""
    import yaml

    found = {}
    for path in nav_pages():
        source = ROOT / "lessons" / ((path.rstrip("/") or "index") + ".md")
        front = re.match(r"---\n(.*?)\n---\n", source.read_text(encoding="utf-8"), re.S)
        notebook = (yaml.safe_load(front[1]) or {}).get("lab") if front else None
        if notebook:
            found[notebook] = path
    return found


@dataclass
class BuildResult:
    returncode: int
    output: str          # stdout + stderr

    @property
    def warnings(self) -> list[str]:
        return [line for line in self.output.splitlines() if "WARNING" in line or "ERROR" in line]


def build_lessons(site_dir, config_file=ROOT / "mkdocs.yml", strict=True, cwd=ROOT,
                  site_url=None) -> BuildResult:
    """`mkdocs build` into site_dir; site_url (e.g. the test server's URL) is where the site will be
    served, which Material's instant navigation needs to know."""
    command = MKDOCS + ["build", "--clean", "-f", str(config_file), "-d", str(site_dir)]
    if strict:
        command.append("--strict")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if site_url:
        env["SPECDEC_SITE_URL"] = site_url
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return BuildResult(done.returncode, done.stdout + done.stderr)


def build_site(build_dir: Path, site_url: str | None = None, offline: bool = True) -> Path:
    """The whole site (lessons and lab, site/build.py) built into build_dir/site, for site_url
    (SPECDEC_SITE_URL, e.g. a test server's http://127.0.0.1:PORT/specdec-lab/), with its offline
    copy unless offline=False (SPECDEC_OFFLINE=0, whatever the shell says); returns the site."""
    sys.path.insert(0, str(ROOT / "site"))
    import build  # site/build.py
    wanted = {"SPECDEC_SITE_URL": site_url, "SPECDEC_OFFLINE": "1" if offline else "0"}
    before = {name: os.environ.get(name) for name in wanted}
    for name, value in wanted.items():
        if value:
            os.environ[name] = value
    try:
        return build.build(build_dir=Path(build_dir))
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def build_one_page(folder: Path, markdown: str, site_url=None, others: dict | None = None) -> BuildResult:
    """A throw-away project inheriting the real mkdocs.yml (theme, hooks, widgets) whose page is
    `markdown` (and `others`, {file name: Markdown}, after it in the nav), built into
    folder/site-built: for a widget's tests before a lesson embeds it."""
    folder = Path(folder)
    pages = {"index.md": markdown, **(others or {})}
    nav = "".join(f"  - {name}\n" for name in pages)
    (folder / "mkdocs.yml").write_text(f"INHERIT: {ROOT / 'mkdocs.yml'}\nnav:\n{nav}", encoding="utf-8")
    if not (folder / "site").exists():
        (folder / "site").symlink_to(ROOT / "site")
    (folder / "lessons").mkdir(exist_ok=True)
    for name, text in pages.items():
        (folder / "lessons" / name).write_text(text, encoding="utf-8")
    return build_lessons(folder / "site-built", config_file=folder / "mkdocs.yml", cwd=folder, site_url=site_url)


def after_start_files(lab: Path) -> list[str]:
    """The files the built lab's kernel loader fetches once the start's are in (its CONFIG's after_start)."""
    sys.path.insert(0, str(ROOT / "site"))
    from lab.builder import build_lab
    return build_lab.built_loader_config(build_lab.pyodide_dir(lab))["after_start"]
