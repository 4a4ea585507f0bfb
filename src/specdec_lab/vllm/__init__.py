"""Your own vLLM numbers → α, per-position acceptance, a recommended k, and your crossover.

Two entry points, one per kind of input, each handing the text to one small parser per format:

* ``parse_metrics(text)`` — anything that carries speculative decoding counts → one
  ``SpecDecodeStats`` (``stats``): a ``/metrics`` scrape or a Prometheus web UI table
  (``prometheus``), V1 log lines ``SpecDecoding metrics: …`` (``log_line``), V0 log lines
  ``Speculative metrics: … System efficiency …`` (``log_v0``), the ``Speculative Decoding``
  section of ``vllm bench serve`` (printed, ``bench_text``, or its JSON, ``bench``), the
  per-request ``metrics.speculative_decoding`` object (``request_json``), and the totals the
  offline example ``examples/offline_inference/spec_decode.py`` prints (``offline_example``);
* ``read_bench_results(...)`` — ``vllm bench serve`` results (``--save-result`` JSON or the
  printed block) → ``BenchRun`` for ``bench_sweep``, ``measured_crossover``,
  ``max_num_seqs_advice``, ``on_off_pair`` and ``estimate_draft_cost`` (``sweep``).

``estimate_alpha(stats)`` (``alpha``) then gives α, the conditional acceptance at each position,
whether acceptance looks i.i.d., and a recommended k. ``inputs`` decides text vs file path.

What each vLLM release prints (checked against vLLM's source, 2026-12: ``vllm/v1/spec_decode/
metrics.py``, ``vllm/v1/metrics/loggers.py``, ``vllm/benchmarks/serve.py``, ``vllm/spec_decode/
metrics.py`` of V0, and the docs page on per-request acceptance metrics):

* V0 engine (removed in 0.11): cumulative log lines with k, accepted, draft and emitted tokens — read
  (last line; accepted prefix = emitted − draft ÷ k), no per-position counts;
* V1 0.8.2–0.8.4 (PRs #15151, #15902): log lines with only accepted and drafted tokens —
  refused, nothing to count rounds with; /metrics had no ``num_drafts`` yet;
* V1 0.8.5+ (PR #16665): ``num_drafts`` and ``num_accepted_tokens_per_pos`` counters; log lines with the mean
  acceptance length and per-position rates — read (rounds recovered from the rounding);
* from early 2026 (PR #31739): ``vllm bench serve`` prints a ``Speculative Decoding`` section and saves
  ``spec_decode_*`` keys — read;
* after 0.28.0 (PR #48915, experimental): ``--per-request-spec-decode-metrics`` adds an acceptance histogram to each response —
  read, exact per-position counts.

Why vLLM's "draft acceptance rate" is not α: it is accepted ÷ drafted tokens. With i.i.d.
acceptance α and k draft tokens per round a round accepts E − 1 = α + α² + … + α^k tokens on
average, so that rate is (E − 1)/k — for α = 0.8 and k = 5, 0.54, not 0.8. α is the rate at
position 1: ``per_position_acceptance[0]``.

``examples`` holds inputs in these formats for the notebook: one real log line (with its
source) and simulated ones.
"""
from .alpha import AlphaEstimate, alpha_from_length, estimate_alpha
from .bench import BenchRun, read_bench_results
from .metrics import COUNTERS, parse_metrics
from .stats import SpecDecodeStats
from .sweep import (BenchSweep, MaxNumSeqsAdvice, bench_sweep, estimate_draft_cost, max_num_seqs_advice,
                    measured_crossover, on_off_pair)

__all__ = [
    "SpecDecodeStats",
    "parse_metrics",
    "AlphaEstimate",
    "estimate_alpha",
    "alpha_from_length",
    "BenchRun",
    "read_bench_results",
    "BenchSweep",
    "bench_sweep",
    "measured_crossover",
    "MaxNumSeqsAdvice",
    "max_num_seqs_advice",
    "on_off_pair",
    "estimate_draft_cost",
]
