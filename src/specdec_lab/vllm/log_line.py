"""V1 server log lines ("SpecDecoding metrics: …") → ``SpecDecodeStats``.

vLLM V1's ``SpecDecodingLogging`` (``vllm/v1/spec_decode/metrics.py``) prints one line per
logging interval (about 10 s) and resets, so several lines are added up. Since vLLM 0.8.5 (PR #16665) the
line reads ``Mean acceptance length: %.2f, Accepted throughput: …, Drafted throughput: …,
Accepted: %d tokens, Drafted: %d tokens, Per-position acceptance rate: %.3f, …, Avg Draft
acceptance rate: %.1f%%`` (0.8.5–0.10 put ``Draft acceptance rate: %.1f%%`` first and had no
throughputs). It prints the accepted and drafted tokens exactly, the rest rounded, and not the
number of rounds: that number is recovered as every integer that reproduces all printed
figures (a range, never below drafted ÷ k).

Older V1 lines carry no rounds and no k — vLLM 0.8.3–0.8.4 (PR #15902) printed ``SpecDecoding
metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens`` and the first
V1 metrics (0.8.2, PR #15151) ``Speculative metrics: Draft acceptance rate: 1.000, Number of
accepted tokens: …, Number of draft tokens: …`` (a fraction, not a percent). Per-position rates
and the mean acceptance length came with PR #16665 (0.8.5). Early lines are refused with what
they do say.

A line pasted twice (the same text, timestamp included) is counted once, with a note — the
same rule as a /metrics sample pasted twice.
"""
from __future__ import annotations

import math
import re

from .rounding import counts_for, slack
from .stats import SpecDecodeStats, check_consistent

LOG_MARKER = "SpecDecoding metrics:"
EARLY_V1_MARKER = "Speculative metrics:"  # also V0's marker; V0 lines name the number of speculative tokens

_NUMBER = r"([0-9.]+|nan)"
_FIELDS = {  # the printed name → its value
    "Mean acceptance length": re.compile(r"Mean acceptance length:\s*" + _NUMBER),
    "Accepted": re.compile(r"Accepted:\s*(\d+)\s*tokens"),
    "Drafted": re.compile(r"Drafted:\s*(\d+)\s*tokens"),
    "Per-position acceptance rate": re.compile(
        r"Per-position acceptance rate:\s*((?:[0-9.]+|nan)(?:,\s*(?:[0-9.]+|nan))*)"),
}
_AVG_RATE = re.compile(r"(?:Avg )?Draft acceptance rate:\s*([0-9.]+|nan)(%?)")
_OLD_ACCEPTED = re.compile(r"Number of accepted tokens:\s*(\d+)")
_OLD_DRAFTED = re.compile(r"Number of draft tokens:\s*(\d+)")
_HINT = "請貼完整的一行 log"
_UPGRADE = (
    "請改貼 /metrics 的內容（curl -s http://127.0.0.1:8000/metrics），"
    "或升級到 vLLM 0.8.5 以上：新版的 log 行印出 Mean acceptance length 與 Per-position acceptance rate"
)


def is_v1_line(line: str) -> bool:
    return LOG_MARKER in line or (EARLY_V1_MARKER in line and "Number of speculative tokens" not in line
                                  and "System efficiency" not in line)


