"""Input checks shared by the public functions.

Every check raises ``ValueError`` with a Traditional Chinese message that names the parameter as
written in code, the value received and the valid range, so a notebook user who types
``alpha=1.2`` learns exactly what to change.
"""
from __future__ import annotations

import numbers

import numpy as np


def _shown(value) -> str:
    """A short text of the offending value for the message."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return repr(value.item() if isinstance(value, np.generic) else value)
    return f"陣列（形狀 {arr.shape}）"


def _first_bad(value, arr: np.ndarray, bad: np.ndarray) -> str:
    if arr.ndim == 0:
        return _shown(value)
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    original = np.asarray(value)
    shown = original[index] if original.shape == arr.shape else arr[index]
    return f"{shown.item()!r}（位置 {index}）"


def _as_float_array(name: str, value, what: str) -> np.ndarray:
    try:
        raw = np.asarray(value)
        if raw.dtype.kind in "USb":  # text and booleans are not numbers here
            raise TypeError
        arr = raw.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} 必須是{what}，收到 {value!r}（不是數字）") from None
    if arr.size == 0:
        raise ValueError(f"{name} 不可以是空的，必須是{what}")
    return arr


def between(name: str, value, low: float, high: float, *, what: str) -> np.ndarray:
    """A number (or array of them) in the closed interval [low, high]; NaN is refused."""
    span = f"[{low:g}, {high:g}]"
    arr = _as_float_array(name, value, f"{what}，有效範圍 {span}")
    bad = ~((arr >= low) & (arr <= high))  # NaN fails both comparisons
    if bad.any():
        raise ValueError(f"{name} 必須是{what}，有效範圍 {span}；收到 {_first_bad(value, arr, bad)}")
    return arr


def probability(name: str, value, *, what: str = "介於 0 與 1 之間的機率") -> np.ndarray:
    """A probability (or array of them) in [0, 1]."""
    return between(name, value, 0.0, 1.0, what=what)


def nonnegative(name: str, value, *, what: str = "非負的有限數") -> np.ndarray:
    """A finite number (or array) ≥ 0."""
    arr = _as_float_array(name, value, f"{what}，有效範圍 [0, ∞)")
    bad = ~(np.isfinite(arr) & (arr >= 0.0))
    if bad.any():
        raise ValueError(f"{name} 必須是{what}，有效範圍 [0, ∞)；收到 {_first_bad(value, arr, bad)}")
    return arr


def positive(name: str, value, *, what: str = "正的有限數") -> np.ndarray:
    """A finite number (or array) > 0."""
    arr = _as_float_array(name, value, f"{what}，有效範圍 (0, ∞)")
    bad = ~(np.isfinite(arr) & (arr > 0.0))
    if bad.any():
        raise ValueError(f"{name} 必須是{what}，有效範圍 (0, ∞)；收到 {_first_bad(value, arr, bad)}")
    return arr


def integer(name: str, value, *, minimum: int = 0, maximum: int | None = None) -> np.ndarray:
    """An integer (or array of integers) in [minimum, maximum]; 3.0 is accepted, 2.5 is not."""
    span = f"[{minimum}, {maximum}]" if maximum is not None else f"≥ {minimum}"
    what = f"整數，有效範圍 {span}"
    arr = _as_float_array(name, value, what)
    integral = np.isfinite(arr) & (arr == np.round(arr))
    in_range = (arr >= minimum) & ((arr <= maximum) if maximum is not None else True)
    bad = ~(integral & in_range)
    if bad.any():
        raise ValueError(f"{name} 必須是{what}；收到 {_first_bad(value, arr, bad)}")
    return arr.astype(np.int64)


def scalar(name: str, value) -> None:
    """Refuse arrays where only one number makes sense."""
    if np.ndim(value) != 0:
        raise ValueError(f"{name} 在這裡必須是單一數值，收到 {_shown(value)}")


def scalar_int(name: str, value, *, minimum: int = 0, maximum: int | None = None) -> int:
    scalar(name, value)
    return int(integer(name, value, minimum=minimum, maximum=maximum))


def seed_or_generator(seed) -> np.random.Generator:
    """``None``, a non-negative int, or a ``numpy.random.Generator`` (reused as is)."""
    if seed is None or isinstance(seed, np.random.Generator):
        return np.random.default_rng(seed)
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return np.random.default_rng(int(seed))
    raise ValueError(
        f"seed 必須是 None、非負整數或 numpy.random.Generator，收到 {seed!r}"
    )


def unwrap(arr: np.ndarray, *, like_int: bool = False):
    """Return a Python scalar for 0-d results, the array otherwise."""
    if np.ndim(arr) == 0:
        return int(arr) if like_int else float(arr)
    return arr
