"""A phone does not start the 實驗場 from zero (site/assets/lab-prefetch.js): while the learner
reads, the files Python needs as it starts (lab/specdec-boot.json) come into the HTTP cache, and
the kernel's worker takes them from there when the lab is opened; nothing is fetched when the
browser asks to save data. Headless Debian Chromium at a phone's size, against site/serve.py's
handler with every request it answers recorded."""
from __future__ import annotations

import functools
import http.server
import json
import os
import sys
import tempfile
import threading
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.lab import ROOT, LabPage, wait_until
from support.server import CHROMIUM, CHROMIUM_FLAGS
from support.site import build_site

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SAVE_DATA = """Object.defineProperty(Navigator.prototype, 'connection', {configurable: true,
  get: () => ({saveData: true, effectiveType: '4g', addEventListener() {}})});"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The whole site built into a temp folder (SPECDEC_LAB_SITE=<folder>: a built one, as in
    tests/test_lab_browser.py)."""
    if os.environ.get("SPECDEC_LAB_SITE"):
        return Path(os.environ["SPECDEC_LAB_SITE"])
    return build_site(tmp_path_factory.mktemp("prefetch-site"))


@contextmanager
def recording_server(root):
    """site/serve.py's handler for `root` on a free port, each answered path counted."""
    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py
    served: Counter = Counter()

    class Recording(serve.SiteHandler):
        def log_request(self, code="-", size="-"):
            served[self.path.split("?", 1)[0]] += 1

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Recording, directory=str(root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", served
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def phone(init_script: str | None = None):
    """A fresh persistent profile (a disk HTTP cache, as a phone has) at a phone's size."""
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory(prefix="specdec-prefetch-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_FLAGS,
                                                       headless=True, timeout=60_000, **PHONE)
        context.set_default_timeout(60_000)
        if init_script:
            context.add_init_script(init_script)
        try:
            yield context
        finally:
            context.close()


def boot_files(site) -> list[str]:
    boot = json.loads((site / "lab" / "specdec-boot.json").read_text())
    return [f"/lab/{boot['base']}{f['name']}" for f in boot["files"]]


def prefetch_state(page) -> str:
    return page.evaluate("() => document.documentElement.dataset.sdLabPrefetch || ''")


def test_a_phone_fetches_pythons_start_while_the_learner_reads_and_the_kernel_reuses_it(site):
    files = boot_files(site)
    with recording_server(site) as (base, served), phone() as context:
        lab = LabPage.open(context, base)
        page = lab.page
        assert page.locator(".sd-lab__frame").count() == 0             # the lab itself waits
        wait_until(lambda: prefetch_state(page) in ("done", "failed"), 180, step=0.25,
                   what="the prefetch of Python's start files")
        assert prefetch_state(page) == "done"
        assert page.locator(".sd-lab__frame").count() == 0
        assert {f: served[f] for f in files} == {f: 1 for f in files}
        page.locator(".sd-lab-open").click()
        lab.run_all(early=True)
        lab.first_output(240)
        # every start file came from the HTTP cache: none was asked for a second time
        assert {f: served[f] for f in files} == {f: 1 for f in files}
        assert lab.outside == []


def test_nothing_is_prefetched_when_the_browser_asks_to_save_data(site):
    with recording_server(site) as (base, served), phone(SAVE_DATA) as context:
        lab = LabPage.open(context, base)
        # the decision is taken in the same idle callback that would start the fetches
        wait_until(lambda: prefetch_state(lab.page), 60, step=0.1, what="the prefetch's decision")
        assert prefetch_state(lab.page) == "off: save-data"
        assert not [path for path in served if path.startswith("/lab/")]
