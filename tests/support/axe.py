"""axe-core for accessibility checks, from the npm registry into the download cache (never git).

    violations = run_axe(page)     # injects axe.min.js into a Playwright page, returns serious+critical
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

AXE_VERSION = "4.14.1"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "specdec-lab"


def axe_script() -> Path:
    """Path of axe.min.js, fetched once with `npm pack axe-core@VERSION` into the cache."""
    target = CACHE / f"axe-core-{AXE_VERSION}" / "axe.min.js"
    if target.is_file():
        return target
    npm = shutil.which("npm")
    if not npm:
        raise RuntimeError("需要 npm 才能取得 axe-core（apt-get install npm，或裝 Node.js）")
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        subprocess.run([npm, "pack", f"axe-core@{AXE_VERSION}", "--pack-destination", scratch,
                        "--silent"], check=True, capture_output=True, timeout=300, cwd=scratch)
        [tarball] = Path(scratch).glob("axe-core-*.tgz")
        with tarfile.open(tarball) as archive:
            member = archive.getmember("package/axe.min.js")
            data = archive.extractfile(member).read()
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        partial.write_bytes(data)
        partial.replace(target)
    return target


def run_axe(page, include_impacts=("serious", "critical"), context=None) -> list[dict]:
    """Run axe on the page (WCAG 2.x A/AA and best practices); the violations of those impacts,
    each as {id, impact, help, targets}."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_script().read_text(encoding="utf-8"))
    # blocks laid out only near the screen (render_later.py) have no boxes while off it, and axe
    # reads a text's background from the boxes at its place: laid out here, as they look on screen
    page.add_style_tag(content=".md-typeset .sd-later { content-visibility: visible !important; }")
    result = page.evaluate(
        """async (context) => await axe.run(context || document, {
               runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
               resultTypes: ["violations"]})""", context)
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "targets": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"] if v["impact"] in include_impacts]
