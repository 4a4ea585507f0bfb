"""The answer of a numeric quiz question, written by the instructor as a number, a `specdec_lab`
call, or both:

    答案：3.69 ± 0.01
    答案：`expected_tokens(0.8, 5)` ± 0.01
    答案：`expected_tokens(0.8, 5)` = 3.69 ± 0.01

The call is evaluated at build time, safely: the text is parsed with `ast`, it must be one call of a
whitelisted closed-form function of specdec_lab (CALLABLE) with literal arguments (numbers,
strings, lists/tuples of them, `name=` keywords), and nothing else is ever executed. Pure
functions, no MkDocs import; errors are NumberError(message) and quiz_format adds `path:line:`.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

# the deterministic closed forms of specdec_lab (no simulation: a build must not depend on a seed
# or take seconds per question)
CALLABLE = ("expected_tokens", "speedup", "best_k", "knee_k", "expected_tokens_positional",
            "crossover_concurrency", "expected_tokens_tree", "multi_draft_acceptance")
NUMBER_RE = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)$")
PLUS_MINUS_RE = re.compile(r"\s*(?:±|\+/-|\+-)\s*")
CALL_RE = re.compile(r"^`?(?P<call>[^`(]*\(.*\))`?\s*(?:=\s*(?P<typed>.*?))?\s*$")


class NumberError(ValueError):
    """A numeric answer the build cannot use; the message says why and how to fix it (zh-TW)."""


@dataclass
class NumericAnswer:
    value: float          # what the learner's number is compared with (the call's exact result)
    tolerance: float      # |learner - value| <= tolerance is right
    shown: str            # the answer as printed on the page, e.g. "3.69"
    call: str | None      # e.g. "expected_tokens(0.8, 5)", or None for a typed number only
    typed: str | None     # the number the instructor typed, if any


def parse_answer(spec: str) -> NumericAnswer:
    """`3.69 ± 0.01`, `` `expected_tokens(0.8, 5)` ± 0.01 `` or `` `…` = 3.69 ± 0.01 ``."""
    parts = PLUS_MINUS_RE.split(spec.strip())
    if len(parts) != 2 or not parts[1]:
        raise NumberError(f"數值題的答案要寫容許誤差，例如「答案：3.69 ± 0.01」；這裡寫的是「{spec.strip()}」")
    left, tol_text = parts[0].strip(), parts[1].strip()
    if not NUMBER_RE.match(tol_text) or float(tol_text) < 0:
        raise NumberError(f"容許誤差要是不小於 0 的數字，例如 ± 0.01（整數答案可以寫 ± 0）；"
                          f"這裡寫的是「{tol_text}」")
    tolerance = float(tol_text)
    call = typed = None
    m = CALL_RE.match(left)
    if m:
        call, typed = m.group("call").strip(), (m.group("typed") or None)
    elif "(" in left:
        call = left.strip("`").split("=")[0].strip()     # a call that does not parse: say so below
    elif left:
        typed = left.strip("`")
    else:
        raise NumberError("數值題的答案少了數字：在 ± 前面寫答案，或寫一個 specdec_lab 的呼叫，"
                          "例如 `expected_tokens(0.8, 5)`")
    if typed is not None and not NUMBER_RE.match(typed):
        raise NumberError(f"答案要是一個數字（例如 3.69），這裡寫的是「{typed}」")

    if call is None:
        value, shown = float(typed), typed
    else:
        value = evaluate(call)
        if typed is not None:
            _check_typed(typed, value, call)
            shown = typed
        else:
            shown = (f"{value:.12g}" if tolerance == 0
                     else _format(value, _decimals_within(tolerance)))
    if abs(float(shown) - value) > tolerance * (1 + 1e-9):
        raise NumberError(f"容許誤差 ± {tol_text} 比印出的答案 {shown} 與算出的 {value:.6g} 之差還小："
                          "讀者照著答案填也會被判錯；放寬誤差或多寫幾位小數")
    return NumericAnswer(value=value, tolerance=tolerance, shown=shown, call=call, typed=typed)


def evaluate(call: str) -> float:
    """The value of one whitelisted specdec_lab call with literal arguments, as a float."""
    try:
        tree = ast.parse(call, mode="eval")
    except SyntaxError:
        raise NumberError(f"`{call}` 不是一個能讀懂的呼叫（括號或逗號寫錯了？）") from None
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise NumberError(f"`{call}` 要是一個函式呼叫，例如 `expected_tokens(0.8, 5)`")
    name = node.func.id
    if name not in CALLABLE:
        raise NumberError(f"`{name}` 不能用在答案裡：只能呼叫 specdec_lab 的 {'、'.join(CALLABLE)}")
    try:
        args = [ast.literal_eval(arg) for arg in node.args]
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
    except ValueError:
        raise NumberError(f"`{call}` 的引數只能直接寫數字、字串或數字的串列，不能寫變數或運算式") from None
    if any(key is None for key in kwargs):
        raise NumberError(f"`{call}` 不能用 ** 展開引數")
    import specdec_lab
    function = getattr(specdec_lab, name)
    try:
        result = function(*args, **kwargs)
    except Exception as error:   # the instructor's call failed: say how, at the quiz's line
        raise NumberError(f"`{call}` 算不出來：{type(error).__name__}: {error}") from None
    try:
        if isinstance(result, bool) or getattr(result, "shape", ()) not in ((), None):
            raise TypeError
        value = float(result)
    except (TypeError, ValueError):
        raise NumberError(f"`{call}` 的結果不是一個數（得到 {result!r}）：答案要是單一的數字") from None
    if not math.isfinite(value):
        raise NumberError(f"`{call}` 的結果是 {value}，不是有限的數字")
    return value


def _check_typed(typed: str, value: float, call: str) -> None:
    """A typed number agrees with the call when it is the call's value rounded to its digits."""
    decimals = _decimals(typed)
    if abs(float(typed) - value) > 0.5 * 10 ** -decimals * (1 + 1e-9):
        raise NumberError(f"答案寫 {typed}，但 `{call}` = {value:.6g}，"
                          f"四捨五入到小數第 {decimals} 位是 {_format(value, decimals)}：改正其中一個")


def _decimals(number: str) -> int:
    return len(number.split(".")[1]) if "." in number else 0


def _decimals_within(tolerance: float) -> int:
    """The fewest decimals whose rounding (half a unit of the last digit) stays within tolerance."""
    decimals = 0
    while 0.5 * 10 ** -decimals > tolerance * (1 + 1e-9) and decimals < 12:
        decimals += 1
    return decimals


def _format(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text.lstrip("-") if float(text) == 0 else text
