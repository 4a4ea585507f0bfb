"""Example inputs for the "your GPU" notebook, so it runs before you have numbers of your own.

``EXAMPLE_REAL_LOG`` is real: two log lines someone posted, copied as posted (its source is
``EXAMPLE_REAL_LOG_SOURCE``; tests/fixtures/vllm/real holds the same text). The other vLLM texts
are in vLLM's formats but synthetic (simulated with tests/fixtures/vllm/make_fixtures.py, no GPU
involved): replace them with your server's /metrics text and your own ``vllm bench serve
--save-result`` files. The acceptance profiles at the end are made up to illustrate a shape, not
measured.
"""

EXAMPLE_METRICS = """\
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 0.0
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="Qwen/Qwen3-8B"} 24000.0
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 72000.0
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 38080.0
# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="Qwen/Qwen3-8B",position="0"} 18786.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="Qwen/Qwen3-8B",position="1"} 12446.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="Qwen/Qwen3-8B",position="2"} 6848.0
"""
"""Part of a /metrics scrape: the speculative decoding counters of one engine, k = 3."""

EXAMPLE_LOG_LINE = (
    '(APIServer pid=48211) INFO 11-30 10:42:00 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.55, Accepted throughput: 621.90 tokens/s, Drafted throughput: 1200.00 tokens/s, Accepted: 6219 tokens, Drafted: 12000 tokens, Per-position acceptance rate: 0.775, 0.507, 0.273, Avg Draft acceptance rate: 51.8%'
)
"""One "SpecDecoding metrics:" line from the server log (one 10-second interval)."""

EXAMPLE_BENCH_RESULTS = [
    {'label': 'spec-off', 'max_concurrency': 1, 'completed': 64, 'failed': 0, 'output_throughput': 83.5, 'mean_ttft_ms': 54.746, 'mean_tpot_ms': 11.808},
    {'label': 'spec-off', 'max_concurrency': 2, 'completed': 64, 'failed': 0, 'output_throughput': 178.549, 'mean_ttft_ms': 51.531, 'mean_tpot_ms': 11.043},
    {'label': 'spec-off', 'max_concurrency': 4, 'completed': 64, 'failed': 0, 'output_throughput': 356.063, 'mean_ttft_ms': 66.775, 'mean_tpot_ms': 11.016},
    {'label': 'spec-off', 'max_concurrency': 8, 'completed': 64, 'failed': 0, 'output_throughput': 758.211, 'mean_ttft_ms': 78.138, 'mean_tpot_ms': 10.286},
    {'label': 'spec-off', 'max_concurrency': 16, 'completed': 128, 'failed': 0, 'output_throughput': 1441.571, 'mean_ttft_ms': 100.243, 'mean_tpot_ms': 10.749},
    {'label': 'spec-off', 'max_concurrency': 32, 'completed': 256, 'failed': 0, 'output_throughput': 2756.198, 'mean_ttft_ms': 167.981, 'mean_tpot_ms': 10.997},
    {'label': 'spec-off', 'max_concurrency': 64, 'completed': 512, 'failed': 0, 'output_throughput': 4331.974, 'mean_ttft_ms': 285.967, 'mean_tpot_ms': 13.71},
    {'label': 'spec-off', 'max_concurrency': 128, 'completed': 1024, 'failed': 0, 'output_throughput': 4383.835, 'mean_ttft_ms': 562.811, 'mean_tpot_ms': 27.106},
    {'label': 'spec-on', 'max_concurrency': 1, 'completed': 64, 'failed': 0, 'output_throughput': 189.735, 'mean_ttft_ms': 43.21, 'mean_tpot_ms': 5.122, 'spec_decode_acceptance_rate': 58.19840872419741, 'spec_decode_acceptance_length': 2.745952261725922, 'spec_decode_num_drafts': 5991, 'spec_decode_draft_tokens': 17973, 'spec_decode_accepted_tokens': 10460, 'spec_decode_per_position_acceptance_rates': [0.7539642797529628, 0.5673510265398097, 0.4246369554331497]},
    {'label': 'spec-on', 'max_concurrency': 2, 'completed': 64, 'failed': 0, 'output_throughput': 375.977, 'mean_ttft_ms': 55.065, 'mean_tpot_ms': 5.124, 'spec_decode_acceptance_rate': 59.07194124520113, 'spec_decode_acceptance_length': 2.772158237356034, 'spec_decode_num_drafts': 5991, 'spec_decode_draft_tokens': 17973, 'spec_decode_accepted_tokens': 10617, 'spec_decode_per_position_acceptance_rates': [0.7629778000333834, 0.5788683024536805, 0.43031213486897013]},
    {'label': 'spec-on', 'max_concurrency': 4, 'completed': 64, 'failed': 0, 'output_throughput': 799.511, 'mean_ttft_ms': 60.831, 'mean_tpot_ms': 4.784, 'spec_decode_acceptance_rate': 57.34713180882435, 'spec_decode_acceptance_length': 2.7204139542647305, 'spec_decode_num_drafts': 5991, 'spec_decode_draft_tokens': 17973, 'spec_decode_accepted_tokens': 10307, 'spec_decode_per_position_acceptance_rates': [0.742280086796862, 0.5551660824570188, 0.4229677850108496]},
    {'label': 'spec-on', 'max_concurrency': 8, 'completed': 64, 'failed': 0, 'output_throughput': 1612.57, 'mean_ttft_ms': 72.896, 'mean_tpot_ms': 4.695, 'spec_decode_acceptance_rate': 57.57525176653869, 'spec_decode_acceptance_length': 2.7272575529961607, 'spec_decode_num_drafts': 5991, 'spec_decode_draft_tokens': 17973, 'spec_decode_accepted_tokens': 10348, 'spec_decode_per_position_acceptance_rates': [0.7506259389083625, 0.5575029210482391, 0.41912869303955935]},
    {'label': 'spec-on', 'max_concurrency': 16, 'completed': 128, 'failed': 0, 'output_throughput': 2545.84, 'mean_ttft_ms': 103.05, 'mean_tpot_ms': 5.905, 'spec_decode_acceptance_rate': 56.80269270355226, 'spec_decode_acceptance_length': 2.7040807811065677, 'spec_decode_num_drafts': 11983, 'spec_decode_draft_tokens': 35949, 'spec_decode_accepted_tokens': 20420, 'spec_decode_per_position_acceptance_rates': [0.7418843361428691, 0.548276725360928, 0.4139197196027706]},
    {'label': 'spec-on', 'max_concurrency': 32, 'completed': 256, 'failed': 0, 'output_throughput': 2761.098, 'mean_ttft_ms': 169.12, 'mean_tpot_ms': 10.972, 'spec_decode_acceptance_rate': 58.362192459075665, 'spec_decode_acceptance_length': 2.7508657737722704, 'spec_decode_num_drafts': 23967, 'spec_decode_draft_tokens': 71901, 'spec_decode_accepted_tokens': 41963, 'spec_decode_per_position_acceptance_rates': [0.753285767930905, 0.569366211874661, 0.4282137939667042]},
    {'label': 'spec-on', 'max_concurrency': 64, 'completed': 512, 'failed': 0, 'output_throughput': 2743.195, 'mean_ttft_ms': 321.338, 'mean_tpot_ms': 22.162, 'spec_decode_acceptance_rate': 57.89279704037496, 'spec_decode_acceptance_length': 2.7367839112112486, 'spec_decode_num_drafts': 47934, 'spec_decode_draft_tokens': 143802, 'spec_decode_accepted_tokens': 83251, 'spec_decode_per_position_acceptance_rates': [0.7500730170651312, 0.563065882254767, 0.4236450118913506]},
    {'label': 'spec-on', 'max_concurrency': 128, 'completed': 1024, 'failed': 0, 'output_throughput': 2812.845, 'mean_ttft_ms': 530.218, 'mean_tpot_ms': 43.605, 'spec_decode_acceptance_rate': 57.76319769685717, 'spec_decode_acceptance_length': 2.7328959309057153, 'spec_decode_num_drafts': 95869, 'spec_decode_draft_tokens': 287607, 'spec_decode_accepted_tokens': 166131, 'spec_decode_per_position_acceptance_rates': [0.7502529493371163, 0.5622672605326018, 0.420375721035997]},
]
"""``vllm bench serve --save-result`` results (the fields the course reads), speculation on and off."""

