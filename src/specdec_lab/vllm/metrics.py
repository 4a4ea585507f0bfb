"""``parse_metrics``: vLLM's speculative decoding counters from a ``/metrics`` scrape or a log line.

The scrape is Prometheus text. vLLM registers four counters, one per engine (labels
``model_name`` and ``engine``; ``vllm/v1/spec_decode/metrics.py``):
``vllm:spec_decode_num_drafts`` (verification rounds), ``vllm:spec_decode_num_draft_tokens``
(draft tokens proposed), ``vllm:spec_decode_num_accepted_tokens`` (draft tokens accepted) and
``vllm:spec_decode_num_accepted_tokens_per_pos`` (label ``position`` = 0, 1, …, k−1: rounds whose
draft token at that position was accepted). A text without them but with "SpecDecoding metrics:"
log lines goes to ``log_line``.
"""
from __future__ import annotations

import math
import re

from .log_line import LOG_MARKER, from_log
from .stats import SpecDecodeStats, check_consistent

COUNTERS = {
    "vllm:spec_decode_num_drafts": "num_drafts",
    "vllm:spec_decode_num_draft_tokens": "num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos": "per_pos",
}
"""vLLM's counter names (without ``_total``) → what they count."""

_EXPECTED_TEXT = (
    "預期的是 vLLM /metrics 的內容，包含計數器 vllm:spec_decode_num_drafts、"
    "vllm:spec_decode_num_draft_tokens、vllm:spec_decode_num_accepted_tokens、"
    "vllm:spec_decode_num_accepted_tokens_per_pos（可帶 _total 後綴），"
    f"或伺服器 log 裡以「{LOG_MARKER}」開頭的那一行"
)
_RESCRAPE = "請等負載結束、伺服器閒置時重新抓一次 /metrics（curl -s http://127.0.0.1:8000/metrics）"

_SAMPLE = re.compile(
    r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+\S+)?\s*$"
)
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def parse_metrics(text: str) -> SpecDecodeStats:
    """Read vLLM's speculative decoding counters from a ``/metrics`` scrape or a log line.

    Counters are read with or without the ``_total`` suffix, summed over engines and any other
    label sets; every other metric is ignored. Several "SpecDecoding metrics:" log lines (each
    covers one logging interval) are added up. A text without these counters, or with counters
    that contradict each other, raises ``ValueError`` saying what was expected.
    """
    if not isinstance(text, str):
        raise ValueError(f"text 必須是字串（/metrics 或 log 的文字內容），收到 {type(text).__name__}")
    text = _ANSI.sub("", text)
    samples = _spec_samples(text)
    if samples:
        return _from_samples(samples)
    if LOG_MARKER in text:
        return from_log(text)
    raise ValueError(f"找不到投機解碼的計數器。{_EXPECTED_TEXT}。{_diagnose(text)}")


def _diagnose(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        return "收到的是空字串。"
    if stripped.startswith("{") or stripped.startswith("["):
        return "收到的看起來是 JSON：bench 的結果檔請用 read_bench_results() 讀。"
    if "vllm:" in text:
        if "spec_decode_draft_acceptance_rate" in text:
            return "這份 /metrics 只有舊版 V0 引擎的比率指標，沒有計數器；請升級 vLLM 或改貼 log 行。"
        return "這份 /metrics 有 vLLM 的指標但沒有 spec_decode 計數器：伺服器啟動時是否加了 --speculative-config？"
    return "收到的內容開頭是：" + repr(stripped[:60])


def _spec_samples(text: str) -> list[tuple[str, dict, float, int]]:
    """(counter, labels, value, line number) for every vLLM spec-decode counter sample."""
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line.startswith("vllm:spec_decode_"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise ValueError(f"/metrics 第 {number} 行的格式看不懂：{line[:80]!r}（預期「名稱{{標籤}} 數值」）")
        name = m["name"]
        if name.endswith("_created"):
            continue  # the creation timestamp prometheus_client adds next to each counter
        base = name.removesuffix("_total")
        if base not in COUNTERS:
            continue
        labels = _labels(m["labels"] or "", number)
        try:
            value = float(m["value"])
        except ValueError:
            raise ValueError(f"/metrics 第 {number} 行 {base} 的數值看不懂：{m['value']!r}") from None
        if not (math.isfinite(value) and value >= 0 and value == round(value)):
            raise ValueError(
                f"/metrics 第 {number} 行 {base} 的數值必須是非負整數（它是計數器），收到 {m['value']!r}"
            )
        out.append((base, labels, value, number))
    return out


def _labels(text: str, number: int) -> dict:
    labels, pos = {}, 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        if not m:
            raise ValueError(f"/metrics 第 {number} 行的標籤看不懂：{{{text}}}")
        labels[m[1]] = m[2]
        pos = m.end()
    return labels


def _position(base: str, labels: dict, number: int) -> int:
    if "position" not in labels:
        raise ValueError(f"/metrics 第 {number} 行的 {base} 缺少 position 標籤")
    try:
        position = int(labels["position"])
    except ValueError:
        raise ValueError(
            f"/metrics 第 {number} 行的 position 標籤必須是整數，收到 {labels['position']!r}"
        ) from None
    if position < 0:
        raise ValueError(f"/metrics 第 {number} 行的 position 標籤必須 ≥ 0，收到 {position}")
    return position


def _from_samples(samples) -> SpecDecodeStats:
    totals = {"num_drafts": 0, "num_draft_tokens": 0, "num_accepted_tokens": 0}
    per_pos: dict[int, int] = {}
    seen: dict[tuple, int] = {}
    for base, labels, value, number in samples:
        key = (base, tuple(sorted(labels.items())))
        if key in seen:
            raise ValueError(
                f"/metrics 第 {seen[key]} 行和第 {number} 行是同一個計數器、同一組標籤（{base} {dict(key[1])}）："
                "是不是把同一份內容貼了兩次？重複加總會得到錯的數字"
            )
        seen[key] = number
        field = COUNTERS[base]
        if field == "per_pos":
            position = _position(base, labels, number)
            per_pos[position] = per_pos.get(position, 0) + int(value)
        else:
            totals[field] += int(value)
    found = {COUNTERS[b] for b, *_ in samples}
    missing = [name for name, field in COUNTERS.items() if field not in found and field != "per_pos"]
    if missing:
        raise ValueError(
            "這份 /metrics 只有部分投機解碼計數器，缺少 " + "、".join(missing)
            + f"。是不是只複製了一部分？{_EXPECTED_TEXT}"
        )
    if per_pos and sorted(per_pos) != list(range(len(per_pos))):
        raise ValueError(
            f"vllm:spec_decode_num_accepted_tokens_per_pos 的 position 必須是 0、1、…、k−1 連續出現，"
            f"收到 {sorted(per_pos)}：是不是只複製了一部分？"
        )
    stats = SpecDecodeStats(
        num_drafts=totals["num_drafts"],
        num_draft_tokens=totals["num_draft_tokens"],
        num_accepted_tokens=totals["num_accepted_tokens"],
        accepted_per_position=tuple(per_pos[i] for i in range(len(per_pos))),
        source="metrics",
    )
    check_consistent(stats, _RESCRAPE)
    return stats
