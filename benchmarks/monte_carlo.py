"""30,000 simulated rounds: specdec_lab's vectorised simulate_rounds vs plain Python loops.

Two loops, both the natural one-round-at-a-time program (flip a coin per draft token until the
first miss): one with the standard library's ``random`` (the fastest pure Python there is), one
with the same ``numpy.random.Generator`` the package uses. Everything runs in this one process,
interleaved, and the ratios of the medians are printed (the machines are shared and noisy, so
compare ratios, not seconds). Goal: ≥ 50×.

    .venv/bin/python benchmarks/monte_carlo.py [--repeats 7]
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

from specdec_lab import expected_tokens, simulate_rounds
from specdec_lab.tables import Table


def python_loop(alpha: float, k: int, rounds: int, seed: int, numpy_rng: bool = False) -> list[int]:
    """The same experiment one round and one draft token at a time."""
    rng = np.random.default_rng(seed) if numpy_rng else random.Random(seed)
    out = []
    for _ in range(rounds):
        tokens = 1
        for _ in range(k):
            if rng.random() >= alpha:
                break
            tokens += 1
        out.append(tokens)
    return out


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=30_000)
    args = parser.parse_args()
    print(f"{args.rounds:,} 輪，每組重複 {args.repeats} 次取中位數")
    rows = []
    worst = {"random": float("inf"), "Generator": float("inf")}
    for alpha, k in [(0.6, 5), (0.8, 5), (0.9, 16)]:
        times = {"vec": [], "random": [], "Generator": []}
        for r in range(args.repeats):  # interleaved, so drifts in machine load hit all three
            times["vec"].append(timed(lambda: simulate_rounds(alpha, k, args.rounds, seed=r)))
            times["random"].append(timed(lambda: python_loop(alpha, k, args.rounds, r)))
            times["Generator"].append(
                timed(lambda: python_loop(alpha, k, args.rounds, r, numpy_rng=True))
            )
        med = {name: statistics.median(t) for name, t in times.items()}
        ratio = {name: med[name] / med["vec"] for name in worst}
        for name in worst:
            worst[name] = min(worst[name], ratio[name])
        mean = simulate_rounds(alpha, k, args.rounds, seed=0).mean()
        rows.append((f"{alpha}", f"{k}", f"{med['vec'] * 1e3:.2f}", f"{med['random'] * 1e3:.1f}",
                     f"{ratio['random']:.0f}×", f"{med['Generator'] * 1e3:.1f}",
                     f"{ratio['Generator']:.0f}×", f"{mean:.3f}/{expected_tokens(alpha, k):.3f}"))
    # (aligned by display width: a Chinese header takes two columns)
    print(Table(("α", "K", "向量化 ms", "random 迴圈 ms", "倍數", "Generator 迴圈 ms", "倍數", "平均/閉式解"),
                tuple(rows), align=">>>>>>><"))
    for name, ratio in worst.items():
        verdict = "達標" if ratio >= 50 else "未達標"
        print(f"對 {name} 迴圈的最小倍數 {ratio:.0f}×（目標 ≥ 50×）：{verdict}")


if __name__ == "__main__":
    main()
