"""Per-request acceptance metrics (``metrics.speculative_decoding`` in a response) → ``SpecDecodeStats``.

In vLLM releases after 0.28.0 (PR #48915, experimental), a server started with
``--per-request-spec-decode-metrics summary`` (or ``detailed``) adds to each single-sequence
response (vLLM's docs page on acceptance metrics describes it)::

    "metrics": {"speculative_decoding": {"mean_acceptance_length": 1.23…, "draft_acceptance_rate": 0.0775…,
        "acceptance_histogram": [39, 1, 0, 3], "acceptance_histogram_by_draft_length": {"3": [39, 1, 0, 3]},
        "num_spec_steps": 43, "num_accepted_draft_tokens": 10, "num_draft_tokens": 129, "num_spec_tokens": 3}}

``acceptance_histogram[j]`` counts the steps that accepted exactly j draft tokens, so the
rounds whose position i+1 was accepted number Σ_{j>i} histogram[j]: the per-position counts
are exact. ``draft_acceptance_rate`` is a fraction here (the bench prints a percent). A
pre-release shape sent the histogram as ``{"0": 39, "1": 1, "3": 3}``; that is read too.

The object is found wherever it sits: a whole response, a streamed ``data: {…}`` chunk, a list
of responses, the bare object, or a docs snippet with ``[ ... ]`` placeholders around it.
Several requests are added up; the same response pasted twice (same ``id``, or the same object
with no ``id``) is counted once, with a note.
"""
from __future__ import annotations

import json
import re

from .inputs import json_values
from .stats import SpecDecodeStats, check_consistent

# where a response (or a record of one) keeps the object: a variant seen in tools, and vLLM's key
# (a response carries one of them)
RESPONSE_KEYS = ("speculative_decoding_stats", "speculative_decoding")

MARKERS = ('"speculative_decoding"', '"num_spec_steps"')
_REQUIRED = ("num_spec_steps", "num_draft_tokens", "num_accepted_draft_tokens")
_HINT = "請貼完整的回應（含 metrics.speculative_decoding 整個物件）"
_KEY = re.compile(r'"speculative_decoding(?:_stats)?"\s*:\s*')


def looks_like_request(value) -> bool:
    return bool(_find(value))


def from_requests(value, where: str = "回應") -> SpecDecodeStats:
    """Every per-request ``speculative_decoding`` object in ``value`` (text, dict or list), added up."""
    found = _find(value)
    if not found:
        raise ValueError(
            f"{where}裡沒有 metrics.speculative_decoding：伺服器要用 --per-request-spec-decode-metrics summary 啟動"
            "（vLLM 0.28.0 之後的版本），且請求的 n 必須是 1"
        )
    notes, seen, parts = [], {}, []
    nulls = sum(1 for _, obj in found if obj is None)
    for ident, obj in found:
        if obj is None:
            continue
        if ident in seen:
            notes.append(f"同一個回應（{ident[:40]}）出現了不只一次，只算一次")
            continue
        seen[ident] = True
        parts.append(_one(obj, f"{where}第 {len(parts) + 1} 筆"))
    if nulls:
        notes.append(f"有 {nulls} 筆回應的 speculative_decoding 是 null（n > 1 的請求不回報），已略過")
    if not parts:
        raise ValueError(f"{where}裡的 speculative_decoding 都是 null：只有 n = 1 的請求會回報。{_HINT}")
    ks = {p.num_speculative_tokens for p in parts}
    if len(ks) != 1:
        raise ValueError(f"這些請求的 num_spec_tokens（k）不一致：{sorted(ks)}。請只貼同一台伺服器的回應")
    k = ks.pop()
    with_pos = [p for p in parts if p.accepted_per_position]
    if with_pos and len(with_pos) != len(parts):
        raise ValueError("有些回應有 acceptance_histogram、有些沒有：無法逐位置相加。請用同一個 --per-request-spec-decode-metrics 設定")
    if len(parts) > 1:
        notes.insert(0, f"{len(parts)} 個請求的計數已相加")
    stats = SpecDecodeStats(
        num_drafts=sum(p.num_drafts for p in parts),
        num_draft_tokens=sum(p.num_draft_tokens for p in parts),
        num_accepted_tokens=sum(p.num_accepted_tokens for p in parts),
        accepted_per_position=tuple(sum(p.accepted_per_position[i] for p in parts) for i in range(k)) if with_pos else (),
        source="request", k=k, notes=tuple(notes),
    )
    check_consistent(stats, _HINT)
    return stats


def _find(value) -> list[tuple[str, dict | None]]:
    """(identity, object) for each speculative_decoding object in ``value``."""
    if isinstance(value, str):
        try:
            values = json_values(value)
        except json.JSONDecodeError:
            return _scan(value)
        return [hit for v in values for hit in _walk(v, None)]
    return _walk(value, None)


