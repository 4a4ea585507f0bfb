"""vLLM's speculative decoding counters from a /metrics scrape or a Prometheus web UI table.

The scrape is Prometheus text: ``vllm:spec_decode_num_drafts_total{engine="0",model_name="…"} 188.0``.
The Prometheus web UI shows the same samples as a table, which pastes as
``vllm:spec_decode_num_drafts_total{engine="0", instance="…", job="vllm", …} | 188`` (a Markdown
``-- | --`` row under the first one when it comes from a GitHub comment). Both are read here,
line by line, into (counter, labels, value, line) samples; ``*_created`` timestamps and every
other metric are skipped.

A sample that appears twice with the same labels and the same value is a paste repeated and is
counted once (with a note), the same rule as a log line pasted twice; the same labels with a
different value are two different scrapes and are refused.
"""
from __future__ import annotations

import math
import re

COUNTERS = {
    "vllm:spec_decode_num_drafts": "num_drafts",
    "vllm:spec_decode_num_draft_tokens": "num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos": "per_pos",
}
"""vLLM's counter names (without ``_total``) → what they count."""

_NAME = r"(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?"
_SAMPLE = re.compile(r"^" + _NAME + r"\s+(?P<value>\S+)(?:\s+\S+)?\s*$")
_UI_ROW = re.compile(r"^\|?\s*" + _NAME + r"\s*\|\s*(?P<value>[^|\s]+)\s*\|?\s*$")
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def spec_samples(text: str) -> tuple[list[tuple[str, dict, int, int]], list[str], str]:
    """(counter, labels, value, line number) for each distinct spec-decode counter sample, the
    notes about repeated samples, and which form was seen ("metrics" or "prometheus-ui")."""
    out, seen, repeated, form = [], {}, [], "metrics"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().lstrip("|").strip()
        if not line.startswith("vllm:spec_decode_"):
            continue
        m = _SAMPLE.match(line)
        ui = _UI_ROW.match(raw.strip())
        if ui:
            m, form = ui, "prometheus-ui"
        if not m:
            raise ValueError(f"/metrics 第 {number} 行的格式看不懂：{line[:80]!r}（預期「名稱{{標籤}} 數值」）")
        name = m["name"]
        if name.endswith("_created"):
            continue  # the creation timestamp prometheus_client adds next to each counter
        base = name.removesuffix("_total")
        if base not in COUNTERS:
            continue
        labels = _labels(m["labels"] or "", number)
        value = _value(base, m["value"], number)
        key = (base, tuple(sorted(labels.items())))
        if key in seen:
            first, first_value = seen[key]
            if first_value != value:
                raise ValueError(
                    f"/metrics 第 {first} 行和第 {number} 行是同一個計數器、同一組標籤（{base} {labels}），"
                    f"數值卻不同（{first_value:,} 與 {value:,}）：這是兩次不同時間抓的內容。請只貼一次抓到的全部內容"
                )
            repeated.append(number)
            continue
        seen[key] = (number, value)
        out.append((base, labels, value, number))
    notes = []
    if repeated:
        notes.append(
            f"有 {len(repeated)} 行和前面的某一行完全相同（同一計數器、同一組標籤、同一數值，從第 {repeated[0]} 行起）："
            "當成同一份內容貼了兩次，每個只算一次"
        )
    return out, notes, form


def _labels(text: str, number: int) -> dict:
    labels, pos = {}, 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        if not m:
            raise ValueError(f"/metrics 第 {number} 行的標籤看不懂：{{{text}}}")
        labels[m[1]] = m[2]
        pos = m.end()
    return labels


def _value(base: str, text: str, number: int) -> int:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"/metrics 第 {number} 行 {base} 的數值看不懂：{text!r}") from None
    if not (math.isfinite(value) and value >= 0 and value == round(value)):
        raise ValueError(f"/metrics 第 {number} 行 {base} 的數值必須是非負整數（它是計數器），收到 {text!r}")
    return int(value)


def position(base: str, labels: dict, number: int) -> int:
    if "position" not in labels:
        raise ValueError(f"/metrics 第 {number} 行的 {base} 缺少 position 標籤")
    try:
        pos = int(labels["position"])
    except ValueError:
        raise ValueError(f"/metrics 第 {number} 行的 position 標籤必須是整數，收到 {labels['position']!r}") from None
    if pos < 0:
        raise ValueError(f"/metrics 第 {number} 行的 position 標籤必須 ≥ 0，收到 {pos}")
    return pos
