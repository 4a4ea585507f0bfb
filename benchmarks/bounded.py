"""One browser visit of a benchmark in a child process, with a bound on every step it waits for.

    outcome = run_bounded([sys.executable, script, ...], profile, visit_bound=480)   # the parent
    step("first live output", 120)       # the child, before each wait: what it waits for, how long
    report(result={...})                  # the child, at the end

A Playwright sync call can wait for ever: page.evaluate of a promise that never settles (a
command's promise, a kernel that never starts), a renderer whose main thread never yields or that
died without saying so; the sync API gives evaluate no timeout. So the visit runs in a process of its
own that says on stdout which step it is in and for how long that step may take; the parent stops
the process, and the browser it started (found by its profile folder), when a step runs past its
bound (plus a grace) or the whole visit past its own, and says which step it was. Prints nothing.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "@@visit "
GRACE = 20.0      # seconds past a step's bound before the child is stopped (its own timeout first)
START_BOUND = 60.0   # starting Python, Playwright and the browser, before the first step


def report(**message) -> None:
    """In the child: one message to the parent (step=…, bound=… | event=… | result=… | error=…)."""
    print(PREFIX + json.dumps(message, ensure_ascii=False), flush=True)


def step(what: str, bound: float) -> float:
    """In the child: say the visit now waits for `what`, at most `bound` seconds; returns bound
    (to pass on as the wait's own timeout)."""
    report(step=what, bound=bound)
    return bound


@dataclass
class Outcome:
    result: dict | None = None
    failure: str | None = None            # what went wrong, in words, when result is None
    events: list[str] = field(default_factory=list)   # console errors, dialogs, crashes seen


def run_bounded(argv: list[str], profile: Path, visit_bound: float, grace: float = GRACE) -> Outcome:
    """Run the child `argv` (which reports through report()/step()) and return what it reported,
    or why it was stopped. Never waits longer than visit_bound (+ grace)."""
    with tempfile.TemporaryFile(mode="w+") as stderr:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                 start_new_session=True)
        lines: queue.Queue = queue.Queue()

        def read():
            for line in child.stdout:
                lines.put(line)
            lines.put(None)
        threading.Thread(target=read, daemon=True).start()
        outcome = Outcome()
        started = time.monotonic()
        current, step_started, step_end = "starting the browser", started, started + START_BOUND
        visit_end = started + visit_bound
        error = None
        while True:
            try:
                line = lines.get(timeout=max(0.0, min(step_end, visit_end) - time.monotonic()))
            except queue.Empty:
                reason = (f"no progress for {time.monotonic() - step_started:.0f} s" if step_end <= visit_end
                          else f"the visit took over {visit_bound:.0f} s")
                outcome.failure = f"stuck at '{current}' ({reason})"
                stop(child, profile)
                break
            if line is None:
                child.wait(timeout=30)
                if outcome.result is None:
                    stderr.seek(0)
                    tail = " | ".join(stderr.read().strip().splitlines()[-3:])
                    outcome.failure = (f"failed at '{current}': {error}" if error
                                       else f"exited ({child.returncode}) at '{current}': {tail}")
                break
            if not line.startswith(PREFIX):
                continue
            message = json.loads(line[len(PREFIX):])
            if "step" in message:
                current = message["step"]
                step_started = time.monotonic()
                step_end = step_started + message["bound"] + grace
            elif "event" in message:
                outcome.events.append(message["event"])
            elif "error" in message:
                error = message["error"]
            elif "result" in message:
                outcome.result = message["result"]
        if outcome.result is None:
            stop(child, profile)
        return outcome


def browser_pids(profile: Path) -> list[int]:
    """The processes started with this profile folder (--user-data-dir=…): the visit's browser."""
    flag = f"--user-data-dir={profile}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if flag in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def stop(child: subprocess.Popen, profile: Path) -> None:
    """Stop the child's process group (Python and Playwright's driver) and its browser, by id."""
    pids = browser_pids(profile)
    if child.poll() is None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    child.wait(timeout=30)
