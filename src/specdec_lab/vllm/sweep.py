"""An on/off sweep over ``--max-concurrency`` → your measured crossover and your draft cost.

``bench_sweep`` pairs speculation-on and -off runs by concurrency, ``measured_crossover`` finds
where speculation stops adding throughput, ``max_num_seqs_advice`` turns that into a
``--max-num-seqs`` to run with speculation on, and ``estimate_draft_cost`` turns the pair at
concurrency 1 (``on_off_pair``) into the draft cost ``speedup`` and ``estimate_alpha`` need.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import _validate as check
from .bench import BenchRun, read_bench_results


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

    def pick(table: dict[int, BenchRun], attr: str) -> np.ndarray:
        return np.array([getattr(table[n], attr) for n in common], dtype=float)

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
    """BenchRuns as they are; anything else through ``read_bench_results``, order kept."""
    items = list(items) if isinstance(items, (list, tuple)) else [items]
    return [run for item in items
            for run in ([item] if isinstance(item, BenchRun) else read_bench_results(item))]


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


# on ÷ off throughput this close to 1 is break-even: the advice names the next lower concurrency too
BREAK_EVEN_MARGIN = 0.05


@dataclass(frozen=True)
class MaxNumSeqsAdvice:
    """``--max-num-seqs`` with speculation on: the highest concurrency measured below the crossover.

    ``value`` is None when speculation already loses at the lowest concurrency measured;
    ``beyond_sweep`` when it still wins at the highest (the crossover lies further up). When the
    gain at ``value`` is within ``BREAK_EVEN_MARGIN`` of break-even, ``with_margin`` is the next
    lower concurrency measured (and ``margin_ratio`` its on ÷ off throughput).
    """

    value: int | None
    ratio: float | None
    with_margin: int | None = None
    margin_ratio: float | None = None
    beyond_sweep: bool = False

    def __str__(self) -> str:
        if self.value is None:
            return "量到的最低併發就已經不划算：建議關掉投機解碼"
        text = f"開著投機解碼時，--max-num-seqs 可設為 {self.value}（那裡總產能開 ÷ 關 = {self.ratio:.2f}×"
        if self.beyond_sweep:
            return text + "；量到的最高併發還在賺，交叉點更高，再往上量才知道上限）"
        if self.with_margin is not None:
            return (text + "，幾乎就在交叉點上；想留點餘裕，取再低一格的 "
                    f"{self.with_margin}，那裡是 {self.margin_ratio:.2f}×）")
        return text + "）"


def max_num_seqs_advice(sweep: BenchSweep) -> MaxNumSeqsAdvice:
    """The highest concurrency measured at or below ``measured_crossover(sweep)``, with the margin
    it leaves (see ``MaxNumSeqsAdvice``). Prints as one line of advice."""
    if not isinstance(sweep, BenchSweep):
        raise ValueError("max_num_seqs_advice 需要 bench_sweep() 的結果")
    n_star = measured_crossover(sweep)
    if n_star == 0.0:
        return MaxNumSeqsAdvice(None, None)
    ratio, n = sweep.throughput_ratio, sweep.concurrency
    top = int(np.flatnonzero(n <= n_star)[-1])
    beyond = math.isinf(n_star)
    advice = dict(value=int(n[top]), ratio=float(ratio[top]), beyond_sweep=beyond)
    if not beyond and ratio[top] < 1.0 + BREAK_EVEN_MARGIN and top > 0:
        advice.update(with_margin=int(n[top - 1]), margin_ratio=float(ratio[top - 1]))
    return MaxNumSeqsAdvice(**advice)


def on_off_pair(runs, concurrency: int = 1) -> tuple[BenchRun, BenchRun]:
    """The speculation-on and -off results measured at ``concurrency`` (for ``estimate_draft_cost``),
    from the runs ``bench_sweep(runs=…)`` takes; a clear error when either is missing."""
    concurrency = check.scalar_int("concurrency", concurrency, minimum=1)
    runs = _as_runs(runs)
    pair = []
    for side, speculative in (("開", True), ("關", False)):
        found = [r for r in runs if r.speculative == speculative and r.max_concurrency == concurrency]
        if not found:
            measured = sorted({r.max_concurrency for r in runs if r.speculative == speculative})
            raise ValueError(
                f"結果檔裡沒有投機解碼{side}、max_concurrency = {concurrency} 的結果（{side}的有：{measured}）："
                f"用 vllm bench serve --max-concurrency {concurrency} 開、關各跑一次"
            )
        pair.append(found[0])
    return pair[0], pair[1]


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
    k = check.scalar_int("k", k, minimum=1)
    e = on.spec_decode_acceptance_length
    c = (e * on.mean_tpot_ms / off.mean_tpot_ms - 1.0) / k
    if c < 0:
        raise ValueError(
            f"量到的 TPOT 比（開 {on.mean_tpot_ms:.2f} ms／關 {off.mean_tpot_ms:.2f} ms）比每輪產出 E = {e:.2f} "
            "所允許的還快，推出負的草稿成本：量測雜訊太大，請用更多請求（--num-prompts）重跑"
        )
    return float(c)
