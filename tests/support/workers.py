"""DevTools sessions with the workers a Chromium page started (its service worker, Material's search
worker, the kernel's worker), through the page's own CDP session: a method sent to one worker and
its answer.

    with worker_sessions(context, page) as workers:
        for info, session in workers.attached:         # DevTools' targetInfo, and a session id
            usage = workers.call(session, "Runtime.getHeapUsage")
        workers.cdp.send("Runtime.getHeapUsage")       # the page itself

Used by tests/test_offline_browser.py (the offline workers' heaps) and benchmarks/lab_memory.py.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import time


class WorkerSessions:
    def __init__(self, context, page, settle: float = 1.0, bound: float = 20):
        self.page, self.bound = page, bound
        self.cdp = context.new_cdp_session(page)
        self.attached: list[tuple[dict, str]] = []
        self._answers: dict[str, list[dict]] = {}
        self._ids = itertools.count(1)
        self.cdp.on("Target.attachedToTarget",
                    lambda e: self.attached.append((e["targetInfo"], e["sessionId"])))
        self.cdp.on("Target.receivedMessageFromTarget",
                    lambda e: self._answers.setdefault(e["sessionId"], []).append(json.loads(e["message"])))
        self.cdp.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": False,
                                               "flatten": False})
        page.wait_for_timeout(settle * 1000)           # the workers already running attach

    def call(self, session: str, method: str) -> dict | None:
        """The worker's answer to `method` (its "result"), or None after `bound` seconds."""
        number = next(self._ids)
        self.cdp.send("Target.sendMessageToTarget", {"sessionId": session, "message": json.dumps(
            {"id": number, "method": method})})
        end = time.time() + self.bound
        while time.time() < end:
            found = next((m for m in self._answers.get(session, []) if m.get("id") == number), None)
            if found is not None:
                return found.get("result")
            self.page.wait_for_timeout(50)         # (lets the answer arrive)
        return None


@contextlib.contextmanager
def worker_sessions(context, page, settle: float = 1.0, bound: float = 20):
    workers = WorkerSessions(context, page, settle, bound)
    try:
        yield workers
    finally:
        workers.cdp.detach()
