"""``read_bench_results``: what ``vllm bench serve`` writes (``--save-result`` JSON) or prints.

Keys as in ``vllm/benchmarks/serve.py``: ``max_concurrency``, ``output_throughput`` (output
tokens/s, all users), ``mean_tpot_ms`` (per-user time per output token), ``mean_ttft_ms``,
``completed``, ``failed``, and — only when the server drafted during the run — the
``spec_decode_*`` fields, of which ``spec_decode_acceptance_rate`` is a percent.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from .bench_text import _ROWS as PRINTED_ROWS, HEADER, blocks, is_printed_block, parse_block
from .inputs import is_upload, json_values, text_of
from .rounding import counts_for, slack
from .stats import SpecDecodeStats, check_consistent


@dataclass(frozen=True)
class BenchRun:
    """One ``vllm bench serve --save-result`` result (the fields the course uses).

    ``spec_decode_acceptance_rate`` is stored as a fraction (vLLM writes a percent).
    """

    max_concurrency: int
    output_throughput: float  # total output tokens/s, all users together
    mean_tpot_ms: float  # time per output token after the first, per request: the per-user speed
    mean_ttft_ms: float
    completed: int
    failed: int
    speculative: bool  # the server counted speculative rounds during this run
    spec_decode_acceptance_rate: float | None = None
    spec_decode_acceptance_length: float | None = None
    spec_decode_num_drafts: int | None = None
    spec_decode_draft_tokens: int | None = None
    spec_decode_accepted_tokens: int | None = None
    spec_decode_per_position_acceptance_rates: tuple[float, ...] = ()
    label: str | None = None
    source: str = ""

    @property
    def per_user_tokens_per_s(self) -> float:
        """1000 ÷ mean TPOT: how fast one user sees tokens arrive."""
        return 1000.0 / self.mean_tpot_ms


_REQUIRED = ("max_concurrency", "output_throughput", "mean_tpot_ms", "mean_ttft_ms", "completed")


def read_bench_results(*sources) -> list[BenchRun]:
    """Read ``vllm bench serve`` results.

    Each source is a path to a result file (one JSON object, several appended with
    ``--append-result``, a JSON list, or the text block the command prints), pasted text of any
    of these, a file chosen with an ipywidgets ``FileUpload`` (its ``value`` as it is), or an
    already-loaded dict. Lists and tuples of sources are flattened. A string is taken for a path
    only when the file exists or the string cannot be anything else (``inputs.text_of``).
    """
    flat = [s for source in sources for s in (source if isinstance(source, (list, tuple)) else [source])]
    if not flat:
        raise ValueError("read_bench_results 需要至少一個結果檔（路徑、JSON 文字、bench 印出的結果或 dict）")
    return [_bench_run(obj, where) for s in flat for obj, where in bench_objects(s)]


def bench_objects(source):
    """(result dict, where it came from) for each result in a file, a text or a dict."""
    upload = is_upload(source)
    if isinstance(source, dict) and not upload:
        yield source, "dict"
        return
    if not isinstance(source, (str, Path)) and not upload:
        raise ValueError(f"結果必須是檔案路徑、貼上的文字、上傳的檔案或 dict，收到 {type(source).__name__}")
    text, where = text_of(source, "bench 結果")
    if is_printed_block(text):
        parts = blocks(text)
        for n, block in enumerate(parts, 1):
            yield parse_block(block, where if len(parts) == 1 else f"{where} 第 {n} 段"), where
        return
    if not text.strip():
        raise ValueError(f"{where} 是空的")
    try:
        values = json_values(text)
    except json.JSONDecodeError as e:
        if text.lstrip()[:1] in "{[":
            raise ValueError(f"{where} 不是完整的 JSON（第 {e.lineno} 行第 {e.colno} 欄：{e.msg}）：檔案是否被截斷？") from None
        raise ValueError(
            f"{where} 看不懂：它既不是存在的檔案，也不是 JSON 或 vllm bench serve 印出的結果"
            f"（預期 --save-result 的 .json，或以「{HEADER}」開頭的那一段）。開頭是 {text.strip()[:60]!r}"
        ) from None
    n = 0
    for value in values:
        for obj in (value if isinstance(value, list) else [value]):
            if not isinstance(obj, dict):
                raise ValueError(f"{where} 的內容必須是 JSON 物件（{{…}}），收到 {type(obj).__name__}")
            n += 1
            yield obj, where if n == 1 else f"{where} 第 {n} 筆"
    if n == 0:
        raise ValueError(f"{where} 是空的")


def _number(obj, key, where, *, integer=False, positive=False):
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where} 的 {key} 必須是有限的數字，收到 {value!r}")
    if integer and value != int(value):
        raise ValueError(f"{where} 的 {key} 必須是整數，收到 {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{where} 的 {key} 必須{'大於 0' if positive else '≥ 0'}，收到 {value!r}")
    return int(value) if integer else float(value)


def _bench_run(obj: dict, where: str) -> BenchRun:
    missing = [key for key in _REQUIRED if key not in obj]
    if missing and obj.get("_printed"):
        labels = {key: label for label, (key, _) in PRINTED_ROWS.items()}
        raise ValueError(
            f"{where} 是 vllm bench serve 印出的結果，但缺少 " + "、".join(labels[key] for key in missing)
            + f" 這幾行：請貼從「{HEADER}」那一行到最後一排 ===== 的整段"
            + ("（只有 Speculative Decoding 那一段的話，parse_metrics() 讀得出 α，但量不到交叉點）"
               if has_spec_fields(obj) else "")
        )
    if missing:
        hint = ""
        if "mean_tpot_ms" in missing and "completed" not in missing:
            hint = "（TPOT／TTFT 是 --percentile-metrics 的預設項目，別把它們關掉）"
        raise ValueError(
            f"{where} 缺少欄位 " + "、".join(missing)
            + f"：預期 vllm bench serve --save-result 寫出的結果檔{hint}"
        )
    if obj["max_concurrency"] is None:
        raise ValueError(
            f"{where} 的 max_concurrency 是 null：跑 vllm bench serve 時要加 --max-concurrency N，"
            "每個併發數各跑一次，才量得到交叉點"
        )
    completed = _number(obj, "completed", where, integer=True)
    if completed == 0:
        raise ValueError(f"{where} 沒有任何請求成功（completed = 0）：這次量測不能用")
    failed = _number(obj, "failed", where, integer=True) if "failed" in obj else 0
    spec = _spec_fields(obj, where) if has_spec_fields(obj) else {}
    return BenchRun(
        max_concurrency=_number(obj, "max_concurrency", where, integer=True, positive=True),
        output_throughput=_number(obj, "output_throughput", where, positive=True),
        mean_tpot_ms=_number(obj, "mean_tpot_ms", where, positive=True),
        mean_ttft_ms=_number(obj, "mean_ttft_ms", where),
        completed=completed,
        failed=failed,
        speculative=bool(spec),
        label=obj.get("label") if isinstance(obj.get("label"), str) else None,
        source=where,
        **spec,
    )



def _spec_fields(obj: dict, where: str) -> dict:
    """The ``spec_decode_*`` fields of a run the server drafted in, the percent as a fraction;
    fields that contradict each other are refused (a printed block is checked to its 2 decimals)."""
    for key in ("spec_decode_acceptance_rate", "spec_decode_acceptance_length"):
        if key not in obj:
            raise ValueError(f"{where} 有 spec_decode_* 欄位但缺少 {key}：檔案不完整")
    printed = obj.get("_printed", False)
    percent = _number(obj, "spec_decode_acceptance_rate", where)
    if percent > 100:
        raise ValueError(f"{where} 的 spec_decode_acceptance_rate 是百分比，必須 ≤ 100，收到 {percent!r}")
    length = _number(obj, "spec_decode_acceptance_length", where)
    if length < 1:
        raise ValueError(f"{where} 的 spec_decode_acceptance_length 必須 ≥ 1（含修正／獎勵 token），收到 {length!r}")
    spec = {"spec_decode_acceptance_rate": percent / 100.0, "spec_decode_acceptance_length": length}
    for key in ("spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens"):
        if key in obj:
            spec[key] = _number(obj, key, where, integer=True)
    rates = obj.get("spec_decode_per_position_acceptance_rates", [])
    if not isinstance(rates, list) or not all(
        isinstance(r, (int, float)) and not isinstance(r, bool) and 0 <= r <= 100 for r in rates
    ):
        raise ValueError(f"{where} 的 spec_decode_per_position_acceptance_rates 必須是 0 到 1 之間的數字清單")
    if any(r > 1 for r in rates):
        raise ValueError(
            f"{where} 的 spec_decode_per_position_acceptance_rates 是 0 到 1 的分數，收到 {rates}："
            "看起來是百分比（bench 印出來的才是 %，JSON 裡存的是分數）"
        )
    spec["spec_decode_per_position_acceptance_rates"] = tuple(float(r) for r in rates)
    drafts, drafted, accepted = (spec.get(key) for key in (
        "spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens"))
    rate_tol, length_tol = (0.00005, 0.005) if printed else (1e-6, 1e-6)
    if drafted and accepted is not None and abs(accepted / drafted - spec["spec_decode_acceptance_rate"]) > rate_tol + 1e-9:
        raise ValueError(
            f"{where} 的 spec_decode_acceptance_rate（{percent}%）和 accepted ÷ draft tokens"
            f"（{accepted}/{drafted}）對不上：這個欄位應是百分比，檔案是否被改過？"
        )
    if drafts and accepted is not None and abs(1 + accepted / drafts - length) > length_tol + 1e-9:
        raise ValueError(
            f"{where} 的 spec_decode_acceptance_length（{length}）和 1 + accepted ÷ drafts 對不上：檔案是否被改過？"
        )
    return spec


def has_spec_fields(obj: dict) -> bool:
    return any(key.startswith("spec_decode_") for key in obj)


def spec_stats(obj: dict, where: str) -> SpecDecodeStats:
    """The counts of a bench result's speculative decoding section (JSON or printed block).

    The JSON stores exact counts and per-position rates as full-precision fractions, so the
    per-position counts are rate × drafts exactly; the printed block shows the rates as percents
    with 2 decimals, so the counts are recovered as for a log line (they must sum to the accepted
    tokens), with their slack.
    """
    spec = _spec_fields(obj, where)
    keys = ("spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens")
    missing = [key for key in keys if key not in spec]
    if missing:
        raise ValueError(f"{where} 缺少 " + "、".join(missing) + "：這份 bench 結果沒有投機解碼的計數，量不到 α")
    drafts, drafted, accepted = (spec[key] for key in keys)
    rates = list(spec["spec_decode_per_position_acceptance_rates"])
    hint = "請貼 vllm bench serve 印出的完整 Speculative Decoding 段落，或 --save-result 的 .json"
    if not drafts:
        check_consistent(SpecDecodeStats(0, drafted, accepted, ()), hint)
    if obj.get("_printed"):
        counts = counts_for(rates, drafts, accepted, 0.00005) if rates else []
        if counts is None:
            raise ValueError(
                f"{where} 的各位置接受率（{[round(100 * r, 2) for r in rates]} %）和 Accepted tokens {accepted} 、"
                f"Drafts {drafts} 對不上：是不是改過或截斷了？"
            )
        spare = tuple(slack(rates, drafts, counts, 0.00005, accepted))
    else:
        counts = [round(r * drafts) for r in rates]
        if any(abs(r * drafts - c) > 1e-6 * drafts + 1e-6 for r, c in zip(rates, counts)):
            raise ValueError(f"{where} 的 spec_decode_per_position_acceptance_rates 乘上 num_drafts 不是整數：檔案是否被改過？")
        spare = ()
    stats = SpecDecodeStats(drafts, drafted, accepted, tuple(counts), "bench", per_position_slack=spare)
    check_consistent(stats, hint)
    return stats
