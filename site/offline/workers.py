"""The course's two service workers, written into the built site (docs/offline.md): sw.js at the
site's root (the lesson pages) and JupyterLite's lab/service-worker.js (the lab), each the course's
offline-sw.js first, then JupyterLite's own code unchanged (its /api/drive and stdin relay)."""
from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).parent
SHARED = "offline-sw.js"
LAB_WORKER = "lab/service-worker.js"
SITE_WORKER = "sw.js"


def head(site_root: str, site_worker: bool) -> str:
    flag = "self.specdecSiteWorker = true;\n" if site_worker else ""
    return f'self.specdecSiteRoot = "{site_root}";\n{flag}importScripts("{site_root}{SHARED}");\n'


def add_workers(site: Path) -> None:
    """offline-sw.js beside sw.js at the site's root, and both workers, from the lab's
    service-worker.js as JupyterLite built it (replaced, never written through: a hard link)."""
    lab_worker = site / LAB_WORKER
    jupyterlite = lab_worker.read_text(encoding="utf-8")
    if SHARED in jupyterlite:
        raise ValueError(f"{lab_worker} 已經加過 {SHARED}（重複處理了同一個網站？）")
    shutil.copy(HERE / SHARED, site / SHARED)
    (site / SITE_WORKER).write_text(head("./", site_worker=True) + jupyterlite, encoding="utf-8")
    lab_worker.unlink()
    lab_worker.write_text(head("../", site_worker=False) + jupyterlite, encoding="utf-8")