EXAMPLE_TAIL_COLLAPSE = [0.92, 0.9, 0.88, 0.85, 0.6, 0.3, 0.15, 0.1, 0.08, 0.06, 0.05, 0.05]
"""Conditional acceptance per position of a drafter that writes a whole block at once: sure at
first, collapsing from position 5 on (made up, shaped like what block drafters report)."""

EXAMPLE_TREE_ACCURACY = [
    [0.62, 0.14, 0.06, 0.03],
    [0.55, 0.13, 0.05, 0.03],
    [0.48, 0.12, 0.05, 0.02],
    [0.40, 0.10, 0.04, 0.02],
]
"""``EXAMPLE_TREE_ACCURACY[d][r]``: the chance that the draft's rank-(r+1) candidate for position
d+1 is the target's token, given the path before it is right (made up; Medusa §2.3.3 measures
these per head on a calibration set). For ``specdec_lab.positional``."""

EXAMPLE_REAL_LOG_SOURCE = "https://github.com/noonghunna/club-3090/issues/105"
"""Where ``EXAMPLE_REAL_LOG`` was posted: vLLM 0.20.1, Qwen3.6-27B with its MTP head, k = 6."""

EXAMPLE_REAL_LOG = """\
(APIServer pid=13026) INFO:     127.0.0.1:37582 - "POST /v1/chat/completions HTTP/1.1" 200 OK
(APIServer pid=13026) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 2.5 tokens/s, Avg generation throughput: 74.7 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 7.4%, Prefix cache hit rate: 0.0%
(APIServer pid=13026) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.87, Accepted throughput: 48.90 tokens/s, Drafted throughput: 157.19 tokens/s, Accepted: 489 tokens, Drafted: 1572 tokens, Per-position acceptance rate: 0.740, 0.473, 0.309, 0.187, 0.099, 0.057, Avg Draft acceptance rate: 31.1%
(APIServer pid=13026) INFO 05-08 16:25:19 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 72.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 7.8%, Prefix cache hit rate: 0.0%
(APIServer pid=13026) INFO 05-08 16:25:19 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.72, Accepted throughput: 45.49 tokens/s, Drafted throughput: 158.98 tokens/s, Accepted: 455 tokens, Drafted: 1590 tokens, Per-position acceptance rate: 0.728, 0.445, 0.275, 0.151, 0.075, 0.042, Avg Draft acceptance rate: 28.6%
"""
"""A real paste: a server log with two "SpecDecoding metrics:" lines among the others."""
