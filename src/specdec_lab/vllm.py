"""Your own vLLM numbers → α, per-position acceptance, a recommended k, and your crossover.

Three readers, each for a text vLLM itself writes (formats checked against vLLM's source:
``vllm/v1/spec_decode/metrics.py`` and ``vllm/benchmarks/serve.py``):

* ``parse_metrics(text)`` — a scrape of the server's ``/metrics`` page (Prometheus text). vLLM
  counts four things, one counter per engine (labels ``model_name`` and ``engine``):
  ``vllm:spec_decode_num_drafts`` (verification rounds), ``vllm:spec_decode_num_draft_tokens``
  (draft tokens proposed), ``vllm:spec_decode_num_accepted_tokens`` (draft tokens accepted) and
  ``vllm:spec_decode_num_accepted_tokens_per_pos`` (label ``position`` = 0, 1, …, k−1: rounds
  whose draft token at that position was accepted). It also reads the server log's
  "SpecDecoding metrics:" lines.
* ``estimate_alpha(stats)`` — α, the conditional acceptance at each position, whether acceptance
  looks i.i.d., and a recommended k.
* ``read_bench_results(...)`` / ``bench_sweep(...)`` / ``measured_crossover(...)`` — the JSON
  files ``vllm bench serve --save-result`` writes, from a sweep over ``--max-concurrency`` with
  speculation on and off.

Why vLLM's "draft acceptance rate" is not α: it is accepted ÷ drafted tokens. With i.i.d.
acceptance α and k draft tokens per round a round accepts E − 1 = α + α² + … + α^k tokens on
average, so that rate is (E − 1)/k — for α = 0.8 and k = 5, 0.54, not 0.8. α is the rate at
position 1: ``per_position_acceptance[0]``.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import _validate as check
from .chisquare import chi2_sf
from .closed_form import best_k, expected_tokens, expected_tokens_positional, knee_k, speedup

__all__ = [
    "SpecDecodeStats",
    "parse_metrics",
    "AlphaEstimate",
    "estimate_alpha",
    "BenchRun",
    "read_bench_results",
    "BenchSweep",
    "bench_sweep",
    "measured_crossover",
    "estimate_draft_cost",
]

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
    "或伺服器 log 裡以「SpecDecoding metrics:」開頭的那一行"
)
_RESCRAPE = "請等負載結束、伺服器閒置時重新抓一次 /metrics（curl -s http://127.0.0.1:8000/metrics）"


# ---------------------------------------------------------------------------------------------
# /metrics and the log line → SpecDecodeStats
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecDecodeStats:
    """vLLM's speculative decoding counters, summed over engines.

    ``accepted_per_position[i]`` counts the rounds whose draft token at position i+1 was
    accepted (so every earlier one was too); its length is k, the number of speculative tokens.
    ``num_drafts_uncertainty`` is 0 for a /metrics scrape. A log line prints rounded ratios, not
    the number of rounds; that number is then recovered from the ratios and is exact only when
    one integer fits them all — otherwise it is the middle of the fitting range and this field
    says how far off it can be.
    """

    num_drafts: int
    num_draft_tokens: int
    num_accepted_tokens: int
    accepted_per_position: tuple[int, ...]
    source: str = "metrics"  # "metrics" or "log"
    num_drafts_uncertainty: int = 0

    @property
    def num_speculative_tokens(self) -> int:
        """k: the number of draft positions vLLM counts (``num_speculative_tokens``)."""
        return len(self.accepted_per_position)

    @property
    def mean_acceptance_length(self) -> float:
        """Tokens per verification round, the bonus/correction token included: 1 + accepted ÷ drafts."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts

    @property
    def draft_acceptance_rate(self) -> float:
        """vLLM's "draft acceptance rate" as a fraction: accepted ÷ drafted tokens. Not α."""
        return self.num_accepted_tokens / self.num_draft_tokens

    @property
    def per_position_acceptance(self) -> np.ndarray:
        """Share of rounds whose draft token at position i+1 was accepted (count ÷ drafts)."""
        return np.asarray(self.accepted_per_position, dtype=float) / self.num_drafts

    @property
    def full_length_drafts(self) -> bool:
        """True when every round drafted all k tokens (ngram may propose fewer)."""
        return self.num_draft_tokens == self.num_speculative_tokens * self.num_drafts

    def __str__(self) -> str:
        k = self.num_speculative_tokens
        drafts = f"{self.num_drafts:,}"
        if self.num_drafts_uncertainty:
            drafts += f"（± {self.num_drafts_uncertainty}，由 log 的四捨五入數字推回）"
        lines = [
            f"來源：{'/metrics' if self.source == 'metrics' else 'SpecDecoding metrics log'}",
            f"驗證輪數 num_drafts = {drafts}",
            f"草稿 token 數 num_draft_tokens = {self.num_draft_tokens:,}",
            f"被接受的草稿 token 數 num_accepted_tokens = {self.num_accepted_tokens:,}",
            f"平均每輪產出 mean_acceptance_length = {self.mean_acceptance_length:.3f}",
            f"vLLM 的 draft acceptance rate = {self.draft_acceptance_rate:.3f}（接受 ÷ 草稿 token，不是 α）",
        ]
        if k:
            rates = "、".join(f"{r:.3f}" for r in self.per_position_acceptance)
            lines.append(f"各位置接受比例（k = {k}）：{rates}")
            lines.append(f"α（第 1 個位置的接受率）≈ {self.per_position_acceptance[0]:.3f}")
        return "\n".join(lines)


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
    if "SpecDecoding metrics:" in text:
        return _from_log(text)
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
        if not line or line.startswith("#") or not line.startswith("vllm:spec_decode_"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise ValueError(f"/metrics 第 {number} 行的格式看不懂：{line[:80]!r}（預期「名稱{{標籤}} 數值」）")
        name = m["name"]
        if name.endswith("_created"):
            continue  # the creation timestamp prometheus_client adds next to each counter
        base = name[: -len("_total")] if name.endswith("_total") else name
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
    _check_consistent(stats, _RESCRAPE)
    return stats


def _check_consistent(s: SpecDecodeStats, hint: str) -> None:
    """The invariants vLLM's counting guarantees; a violation means a torn or edited scrape."""
    if s.num_drafts == 0:
        raise ValueError(
            "num_drafts = 0：伺服器還沒做過任何一輪投機解碼。先送幾個請求（例如跑一次 vllm bench serve）再抓"
        )
    problems = []
    if s.num_draft_tokens < s.num_drafts:
        problems.append(f"num_draft_tokens（{s.num_draft_tokens}）小於 num_drafts（{s.num_drafts}），每輪至少有 1 個草稿 token")
    if s.num_accepted_tokens > s.num_draft_tokens:
        problems.append(f"num_accepted_tokens（{s.num_accepted_tokens}）大於 num_draft_tokens（{s.num_draft_tokens}）")
    k = s.num_speculative_tokens
    if k:
        counts = s.accepted_per_position
        if sum(counts) != s.num_accepted_tokens:
            problems.append(
                f"各位置接受數的總和（{sum(counts)}）不等於 num_accepted_tokens（{s.num_accepted_tokens}）"
            )
        if counts[0] > s.num_drafts:
            problems.append(f"位置 0 的接受數（{counts[0]}）大於 num_drafts（{s.num_drafts}）")
        if any(b > a for a, b in zip(counts, counts[1:])):
            problems.append(f"各位置接受數必須隨位置遞減（後面的位置要前面全中才算），收到 {list(counts)}")
        if s.num_draft_tokens > k * s.num_drafts:
            problems.append(
                f"num_draft_tokens（{s.num_draft_tokens}）大於 k × num_drafts（{k} × {s.num_drafts}）"
            )
    if problems:
        raise ValueError("計數器彼此矛盾，算出來的數字不可信：" + "；".join(problems) + "。" + hint)


_LOG_FIELDS = {
    "mean_length": re.compile(r"Mean acceptance length:\s*([0-9.]+|nan)"),
    "accepted": re.compile(r"Accepted:\s*(\d+)\s*tokens"),
    "drafted": re.compile(r"Drafted:\s*(\d+)\s*tokens"),
    "per_position": re.compile(r"Per-position acceptance rate:\s*((?:[0-9.]+|nan)(?:,\s*(?:[0-9.]+|nan))*)"),
}


def _from_log(text: str) -> SpecDecodeStats:
    lines = [line for line in text.splitlines() if "SpecDecoding metrics:" in line]
    parts = [_log_line(line[line.index("SpecDecoding metrics:"):], n) for n, line in enumerate(lines, 1)]
    ks = {len(p.accepted_per_position) for p in parts}
    if len(ks) != 1:
        raise ValueError(f"這幾行 log 的位置數（k）不一致：{sorted(ks)}。請只貼同一次啟動的 log")
    k = ks.pop()
    stats = SpecDecodeStats(
        num_drafts=sum(p.num_drafts for p in parts),
        num_draft_tokens=sum(p.num_draft_tokens for p in parts),
        num_accepted_tokens=sum(p.num_accepted_tokens for p in parts),
        accepted_per_position=tuple(sum(p.accepted_per_position[i] for p in parts) for i in range(k)),
        source="log",
        num_drafts_uncertainty=sum(p.num_drafts_uncertainty for p in parts),
    )
    return stats


def _log_line(line: str, number: int) -> SpecDecodeStats:
    """One log line → counts. The line prints accepted and drafted tokens exactly, but the mean
    acceptance length (2 decimals) and per-position rates (3 decimals) rounded; the number of
    rounds D is the integer that reproduces all of them, with per-position counts summing to the
    accepted tokens."""
    found = {key: rx.search(line) for key, rx in _LOG_FIELDS.items()}
    missing = [key for key, m in found.items() if m is None]
    if missing:
        names = {"mean_length": "Mean acceptance length", "accepted": "Accepted", "drafted": "Drafted",
                 "per_position": "Per-position acceptance rate"}
        raise ValueError(
            f"第 {number} 行 SpecDecoding metrics log 缺少 " + "、".join(names[m] for m in missing)
            + "（舊版 vLLM 的 log 只印比率）。請改貼 /metrics 的內容"
        )
    accepted = int(found["accepted"][1])
    drafted = int(found["drafted"][1])
    if drafted == 0:
        raise ValueError(f"第 {number} 行 SpecDecoding metrics log 的 Drafted 是 0：那段時間沒有投機解碼")
    rates = [float(r) for r in found["per_position"][1].split(",")]
    length = float(found["mean_length"][1])
    if not all(math.isfinite(r) for r in rates + [length]):
        raise ValueError(f"第 {number} 行 SpecDecoding metrics log 含有 nan，無法推回計數")
    k = len(rates)
    low = max(1, math.ceil(drafted / k))
    high = drafted
    if length - 0.005 - 1 > 0:
        high = min(high, math.floor(accepted / (length - 0.005 - 1) + 1e-9))
    low = max(low, math.ceil(accepted / (length + 0.005 - 1) - 1e-9))
    fits = []
    for d in range(low, high + 1):
        counts = _counts_for(rates, d, accepted)
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
    uncertainty = max(d - fits[0][0], fits[-1][0] - d)
    stats = SpecDecodeStats(d, drafted, accepted, tuple(counts), "log", uncertainty)
    _check_consistent(stats, "請確認貼上的是完整的一行 log")
    return stats


def _counts_for(rates: list[float], d: int, accepted: int) -> list[int] | None:
    """Per-position counts for d rounds that print as ``rates`` (3 decimals), sum to
    ``accepted`` and do not grow with position; None if there are none."""
    lo = [max(0, math.ceil((r - 0.0005) * d - 1e-9)) for r in rates]
    hi = [min(d, math.floor((r + 0.0005) * d + 1e-9)) for r in rates]
    if any(a > b for a, b in zip(lo, hi)) or not sum(lo) <= accepted <= sum(hi):
        return None
    counts = [min(max(round(r * d), a), b) for r, a, b in zip(rates, lo, hi)]
    gap = accepted - sum(counts)
    order = range(len(counts)) if gap > 0 else reversed(range(len(counts)))
    for i in order:
        room = (hi[i] - counts[i]) if gap > 0 else (counts[i] - lo[i])
        step = min(abs(gap), room)
        counts[i] += step if gap > 0 else -step
        gap += -step if gap > 0 else step
    if any(b > a for a, b in zip(counts, counts[1:])):
        return None
    return counts


# ---------------------------------------------------------------------------------------------
# α, conditional rates, the i.i.d. check and a recommended k
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlphaEstimate:
    """What the counters say about acceptance, and the k they recommend.

    ``conditional_rates[i]`` is P(position i+1 accepted | positions 1..i accepted) = count[i] ÷
    count[i−1] (count[−1] = drafts); ``trials[i]`` is that denominator. Acceptance "looks i.i.d."
    when the rates agree within their binomial standard errors: Pearson's χ² of the counts
    against one pooled rate, K−1 degrees of freedom, p ≥ ``significance``.
    """

    alpha: float  # the position-1 acceptance rate
    alpha_se: float  # its binomial standard error
    conditional_rates: np.ndarray
    conditional_se: np.ndarray
    trials: np.ndarray
    pooled_alpha: float  # all accepted ÷ all trials: α's best estimate if acceptance is i.i.d.
    chi2: float
    dof: int
    p_value: float
    looks_iid: bool
    full_length_drafts: bool
    mean_acceptance_length: float  # measured E
    iid_expected_tokens: float  # Eq. 1 at α and the measured k
    draft_acceptance_rate: float  # vLLM's number, (E−1)/k
    k_measured: int
    draft_cost: float | None
    method: str | None  # "iid" (Eq. 1, k up to k_max) or "positional" (measured rates, k ≤ k_measured)
    recommended_k: int | None
    knee_k: int | None
    expected_speedup: float | None  # at recommended_k
    k_max: int = 20  # the largest k the i.i.d. recommendation considers

    def speedups(self) -> tuple[np.ndarray, np.ndarray]:
        """(ks, speedup at each k) with the method used for the recommendation."""
        if self.draft_cost is None:
            raise ValueError("draft_cost 沒有給：estimate_alpha(stats, draft_cost=…) 才能算加速比")
        return _speedup_curve(self)

    def __str__(self) -> str:
        k = self.k_measured
        rates = "、".join(f"{r:.3f}" for r in self.conditional_rates)
        lines = [
            f"α（第 1 個位置的接受率）= {self.alpha:.3f} ± {self.alpha_se:.3f}",
            f"各位置的條件接受率（前面都中的前提下）：{rates}",
            f"i.i.d. 檢定：χ² = {self.chi2:.2f}，自由度 {self.dof}，p = {self.p_value:.3g} → "
            + ("看起來每個位置一樣（可用公式 1）" if self.looks_iid else "各位置明顯不同（改用位置相依公式）"),
            f"實測平均每輪產出 E = {self.mean_acceptance_length:.3f}；公式 1 在 α、k = {k} 下給 {self.iid_expected_tokens:.3f}",
            f"vLLM 印的 draft acceptance rate = {self.draft_acceptance_rate:.3f} = (E − 1)/k，不是 α",
        ]
        if not self.full_length_drafts:
            lines.append("注意：有些輪的草稿不滿 k 個（ngram 常見），後面位置的條件接受率因此偏低，是下限")
        if self.recommended_k is not None:
            lines.append(
                f"草稿成本 {self.draft_cost:g} 下建議 k = {self.recommended_k}（加速 {self.expected_speedup:.2f}×，"
                f"{'公式 1' if self.method == 'iid' else '實測各位置接受率'}）；曲線在 k = {self.knee_k} 已達最高點的 95%"
            )
        return "\n".join(lines)


def estimate_alpha(stats: SpecDecodeStats, draft_cost=None, k_max=20, significance=0.01) -> AlphaEstimate:
    """α from the position-1 rate, conditional rates, an i.i.d. check, and a recommended k.

    ``draft_cost`` is one draft step's cost relative to one target step (measured with
    ``estimate_draft_cost`` or given; ngram is ≈ 0). When acceptance looks i.i.d., k is chosen
    with Eq. 1 over 1..``k_max``; otherwise with the measured conditional rates, which only
    reach k_measured — to try larger k, run vLLM with a larger ``num_speculative_tokens``.
    """
    if not isinstance(stats, SpecDecodeStats):
        raise ValueError(f"stats 必須是 parse_metrics() 的結果（SpecDecodeStats），收到 {type(stats).__name__}")
    k = stats.num_speculative_tokens
    if k == 0:
        raise ValueError(
            "stats 沒有各位置的計數（vllm:spec_decode_num_accepted_tokens_per_pos）："
            "沒有第 1 個位置的接受率就估不出 α。請貼完整的 /metrics"
        )
    k_max = check.scalar_int("k_max", k_max, minimum=1, maximum=10_000)
    if not (0 < significance < 1):
        raise ValueError(f"significance 必須介於 0 與 1 之間，有效範圍 (0, 1)；收到 {significance!r}")
    counts = np.asarray(stats.accepted_per_position, dtype=float)
    trials = np.concatenate([[stats.num_drafts], counts[:-1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.where(trials > 0, counts / trials, np.nan)
        se = np.sqrt(rates * (1 - rates) / trials)
    alpha = float(rates[0])
    used = trials > 0
    pooled = float(counts[used].sum() / trials[used].sum())
    dof = int(used.sum()) - 1
    if dof >= 1 and 0 < pooled < 1:
        t = trials[used]
        chi2 = float(((counts[used] - t * pooled) ** 2 / (t * pooled * (1 - pooled))).sum())
        p = chi2_sf(chi2, dof)
    else:
        chi2, p = 0.0, 1.0
    looks_iid = p >= significance
    estimate = dict(
        alpha=alpha, alpha_se=float(se[0]), conditional_rates=rates, conditional_se=se, trials=trials,
        pooled_alpha=pooled, chi2=chi2, dof=max(dof, 0), p_value=p, looks_iid=looks_iid,
        full_length_drafts=stats.full_length_drafts,
        mean_acceptance_length=stats.mean_acceptance_length,
        iid_expected_tokens=float(expected_tokens(alpha, k)),
        draft_acceptance_rate=stats.draft_acceptance_rate, k_measured=k,
        draft_cost=None, method=None, recommended_k=None, knee_k=None, expected_speedup=None,
        k_max=k_max,
    )
    if draft_cost is None:
        return AlphaEstimate(**estimate)
    check.scalar("draft_cost", draft_cost)
    cost = float(check.nonnegative("draft_cost", draft_cost))
    estimate.update(draft_cost=cost, method="iid" if looks_iid else "positional")
    if looks_iid:
        kk = int(best_k(alpha, cost, k_max))
        estimate.update(recommended_k=kk, knee_k=int(knee_k(alpha, cost, 0.95, k_max)),
                        expected_speedup=float(speedup(alpha, kk, cost)))
    else:
        ks, s = _positional_speedups(rates, cost)
        best = int(np.argmax(s))
        knee = int(np.argmax(s >= 0.95 * s[best]))
        estimate.update(recommended_k=int(ks[best]), knee_k=int(ks[knee]), expected_speedup=float(s[best]))
    return AlphaEstimate(**estimate)


def _positional_speedups(rates: np.ndarray, cost: float) -> tuple[np.ndarray, np.ndarray]:
    rates = np.nan_to_num(rates, nan=0.0)
    ks = np.arange(1, rates.size + 1)
    e = np.array([expected_tokens_positional(rates[:k]) for k in ks])
    return ks, e / (1.0 + ks * cost)


def _speedup_curve(est: AlphaEstimate) -> tuple[np.ndarray, np.ndarray]:
    if est.method == "positional":
        return _positional_speedups(est.conditional_rates, est.draft_cost)
    ks = np.arange(1, est.k_max + 1)
    return ks, np.asarray(speedup(est.alpha, ks, est.draft_cost))


# ---------------------------------------------------------------------------------------------
# vllm bench serve --save-result → an on/off sweep → your crossover
# ---------------------------------------------------------------------------------------------


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
    """Read ``vllm bench serve --save-result`` results.

    Each source is a path to a result file (one JSON object, or several appended with
    ``--append-result``), a JSON text, or an already-loaded dict. Lists of sources are flattened.
    """
    runs: list[BenchRun] = []
    flat = []
    for s in sources:
        flat.extend(s if isinstance(s, (list, tuple)) else [s])
    if not flat:
        raise ValueError("read_bench_results 需要至少一個結果檔（路徑、JSON 文字或 dict）")
    for s in flat:
        for obj, where in _json_objects(s):
            runs.append(_bench_run(obj, where))
    return runs


def _json_objects(source):
    if isinstance(source, dict):
        yield source, "dict"
        return
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"找不到結果檔 {str(source)!r}（預期 vllm bench serve --save-result 寫出的 .json）")
        text, where = path.read_text(encoding="utf-8"), path.name
    elif isinstance(source, str):
        text, where = source, "JSON 文字"
    else:
        raise ValueError(f"結果必須是檔案路徑、JSON 文字或 dict，收到 {type(source).__name__}")
    decoder, pos, n = json.JSONDecoder(), 0, 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where} 不是完整的 JSON（第 {e.lineno} 行第 {e.colno} 欄：{e.msg}）：檔案是否被截斷？") from None
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
    spec_keys = [key for key in obj if key.startswith("spec_decode_")]
    spec = {}
    if spec_keys:
        for key in ("spec_decode_acceptance_rate", "spec_decode_acceptance_length"):
            if key not in obj:
                raise ValueError(f"{where} 有 spec_decode_* 欄位但缺少 {key}：檔案不完整")
        percent = _number(obj, "spec_decode_acceptance_rate", where)
        if percent > 100:
            raise ValueError(f"{where} 的 spec_decode_acceptance_rate 是百分比，必須 ≤ 100，收到 {percent!r}")
        spec["spec_decode_acceptance_rate"] = percent / 100.0
        length = _number(obj, "spec_decode_acceptance_length", where)
        if length < 1:
            raise ValueError(f"{where} 的 spec_decode_acceptance_length 必須 ≥ 1（含修正／獎勵 token），收到 {length!r}")
        spec["spec_decode_acceptance_length"] = length
        for key in ("spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens"):
            if key in obj:
                spec[key] = _number(obj, key, where, integer=True)
        rates = obj.get("spec_decode_per_position_acceptance_rates", [])
        if not isinstance(rates, list) or not all(
            isinstance(r, (int, float)) and not isinstance(r, bool) and 0 <= r <= 1 for r in rates
        ):
            raise ValueError(f"{where} 的 spec_decode_per_position_acceptance_rates 必須是 0 到 1 之間的數字清單")
        spec["spec_decode_per_position_acceptance_rates"] = tuple(float(r) for r in rates)
        drafts, drafted, accepted = (spec.get(k) for k in (
            "spec_decode_num_drafts", "spec_decode_draft_tokens", "spec_decode_accepted_tokens"))
        if drafted and accepted is not None and abs(accepted / drafted - spec["spec_decode_acceptance_rate"]) > 1e-6:
            raise ValueError(
                f"{where} 的 spec_decode_acceptance_rate（{percent}%）和 accepted ÷ draft tokens"
                f"（{accepted}/{drafted}）對不上：這個欄位應是百分比，檔案是否被改過？"
            )
        if drafts and accepted is not None and abs(1 + accepted / drafts - length) > 1e-6:
            raise ValueError(
                f"{where} 的 spec_decode_acceptance_length（{length}）和 1 + accepted ÷ drafts 對不上：檔案是否被改過？"
            )
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


@dataclass(frozen=True)
class BenchSweep:
    """On/off results at the concurrencies measured both ways, in increasing order."""

    concurrency: np.ndarray
    throughput_on: np.ndarray  # output tokens/s, all users
    throughput_off: np.ndarray
    tpot_on_ms: np.ndarray  # mean TPOT: per-user time per token
    tpot_off_ms: np.ndarray
    ttft_on_ms: np.ndarray
    ttft_off_ms: np.ndarray

    @property
    def throughput_ratio(self) -> np.ndarray:
        """on ÷ off total throughput; above 1, speculation adds capacity."""
        return self.throughput_on / self.throughput_off

    @property
    def per_user_ratio(self) -> np.ndarray:
        """on ÷ off per-user speed (TPOT_off ÷ TPOT_on); above 1, each user gets tokens faster."""
        return self.tpot_off_ms / self.tpot_on_ms


def bench_sweep(on=None, off=None, runs=None) -> BenchSweep:
    """Pair speculation-on and -off results by ``max_concurrency``.

    Pass ``on`` and ``off`` (lists of ``BenchRun`` or anything ``read_bench_results`` reads), or
    ``runs`` alone: then a run counts as "on" when its file has ``spec_decode_*`` fields (vLLM
    writes them only when the server drafted during the run).
    """
    if runs is not None:
        if on is not None or off is not None:
            raise ValueError("bench_sweep：runs 和 on/off 二選一")
        runs = _as_runs(runs)
        on = [r for r in runs if r.speculative]
        off = [r for r in runs if not r.speculative]
    elif on is None or off is None:
        raise ValueError("bench_sweep 需要 on= 和 off= 兩組結果，或 runs= 一組（依 spec_decode_* 欄位分開）")
    else:
        on, off = _as_runs(on), _as_runs(off)
    on_by, off_by = _by_concurrency(on, "on"), _by_concurrency(off, "off")
    if not on_by or not off_by:
        raise ValueError(
            f"需要投機解碼開（{len(on)} 筆）與關（{len(off)} 筆）兩組結果：結果檔裡有 spec_decode_* 欄位的算「開」"
        )
    common = sorted(set(on_by) & set(off_by))
    if len(common) < 2:
        raise ValueError(
            f"開與關需要在至少兩個相同的 max_concurrency 各量一次，現在開：{sorted(on_by)}，關：{sorted(off_by)}"
        )
    pick = lambda table, attr: np.array([getattr(table[n], attr) for n in common], dtype=float)  # noqa: E731
    return BenchSweep(
        concurrency=np.array(common, dtype=float),
        throughput_on=pick(on_by, "output_throughput"),
        throughput_off=pick(off_by, "output_throughput"),
        tpot_on_ms=pick(on_by, "mean_tpot_ms"),
        tpot_off_ms=pick(off_by, "mean_tpot_ms"),
        ttft_on_ms=pick(on_by, "mean_ttft_ms"),
        ttft_off_ms=pick(off_by, "mean_ttft_ms"),
    )


def _as_runs(items) -> list[BenchRun]:
    items = list(items) if isinstance(items, (list, tuple)) else [items]
    if all(isinstance(r, BenchRun) for r in items):
        return items
    return read_bench_results(*[r for r in items if not isinstance(r, BenchRun)]) + [
        r for r in items if isinstance(r, BenchRun)
    ]


def _by_concurrency(runs: list[BenchRun], side: str) -> dict[int, BenchRun]:
    table: dict[int, BenchRun] = {}
    for r in runs:
        if r.max_concurrency in table:
            raise ValueError(
                f"「{side}」有兩筆 max_concurrency = {r.max_concurrency} 的結果（{table[r.max_concurrency].source} 與 "
                f"{r.source}）：每個併發數只留一筆"
            )
        table[r.max_concurrency] = r
    return table


def measured_crossover(sweep: BenchSweep, metric: str = "throughput") -> float:
    """The concurrency where speculation stops paying, interpolated between measured points.

    ``metric="throughput"``: where on ÷ off total throughput falls through 1 (above it,
    speculation lowers the server's capacity). ``metric="per_user"``: the same for per-user speed.
    The ratio is interpolated linearly in log₂(concurrency), since sweeps double it (1, 2, 4, …).
    Returns 0.0 when speculation is already behind at the lowest concurrency measured and
    ``inf`` when it is still ahead at the highest (extend the sweep to find the crossover).
    """
    if metric not in ("throughput", "per_user"):
        raise ValueError(f"metric 必須是 'throughput' 或 'per_user'，收到 {metric!r}")
    ratio = sweep.throughput_ratio if metric == "throughput" else sweep.per_user_ratio
    n = sweep.concurrency
    if ratio[0] < 1.0:
        return 0.0
    below = np.flatnonzero(ratio < 1.0)
    if below.size == 0:
        return math.inf
    j = int(below[0])
    x0, x1 = math.log2(n[j - 1]), math.log2(n[j])
    y0, y1 = ratio[j - 1] - 1.0, ratio[j] - 1.0
    return float(2.0 ** (x0 + (x1 - x0) * y0 / (y0 - y1)))


def estimate_draft_cost(on: BenchRun, off: BenchRun, k: int | None = None) -> float:
    """A draft step's cost relative to a target step, from one on/off pair at low concurrency.

    At concurrency 1 a plain step takes T per token, and a speculative round k·c·T + T for
    E tokens, so TPOT_on ÷ TPOT_off = (1 + k·c) ÷ E, i.e. c = (E · TPOT_on ÷ TPOT_off − 1) ÷ k,
    with E = ``spec_decode_acceptance_length`` of the on run. The result lumps the extra cost of
    verifying k+1 positions into c, which is what ``speedup`` needs.
    """
    if not (isinstance(on, BenchRun) and isinstance(off, BenchRun)):
        raise ValueError("on 與 off 必須是 read_bench_results() 讀出的 BenchRun")
    if not on.speculative or on.spec_decode_acceptance_length is None:
        raise ValueError(f"on（{on.source}）沒有 spec_decode_* 欄位：它不是投機解碼開著跑的結果")
    if off.speculative:
        raise ValueError(f"off（{off.source}）有 spec_decode_* 欄位：它是投機解碼開著跑的結果")
    if on.max_concurrency != off.max_concurrency:
        raise ValueError(
            f"on 與 off 的 max_concurrency 必須相同（{on.max_concurrency} ≠ {off.max_concurrency}），最好都是 1"
        )
    if k is None:
        k = len(on.spec_decode_per_position_acceptance_rates)
        if k == 0:
            raise ValueError("結果檔沒有各位置接受率，無法得知 k：請傳入 k=（你的 num_speculative_tokens）")
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k 必須是正整數（num_speculative_tokens），有效範圍 ≥ 1；收到 {k!r}")
    e = on.spec_decode_acceptance_length
    c = (e * on.mean_tpot_ms / off.mean_tpot_ms - 1.0) / int(k)
    if c < 0:
        raise ValueError(
            f"量到的 TPOT 比（開 {on.mean_tpot_ms:.2f} ms／關 {off.mean_tpot_ms:.2f} ms）比每輪產出 E = {e:.2f} "
            "所允許的還快，推出負的草稿成本：量測雜訊太大，請用更多請求（--num-prompts）重跑"
        )
    return float(c)
