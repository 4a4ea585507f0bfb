"""Time the lesson-2 functions a notebook cell calls (tree rounds, the χ² checks, draft sources),
in CPython. Prints figures; asserts nothing (Pyodide is about 2–4× slower).

    .venv/bin/python benchmarks/tree_drafts.py
"""
import time

from specdec_lab.draft_sources import confidence_sweep, draft_sources_table
from specdec_lab.lossless_experiments import corpus_lines
from specdec_lab.ngram_lm import course_models
from specdec_lab.tree_decoding import full_tree, tree_decode
from specdec_lab.tree_experiments import tree_sampling_check, tree_sampling_checks, tree_vs_chain


def timed(label, call):
    start = time.perf_counter()
    call()
    print(f"{label:<58} {time.perf_counter() - start:6.2f} s")


def main():
    start = time.perf_counter()
    target, draft = course_models()
    print(f"{'course_models()':<58} {time.perf_counter() - start:6.2f} s")
    prompts = [line[:5] for line in corpus_lines()]
    timed("tree_decode greedy, full_tree(2, 3), 54 × 200 字", lambda: tree_decode(target, draft, prompts, 200, full_tree(2, 3)))
    for rule in ("with_replacement", "without_replacement"):
        timed(f"tree_decode {rule}, full_tree(2, 3), 54 × 200 字, T 0.6",
              lambda: tree_decode(target, draft, prompts, 200, full_tree(2, 3), rule=rule, temperature=0.6))
    for rule in ("with_replacement", "without_replacement", "wrong_keep_p", "wrong_original_q"):
        timed(f"tree_sampling_check {rule}", lambda: tree_sampling_check(target, draft, rule))
    timed("tree_vs_chain greedy, full_tree(2, 3), 54 × 200 字", lambda: tree_vs_chain(target, draft, prompts, full_tree(2, 3)))
    timed("tree_sampling_checks (all four rules, one table)", lambda: tree_sampling_checks(target, draft))
    timed("draft_sources_table (T 0.6), 54 × 200 字", lambda: draft_sources_table(target, prompts))
    timed("draft_sources_table greedy, 54 × 200 字", lambda: draft_sources_table(target, prompts, temperature=None))
    timed("confidence_sweep (5 thresholds), 54 × 200 字", lambda: confidence_sweep(target, prompts))


if __name__ == "__main__":
    main()