def from_log(text: str) -> SpecDecodeStats:
    """Every V1 "SpecDecoding metrics:" line in ``text``, added up (all must have the same k)."""
    lines, notes, seen = [], [], {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not is_v1_line(raw):
            continue
        key = raw.strip()
        if key in seen:
            notes.append(f"第 {number} 行和第 {seen[key]} 行一字不差（連時間都一樣），當成重複貼上，只算一次")
            continue
        seen[key] = number
        lines.append((number, raw))
    early = [(n, line) for n, line in lines if "Mean acceptance length" not in line]
    if early:
        raise ValueError(_early_v1_message(*early[0]))
    parts = [_log_line(line[line.index(LOG_MARKER):], n) for n, line in lines]
    ks = {len(p.accepted_per_position) for p in parts}
    if len(ks) != 1:
        raise ValueError(f"這幾行 log 的位置數（k）不一致：{sorted(ks)}。請只貼同一次啟動的 log")
    k = ks.pop()
    if len(parts) > 1:
        notes.insert(0, f"V1 的 log 每行只算那一段時間（約 10 秒），{len(parts)} 行已經相加")
    return SpecDecodeStats(
        num_drafts=sum(p.num_drafts for p in parts),
        num_draft_tokens=sum(p.num_draft_tokens for p in parts),
        num_accepted_tokens=sum(p.num_accepted_tokens for p in parts),
        accepted_per_position=tuple(sum(p.accepted_per_position[i] for p in parts) for i in range(k)),
        source="log",
        num_drafts_range=(sum(p.num_drafts_range[0] for p in parts), sum(p.num_drafts_range[1] for p in parts)),
        per_position_slack=tuple(sum(p.per_position_slack[i] for p in parts) for i in range(k)),
        notes=tuple(notes),
    )


def _early_v1_message(number: int, line: str) -> str:
    """What an early V1 line says, what it does not, and what to paste instead."""
    accepted = re.search(r"Accepted:\s*(\d+)\s*tokens", line) or _OLD_ACCEPTED.search(line)
    drafted = re.search(r"Drafted:\s*(\d+)\s*tokens", line) or _OLD_DRAFTED.search(line)
    version = "vLLM 0.8.3–0.8.4 的 V1" if LOG_MARKER in line else "vLLM 0.8.2 的 V1"
    read = ""
    if accepted and drafted and int(drafted[1]) > 0:
        a, d = int(accepted[1]), int(drafted[1])
        rate = _AVG_RATE.search(line)
        shown = ""
        if rate:
            shown = f"，它印成 {rate[1]}{rate[2]}（{'百分比' if rate[2] else '分數，不是百分比'}）"
        read = f"讀到：接受 {a:,}、草稿 {d:,} 個 token → vLLM 的 draft acceptance rate = {a / d:.3f}{shown}。"
    return (
        f"第 {number} 行是 {version} log 行（只印 draft acceptance rate、Accepted、Drafted）。{read}"
        "它沒有驗證輪數、k 與各位置的計數，所以算不出平均每輪產出 E，也量不到 α"
        "（α 是第 1 個位置的接受率，不是 accepted ÷ drafted）。" + _UPGRADE
    )


def _log_line(line: str, number: int) -> SpecDecodeStats:
    """One log line → counts. The line prints accepted and drafted tokens exactly, but the mean
    acceptance length (2 decimals) and per-position rates (3 decimals) rounded; the number of
    rounds D is every integer that reproduces all of them, with per-position counts summing to
    the accepted tokens."""
    found = {name: rx.search(line) for name, rx in _FIELDS.items()}
    missing = [name for name, m in found.items() if m is None]
    if missing:
        raise ValueError(f"第 {number} 行 SpecDecoding metrics log 缺少 " + "、".join(missing) + f"。{_HINT}")
    accepted = int(found["Accepted"][1])
    drafted = int(found["Drafted"][1])
    if drafted == 0:
        raise ValueError(f"第 {number} 行 SpecDecoding metrics log 的 Drafted 是 0：那段時間沒有投機解碼")
    rates = [float(r) for r in found["Per-position acceptance rate"][1].split(",")]
    length = float(found["Mean acceptance length"][1])
    if not all(math.isfinite(r) for r in rates + [length]):
        raise ValueError(f"第 {number} 行 SpecDecoding metrics log 含有 nan，無法推回計數")
    if any(r > 1 for r in rates):
        raise ValueError(f"第 {number} 行的 Per-position acceptance rate 必須是 0 到 1 的分數，收到 {rates}：是不是改成了百分比？")
    _check_avg_rate(line, accepted, drafted, number)
    k = len(rates)
    low = max(1, math.ceil(drafted / k))
    high = drafted
    if length - 0.005 - 1 > 0:
        high = min(high, math.floor(accepted / (length - 0.005 - 1) + 1e-9))
    low = max(low, math.ceil(accepted / (length + 0.005 - 1) - 1e-9))
    fits = []
    for d in range(low, high + 1):
        counts = counts_for(rates, d, accepted, 0.0005)
        if counts is not None and round(1 + accepted / d, 2) == round(length, 2):
            fits.append((d, counts))
    if not fits:
        raise ValueError(
            f"第 {number} 行 SpecDecoding metrics log 的數字彼此矛盾（找不到一個驗證輪數能同時符合 "
            f"Mean acceptance length {length}、Accepted {accepted}、各位置比率 {rates}）：是不是改過或截斷了？"
        )
    # Every round drafts at most k tokens, so D ≥ drafted ÷ k, with equality when every round
    # drafted all k (draft models, EAGLE, MTP). Prefer that D when the printed numbers allow it;
    # otherwise take the middle of the range that fits.
    full = [fit for fit in fits if fit[0] * k == drafted]
    d, counts = full[0] if full else fits[len(fits) // 2]
    spread = [max(abs(a - b) for a, b in zip(counts, c)) for _, c in fits]
    window = slack(rates, d, counts, 0.0005, accepted)
    stats = SpecDecodeStats(
        d, drafted, accepted, tuple(counts), "log",
        num_drafts_range=(fits[0][0], fits[-1][0]),
        per_position_slack=tuple(max(w, max(spread)) for w in window),
    )
    check_consistent(stats, _HINT)
    return stats


def _check_avg_rate(line: str, accepted: int, drafted: int, number: int) -> None:
    """The printed draft acceptance rate is a percent of accepted ÷ drafted (1 decimal)."""
    m = _AVG_RATE.search(line)
    if not m or m[1] == "nan":
        return
    value, percent = float(m[1]), bool(m[2])
    expected = 100 * accepted / drafted if percent else accepted / drafted
    if abs(value - expected) > (0.05 if percent else 0.0005) + 1e-9:
        unit = "百分比" if percent else "分數"
        raise ValueError(
            f"第 {number} 行印的 Draft acceptance rate（{m[1]}{m[2]}，{unit}）和 Accepted ÷ Drafted"
            f"（{accepted}/{drafted} = {accepted / drafted:.4f}）對不上：是不是改過或截斷了？"
        )
