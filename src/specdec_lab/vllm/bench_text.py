"""The result block ``vllm bench serve`` prints → the keys its ``--save-result`` JSON would have.

``vllm/benchmarks/serve.py`` prints ``{:<40} {:<10}`` rows under ``=== Serving Benchmark Result
===`` and, when the server drafted during the run (since PR #31739, early 2026), a ``Speculative
Decoding`` section: ``Acceptance rate (%)`` (a percent), ``Acceptance length``, ``Drafts``,
``Draft tokens``, ``Accepted tokens`` and ``Per-position acceptance (%)`` with one ``Position i``
row each (percents, 2 decimals). The block is turned into the JSON keys (per-position rates as
fractions, as the JSON stores them) so one validator reads both; ``rounded`` marks the figures
that were printed with 2 decimals.
"""
from __future__ import annotations

import re

HEADER = "Serving Benchmark Result"
SPEC_HEADER = "Speculative Decoding"
_ROWS = {  # printed label → (JSON key, integer?)
    "Successful requests": ("completed", True),
    "Failed requests": ("failed", True),
    "Maximum request concurrency": ("max_concurrency", True),
    "Output token throughput (tok/s)": ("output_throughput", False),
    "Mean TPOT (ms)": ("mean_tpot_ms", False),
    "Mean TTFT (ms)": ("mean_ttft_ms", False),
    "Acceptance rate (%)": ("spec_decode_acceptance_rate", False),
    "Acceptance length": ("spec_decode_acceptance_length", False),
    "Drafts": ("spec_decode_num_drafts", True),
    "Draft tokens": ("spec_decode_draft_tokens", True),
    "Accepted tokens": ("spec_decode_accepted_tokens", True),
}
_ROW = re.compile(r"^\s*(?P<label>[^:]+?):\s+(?P<value>\S+)\s*$")
_POSITION = re.compile(r"^\s*Position (\d+):\s+(\S+)\s*$")


def is_printed_block(text: str) -> bool:
    return HEADER in text or (SPEC_HEADER in text and "Acceptance length:" in text)


def blocks(text: str) -> list[str]:
    """The text split into one printed result each (a sweep's console output has several)."""
    starts = [m.start() for m in re.finditer(r"=+ ?" + HEADER, text)]
    if len(starts) <= 1:
        return [text]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def parse_block(text: str, where: str) -> dict:
    """The JSON keys the printed block carries (``max_concurrency`` is ``None`` when the run had
    no --max-concurrency, as in the JSON)."""
    out: dict = {"_printed": True}
    in_spec = False
    positions: dict[int, float] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if SPEC_HEADER in line and line.strip().startswith("-"):
            in_spec = True
            continue
        pos = _POSITION.match(line)
        if pos and in_spec:
            positions[int(pos[1])] = _number(pos[2], f"{where} 第 {number} 行 Position {pos[1]}", False) / 100
            continue
        m = _ROW.match(line)
        if not m or m["label"].strip() not in _ROWS:
            continue
        key, integer = _ROWS[m["label"].strip()]
        out[key] = _number(m["value"], f"{where} 第 {number} 行 {m['label'].strip()}", integer)
    if HEADER in text and "max_concurrency" not in out:
        out["max_concurrency"] = None
    if positions:
        if sorted(positions) != list(range(len(positions))):
            raise ValueError(f"{where} 的 Position 行必須是 0、1、…、k−1 連續出現，收到 {sorted(positions)}：是不是只複製了一部分？")
        out["spec_decode_per_position_acceptance_rates"] = [positions[i] for i in range(len(positions))]
    return out


def _number(text: str, where: str, integer: bool):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where} 的數值看不懂：{text!r}") from None
    if integer:
        if value != int(value):
            raise ValueError(f"{where} 必須是整數，收到 {text!r}")
        return int(value)
    return value