def _walk(value, ident) -> list[tuple[str, dict | None]]:
    if isinstance(value, list):
        return [hit for v in value for hit in _walk(v, ident)]
    if not isinstance(value, dict):
        return []
    ident = value.get("id") if isinstance(value.get("id"), str) else ident
    if "num_spec_steps" in value:
        return [(ident or json.dumps(value, sort_keys=True), value)]
    for key in RESPONSE_KEYS:
        if key in value and (value[key] is None or isinstance(value[key], dict)):
            obj = value[key]
            return [(ident or json.dumps(obj, sort_keys=True), obj)]
    return [hit for v in value.values() for hit in _walk(v, ident)]


def _scan(text: str) -> list[tuple[str, dict | None]]:
    """Objects after each ``"speculative_decoding":`` in a text that is not JSON as a whole."""
    decoder, out = json.JSONDecoder(), []
    for m in _KEY.finditer(text):
        try:
            obj, _ = decoder.raw_decode(text, m.end())
        except json.JSONDecodeError:
            raise ValueError(f"speculative_decoding 後面的物件不完整（第 {text.count(chr(10), 0, m.end()) + 1} 行附近）。{_HINT}") from None
        if obj is None or isinstance(obj, dict):
            out.append((json.dumps(obj, sort_keys=True), obj))
    return out


def _int(obj, key, where):
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where} 的 {key} 必須是非負整數，收到 {value!r}")
    return value


def _one(obj: dict, where: str) -> SpecDecodeStats:
    missing = [key for key in _REQUIRED if key not in obj]
    if missing:
        raise ValueError(f"{where} 缺少 " + "、".join(missing) + f"：預期 vLLM 的 metrics.speculative_decoding。{_HINT}")
    steps, drafted, accepted = (_int(obj, key, where) for key in _REQUIRED)
    k = _int(obj, "num_spec_tokens", where) if "num_spec_tokens" in obj else None
    hist = _histogram(obj.get("acceptance_histogram"), where)
    per_pos = ()
    if hist is not None:
        if k is None:
            k = len(hist) - 1
        if len(hist) > k + 1:
            raise ValueError(f"{where} 的 acceptance_histogram 有 {len(hist)} 格，超過 num_spec_tokens + 1 = {k + 1}")
        hist = hist + [0] * (k + 1 - len(hist))
        problems = []
        if sum(hist) != steps:
            problems.append(f"histogram 的總和（{sum(hist)}）≠ num_spec_steps（{steps}）")
        if sum(j * h for j, h in enumerate(hist)) != accepted:
            problems.append(f"Σ j × histogram[j]（{sum(j * h for j, h in enumerate(hist))}）≠ num_accepted_draft_tokens（{accepted}）")
        if problems:
            raise ValueError(f"{where} 的數字彼此矛盾：" + "；".join(problems) + f"。{_HINT}")
        per_pos = tuple(sum(hist[i + 1:]) for i in range(k))
    if k is None:
        raise ValueError(f"{where} 沒有 num_spec_tokens 也沒有 acceptance_histogram：不知道 k。{_HINT}")
    _check_ratio(obj, "draft_acceptance_rate", accepted / drafted if drafted else None, where, fraction=True)
    _check_ratio(obj, "mean_acceptance_length", 1 + accepted / steps if steps else None, where, fraction=False)
    return SpecDecodeStats(steps, drafted, accepted, per_pos, "request", k=k)


def _histogram(value, where) -> list[int] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        try:
            pairs = {int(j): n for j, n in value.items()}
        except ValueError:
            raise ValueError(f"{where} 的 acceptance_histogram 的鍵必須是 0、1、2… 的整數，收到 {list(value)}") from None
        if any(j < 0 for j in pairs):
            raise ValueError(f"{where} 的 acceptance_histogram 的鍵必須 ≥ 0，收到 {sorted(pairs)}")
        value = [pairs.get(j, 0) for j in range(max(pairs, default=-1) + 1)]
    if not isinstance(value, list) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value):
        raise ValueError(f"{where} 的 acceptance_histogram 必須是非負整數的清單，收到 {value!r}")
    return value


def _check_ratio(obj, key, expected, where, *, fraction):
    value = obj.get(key)
    if value is None or expected is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where} 的 {key} 必須是數字，收到 {value!r}")
    if fraction and value > 1:
        raise ValueError(f"{where} 的 {key} 在這裡是 0 到 1 的分數，收到 {value!r}：看起來是百分比（bench 印的才是 %）")
    decimals = len(repr(float(value)).partition(".")[2])
    if abs(value - expected) > 0.5 * 10 ** -decimals + 1e-9:
        raise ValueError(f"{where} 的 {key}（{value!r}）和計數算出的 {expected:.6f} 對不上：內容是否被改過？")
