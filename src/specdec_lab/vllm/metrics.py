"""``parse_metrics``: one entry point for everything that carries vLLM's speculative decoding counts.

It recognises, in this order, and hands to one small parser each:

* JSON — a per-request ``metrics.speculative_decoding`` object (``request_json``) or a
  ``vllm bench serve --save-result`` result with ``spec_decode_*`` fields (``bench``);
* the block ``vllm bench serve`` prints, with its ``Speculative Decoding`` section (``bench_text``);
* a ``/metrics`` scrape or a Prometheus web UI table (``prometheus``): the four counters
  ``vllm:spec_decode_num_drafts``, ``…_num_draft_tokens``, ``…_num_accepted_tokens`` and
  ``…_num_accepted_tokens_per_pos`` (label ``position``), with or without ``_total``, summed over
  engines (labels ``model_name``, ``engine``) and any other label set;
* the totals vLLM's offline example ``examples/offline_inference/spec_decode.py`` prints
  (``num_drafts: …``, ``acceptance at token i: …``; ``offline_example``);
* V1 log lines, ``SpecDecoding metrics: …`` (``log_line``), added up: one line per interval;
* V0 log lines, ``Speculative metrics: … System efficiency …`` (``log_v0``): cumulative, the last
  one is taken.

All of them return one ``SpecDecodeStats``. Anything else is refused with a message that names
what was recognised, what is missing and what to paste instead.
"""
from __future__ import annotations

import json
import re

from . import bench, bench_text, log_line, log_v0, offline_example, request_json
from .inputs import json_values
from .prometheus import COUNTERS, position, spec_samples
from .stats import SpecDecodeStats, check_consistent

__all__ = ["COUNTERS", "parse_metrics"]

_EXPECTED_TEXT = (
    "預期的是 vLLM /metrics 的內容（計數器 vllm:spec_decode_num_drafts、vllm:spec_decode_num_draft_tokens、"
    "vllm:spec_decode_num_accepted_tokens、vllm:spec_decode_num_accepted_tokens_per_pos，可帶 _total 後綴）、"
    f"伺服器 log 裡含「{log_line.LOG_MARKER}」或「{log_v0.V0_MARKER}」的行、"
    "vllm bench serve 印出的 Speculative Decoding 段落，或回應裡的 metrics.speculative_decoding"
)
_RESCRAPE = "請等負載結束、伺服器閒置時重新抓一次 /metrics（curl -s http://127.0.0.1:8000/metrics）"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def parse_metrics(text) -> SpecDecodeStats:
    """Read vLLM's speculative decoding counts from whatever vLLM printed or served.

    ``text`` is the pasted text (or a dict/list already loaded from a JSON response). See the
    module docstring for the formats. Counters are summed over engines and label sets; V1 log
    lines are added up; V0 log lines are cumulative, so the last one is taken. A sample or line
    pasted twice is counted once, with a note in ``SpecDecodeStats.notes``. A text without these
    counts, or with counts that contradict each other, raises ``ValueError`` saying what was
    recognised and what to paste instead.
    """
    if isinstance(text, (dict, list)):
        return _from_json([text], "貼上的物件")
    if not isinstance(text, str):
        raise ValueError(f"text 必須是字串（/metrics 或 log 的文字內容），收到 {type(text).__name__}")
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    stripped = text.strip()
    is_json = stripped[:1] in ("{", "[")
    if is_json or any(marker in text for marker in request_json.MARKERS):
        try:
            values = json_values(text)
        except json.JSONDecodeError:
            if any(marker in text for marker in request_json.MARKERS):
                return request_json.from_requests(text, "貼上的文字")
            if is_json:
                raise ValueError("收到的看起來是 JSON，但不完整（被截斷了？）。" + _EXPECTED_TEXT) from None
        else:
            return _from_json(values, "貼上的 JSON")
    if bench_text.is_printed_block(text):
        return _from_printed_bench(text)
    samples, notes, form = spec_samples(text)
    if samples:
        return _from_samples(samples, notes, form, text)
    has_v1_lines = any(log_line.is_v1_line(line) for line in text.splitlines())
    if offline_example.is_offline_block(text):
        return offline_example.from_offline(text, also_log_lines=has_v1_lines)
    if has_v1_lines:
        return log_line.from_log(text)
    if any(log_v0.is_v0_line(line) for line in text.splitlines()):
        return log_v0.from_v0_log(text)
    raise ValueError(f"找不到投機解碼的計數。{_EXPECTED_TEXT}。{_diagnose(text)}")


