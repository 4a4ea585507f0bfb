"""V0 server log lines ("Speculative metrics: …") → ``SpecDecodeStats``.

vLLM's V0 engine (up to 0.10) printed ``Speculative metrics: Draft acceptance rate: 0.607,
System efficiency: 0.510, Number of speculative tokens: 4, Number of accepted tokens: 32594,
Number of draft tokens: 53716, Number of emitted tokens: 34244.`` (``vllm/spec_decode/metrics.py``;
some 0.5.x builds wrote "Number of draft tokens tokens"). Two facts decide how it is read:

* the numbers are cumulative since the server started, so several lines are snapshots of one
  run: the last line is taken, never the sum (counts must not decrease from line to line);
* V0's "accepted" also counts draft tokens that matched after an earlier one in the round was
  rejected. Every round drafts k tokens and emits its accepted prefix plus one token, so
  rounds = draft tokens ÷ k and the accepted prefix = emitted − rounds.

V0 prints no per-position counts: α can only be inferred from E by assuming i.i.d. acceptance.
Both rates it prints are fractions (0.607), not percents.
"""
from __future__ import annotations

import re

from .stats import SpecDecodeStats, check_consistent

V0_MARKER = "Speculative metrics:"

_FIELDS = {
    "Draft acceptance rate": re.compile(r"Draft acceptance rate:\s*([0-9.]+|nan)"),
    "System efficiency": re.compile(r"System efficiency:\s*([0-9.]+|nan)"),
    "Number of speculative tokens": re.compile(r"Number of speculative tokens:\s*(\d+)"),
    "Number of accepted tokens": re.compile(r"Number of accepted tokens:\s*(\d+)"),
    "Number of draft tokens": re.compile(r"Number of draft tokens(?: tokens)?:\s*(\d+)"),
    "Number of emitted tokens": re.compile(r"Number of emitted tokens(?: tokens)?:\s*(\d+)"),
}
_HINT = "請貼完整的一行 V0 log（Speculative metrics: 開頭，到 Number of emitted tokens 為止）"


def is_v0_line(line: str) -> bool:
    return V0_MARKER in line and ("Number of speculative tokens" in line or "System efficiency" in line)


def from_v0_log(text: str) -> SpecDecodeStats:
    """The last V0 "Speculative metrics:" line of ``text`` (they are cumulative snapshots)."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if is_v0_line(line)]
    snapshots = [_v0_line(line, n) for n, line in lines]
    ks = {s["k"] for s in snapshots}
    if len(ks) != 1:
        raise ValueError(f"這幾行 V0 log 的 Number of speculative tokens 不一致：{sorted(ks)}。請只貼同一次啟動的 log")
    for (n0, _), (n1, _), a, b in zip(lines, lines[1:], snapshots, snapshots[1:]):
        for key, name in (("draft", "Number of draft tokens"), ("emitted", "Number of emitted tokens"),
                          ("accepted", "Number of accepted tokens")):
            if b[key] < a[key]:
                raise ValueError(
                    f"V0 的數字是從伺服器啟動起的累計值，不會變小；但第 {n1} 行的 {name}（{b[key]:,}）"
                    f"比第 {n0} 行（{a[key]:,}）小：伺服器中間重啟過嗎？請只貼同一次啟動的 log"
                )
    last, (number, _) = snapshots[-1], lines[-1]
    k, rounds = last["k"], last["draft"] // last["k"]
    prefix = last["emitted"] - rounds
    notes = []
    if len(snapshots) > 1:
        notes.append(f"V0 印的是自伺服器啟動以來的累計值：{len(snapshots)} 行只取最後一行（第 {number} 行），不相加")
    notes.append(
        f"輪數 = 草稿 token ÷ K = {last['draft']:,} ÷ {k} = {rounds:,}；被接受的前綴 = emitted − 輪數 = "
        f"{last['emitted']:,} − {rounds:,} = {prefix:,}"
    )
    if last["accepted"] != prefix:
        notes.append(
            f"V0 的 Number of accepted tokens（{last['accepted']:,}）還算進「前面已被拒、後面剛好對上」的草稿字，"
            f"所以它印的 Draft acceptance rate {last['rate']}（分數）比這裡的 {prefix / last['draft']:.3f} 高"
        )
    notes.append("V0 沒有印各位置的計數：α 只能在「每個位置一樣」的假設下由 E 反推")
    stats = SpecDecodeStats(rounds, last["draft"], prefix, (), "log-v0", k=k, notes=tuple(notes))
    check_consistent(stats, _HINT)
    return stats


def _v0_line(line: str, number: int) -> dict:
    found = {name: rx.search(line) for name, rx in _FIELDS.items()}
    missing = [name for name, m in found.items() if m is None]
    if missing:
        raise ValueError(f"第 {number} 行 V0 Speculative metrics log 缺少 " + "、".join(missing) + f"。{_HINT}")
    k = int(found["Number of speculative tokens"][1])
    accepted, draft, emitted = (int(found[f"Number of {w} tokens"][1]) for w in ("accepted", "draft", "emitted"))
    rate, efficiency = found["Draft acceptance rate"][1], found["System efficiency"][1]
    where = f"第 {number} 行 V0 log"
    if k == 0:
        raise ValueError(f"{where} 的 Number of speculative tokens 是 0：這台伺服器沒有開投機解碼")
    if draft == 0:
        raise ValueError("num_drafts = 0：伺服器還沒做過任何一輪投機解碼。先送幾個請求再看 log")
    if draft % k:
        raise ValueError(f"{where}：Number of draft tokens（{draft:,}）不是 K = {k} 的倍數，V0 每輪一定提出 K 個草稿字。{_HINT}")
    rounds = draft // k
    for name, value in (("Draft acceptance rate", rate), ("System efficiency", efficiency)):
        if value != "nan" and float(value) > 1:
            raise ValueError(f"{where} 的 {name} 是 0 到 1 的分數，收到 {value}：是不是改成了百分比？")
    problems = []
    if not rounds <= emitted <= rounds * (k + 1):
        problems.append(f"Number of emitted tokens（{emitted:,}）必須介於輪數 {rounds:,} 與輪數 ×（k+1）= {rounds * (k + 1):,} 之間")
    elif not emitted - rounds <= accepted <= draft:
        problems.append(f"Number of accepted tokens（{accepted:,}）必須介於被接受的前綴 {emitted - rounds:,} 與草稿數 {draft:,} 之間")
    if rate != "nan" and abs(float(rate) - accepted / draft) > 0.0005 + 1e-9:
        problems.append(f"Draft acceptance rate {rate} ≠ accepted ÷ draft = {accepted / draft:.4f}")
    if efficiency != "nan" and abs(float(efficiency) - emitted / (rounds * (k + 1))) > 0.0005 + 1e-9:
        problems.append(f"System efficiency {efficiency} ≠ emitted ÷（輪數 ×（k+1））= {emitted / (rounds * (k + 1)):.4f}")
    if problems:
        raise ValueError(f"{where} 的數字彼此矛盾：" + "；".join(problems) + f"。{_HINT}")
    return dict(k=k, accepted=accepted, draft=draft, emitted=emitted, rate=rate)
