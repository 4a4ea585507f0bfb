"""specdec_lab: the numbers behind the speculative decoding course.

Pure numpy; the same code runs in CPython, in CI and in the browser (Pyodide). Plots live in
``specdec_lab.plotting`` (needs matplotlib); everything else needs numpy only.
"""
from .closed_form import best_k, expected_tokens, expected_tokens_positional, knee_k, speedup
from .multi_draft import multi_draft_acceptance
from .monte_carlo import MonteCarloCheck, monte_carlo_check, simulate_rounds, token_distribution
from .positional import expected_tokens_tree
from .serving import DEFAULT_T_FLOP, ServingCurves, crossover_concurrency, serving_curves
from .trees import tree_attention_mask
from .verification import RoundResult, VerifyStep, verify_greedy, verify_sampling

__version__ = "0.1.0"

__all__ = [
    "expected_tokens",
    "speedup",
    "best_k",
    "knee_k",
    "expected_tokens_positional",
    "simulate_rounds",
    "monte_carlo_check",
    "MonteCarloCheck",
    "token_distribution",
    "serving_curves",
    "ServingCurves",
    "crossover_concurrency",
    "DEFAULT_T_FLOP",
    "verify_greedy",
    "verify_sampling",
    "RoundResult",
    "VerifyStep",
    "expected_tokens_tree",
    "tree_attention_mask",
    "multi_draft_acceptance",
]