def _from_json(values: list, where: str) -> SpecDecodeStats:
    if request_json.looks_like_request(values):
        return request_json.from_requests(values, where)
    objects = [obj for v in values for obj in (v if isinstance(v, list) else [v]) if isinstance(obj, dict)]
    with_spec = [obj for obj in objects if bench.has_spec_fields(obj)]
    if len(with_spec) > 1:
        raise ValueError(
            f"{where} 有 {len(with_spec)} 份 bench 結果：α 要一份一份看（不同併發數的結果不該相加）。"
            "請一次貼一份，或用 read_bench_results() 讀全部"
        )
    if with_spec:
        return bench.spec_stats(with_spec[0], where)
    if objects and any(key in objects[0] for key in ("output_throughput", "max_concurrency", "completed")):
        raise ValueError(
            f"{where} 是 vllm bench serve 的結果，但沒有 spec_decode_* 欄位：那次測量時伺服器沒有做投機解碼"
            "（或 vLLM 太舊，還不會記錄）。要找交叉點請用 read_bench_results() 讀它；要量 α，預期的是投機解碼開著時的結果或 /metrics"
        )
    raise ValueError(f"{where} 裡找不到投機解碼的計數。{_EXPECTED_TEXT}")


def _from_printed_bench(text: str) -> SpecDecodeStats:
    parts = [bench_text.parse_block(block, "貼上的 bench 結果") for block in bench_text.blocks(text)]
    with_spec = [p for p in parts if bench.has_spec_fields(p)]
    if not with_spec:
        raise ValueError(
            "這是 vllm bench serve 印出的結果，但沒有「Speculative Decoding」那一段：那次測量時伺服器沒有做投機解碼，"
            "或 vLLM 早於 2026 年初的版本（PR #31739 之前還不會印這一段）。要量 α 請改貼 /metrics 或伺服器 log 的 SpecDecoding metrics 行；"
            "要找交叉點請用 read_bench_results() 讀這段結果"
        )
    if len(with_spec) > 1:
        raise ValueError(f"貼上的文字有 {len(with_spec)} 段 bench 結果：α 請一段一段看（不同併發數的結果不該相加）")
    return bench.spec_stats(with_spec[0], "貼上的 bench 結果")


