"""Your own vLLM numbers → α, per-position acceptance, a recommended k, and your crossover.

Three readers, each for a text vLLM itself writes (formats checked against vLLM's source:
``vllm/v1/spec_decode/metrics.py`` and ``vllm/benchmarks/serve.py``), one module each:

* ``metrics`` / ``log_line`` — ``parse_metrics(text)``: a scrape of the server's ``/metrics``
  page (Prometheus text), or the server log's "SpecDecoding metrics:" lines → ``SpecDecodeStats``
  (``stats``);
* ``alpha`` — ``estimate_alpha(stats)``: α, the conditional acceptance at each position, whether
  acceptance looks i.i.d., and a recommended k;
* ``bench`` / ``sweep`` — ``read_bench_results(...)``, ``bench_sweep(...)``,
  ``measured_crossover(...)``, ``estimate_draft_cost(...)``: the JSON files
  ``vllm bench serve --save-result`` writes, from a sweep over ``--max-concurrency`` with
  speculation on and off.

``examples`` holds inputs in these formats (simulated, not measured) for the notebook.

Why vLLM's "draft acceptance rate" is not α: it is accepted ÷ drafted tokens. With i.i.d.
acceptance α and k draft tokens per round a round accepts E − 1 = α + α² + … + α^k tokens on
average, so that rate is (E − 1)/k — for α = 0.8 and k = 5, 0.54, not 0.8. α is the rate at
position 1: ``per_position_acceptance[0]``.
"""
from .alpha import AlphaEstimate, estimate_alpha
from .bench import BenchRun, read_bench_results
from .metrics import COUNTERS, parse_metrics
from .stats import SpecDecodeStats
from .sweep import BenchSweep, bench_sweep, estimate_draft_cost, measured_crossover

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