def _diagnose(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        return "收到的是空字串。"
    if "vllm:diffusion_" in text or "DiffusionDecoding metrics:" in text:
        return "這是擴散（dLLM）模型的計數器：它們借用投機解碼的管道，但意義不同，不能算 α。"
    if "vllm:" in text:
        if "spec_decode_draft_acceptance_rate" in text or "spec_decode_efficiency" in text:
            return "這份 /metrics 只有舊版 V0 引擎的比率指標，沒有 V1 的計數器；請改貼 V0 log 的 Speculative metrics 行（它印出 k）。"
        return "這份 /metrics 有 vLLM 的指標但沒有 spec_decode 計數器：伺服器啟動時是否加了 --speculative-config？"
    return "收到的內容開頭是：" + repr(stripped[:60])


def _from_samples(samples, notes, form, text) -> SpecDecodeStats:
    totals = {"num_drafts": 0, "num_draft_tokens": 0, "num_accepted_tokens": 0}
    label_sets = {"num_drafts": 0, "num_draft_tokens": 0, "num_accepted_tokens": 0}
    per_pos: dict[int, int] = {}
    for base, labels, value, number in samples:
        field = COUNTERS[base]
        if field == "per_pos":
            pos = position(base, labels, number)
            per_pos[pos] = per_pos.get(pos, 0) + value
        else:
            totals[field] += value
            label_sets[field] += 1
    found = {COUNTERS[b] for b, *_ in samples}
    missing = [name for name, field in COUNTERS.items() if field not in found and field != "per_pos"]
    if missing:
        read = "、".join(
            f"{name} = {totals[field]:,}（{label_sets[field]} 組標籤相加）"
            for name, field in COUNTERS.items() if field in found and field != "per_pos"
        )
        if per_pos:
            read += ("、" if read else "") + "vllm:spec_decode_num_accepted_tokens_per_pos 的 position " + "、".join(
                str(p) for p in sorted(per_pos))
            gaps = [str(p) for p in range(max(per_pos)) if p not in per_pos]
            if gaps:
                read += "，但沒有 position " + "、".join(gaps)
        v0 = " 這像是 V0 引擎的 /metrics（有 num_emitted_tokens）：V0 沒有 num_drafts，請改貼 V0 log 的 Speculative metrics 行。" \
            if "spec_decode_num_emitted_tokens" in text else ""
        where = " Prometheus 網頁表格" if form == "prometheus-ui" else " /metrics "
        no_per_pos = "" if per_pos else "；也沒有 vllm:spec_decode_num_accepted_tokens_per_pos（量 α 要用它）"
        raise ValueError(
            f"這份{where}只有部分投機解碼計數器，缺少 " + "、".join(missing)
            + (f"（讀到 {read}）" if read else "") + f"{no_per_pos}。是不是只複製了一部分？{v0}{_EXPECTED_TEXT}"
        )
    if per_pos and sorted(per_pos) != list(range(len(per_pos))):
        raise ValueError(
            f"vllm:spec_decode_num_accepted_tokens_per_pos 的 position 必須是 0、1、…、k−1 連續出現，"
            f"收到 {sorted(per_pos)}：是不是只複製了一部分？"
        )
    _refuse_cut_positions(per_pos, totals, form)
    stats = SpecDecodeStats(
        num_drafts=totals["num_drafts"],
        num_draft_tokens=totals["num_draft_tokens"],
        num_accepted_tokens=totals["num_accepted_tokens"],
        accepted_per_position=tuple(per_pos[i] for i in range(len(per_pos))),
        source=form,
        notes=tuple(notes),
    )
    check_consistent(stats, _RESCRAPE)
    return stats


def _refuse_cut_positions(per_pos: dict, totals: dict, form: str) -> None:
    """A scrape whose last per-position rows were cut off (``… | grep`` or a paste trimmed by
    hand): fewer positions than the draft tokens need, and their counts fall short of the
    accepted tokens. Named as such, not as counters that contradict each other."""
    drafts, drafted, accepted = (totals[key] for key in ("num_drafts", "num_draft_tokens", "num_accepted_tokens"))
    seen, counted = len(per_pos), sum(per_pos.values())
    if not (per_pos and drafts and drafted > seen * drafts and counted < accepted):
        return
    k_min = -(-drafted // drafts)
    where = " Prometheus 網頁表格" if form == "prometheus-ui" else " /metrics "
    alpha = per_pos[0] / drafts
    raise ValueError(
        f"這份{where}的 vllm:spec_decode_num_accepted_tokens_per_pos 只有 position 0 到 {seen - 1}（{seen} 個位置），"
        f"但 num_draft_tokens ÷ num_drafts = {drafted:,} ÷ {drafts:,} ≈ {drafted / drafts:.5f} 大於 {seen}："
        f"每輪最多起草 k 個 token，所以 k 至少是 {k_min}，缺少 position {seen} 起的行。"
        f"position 0 到 {seen - 1} 的計數加起來是 {counted:,}，比 num_accepted_tokens {accepted:,} 少 {accepted - counted:,}，"
        f"那是缺的位置的份。第 1 個位置的接受率 α ≈ {per_pos[0]:,} ÷ {drafts:,} ≈ {alpha:.3f} 讀得到，"
        "但要看接受率怎麼隨位置下降、推薦 k，需要全部 k 個位置。是不是複製時截掉了後面幾行？"
        "請貼完整的 /metrics（curl -s http://127.0.0.1:8000/metrics | grep spec_decode）"
    )
