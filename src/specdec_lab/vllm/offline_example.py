"""What vLLM's offline example ``examples/offline_inference/spec_decode.py`` prints → ``SpecDecodeStats``.

After the run the script reads ``llm.get_metrics()`` (the same counters as /metrics, for the whole
run) and prints, between two rows of dashes::

    total_num_output_tokens: 68596
    num_drafts: 20468
    num_draft_tokens: 204680
    num_accepted_tokens: 48266
    mean acceptance length: 3.36

and then ``acceptance at token i: 0.71`` for each of the k positions (count ÷ num_drafts, 2
decimals). The three counts are exact; the per-position counts are recovered from their rounding
(they must sum to the accepted tokens), with their slack. The script also lets the engine log
``SpecDecoding metrics:`` lines while it runs: they cover the same run in pieces, so when both are
pasted the block's totals are used and the lines are not added on top.
"""
from __future__ import annotations

import re

from .rounding import counts_for, slack
from .stats import SpecDecodeStats, check_consistent

MARKER = "acceptance at token"
_COUNT = re.compile(r"^\s*(num_drafts|num_draft_tokens|num_accepted_tokens):\s*(\S+)\s*$", re.M)
_LENGTH = re.compile(r"^\s*mean acceptance length:\s*(\S+)\s*$", re.M)
_RATE = re.compile(r"^\s*acceptance at token (\d+):\s*(\S+)\s*$", re.M)
_HINT = "請貼 spec_decode.py 結尾印出的整段（從 total_num_output_tokens 到最後一行 acceptance at token）"


def is_offline_block(text: str) -> bool:
    return MARKER in text or bool(re.search(r"^\s*num_drafts:\s*\S+\s*$", text, re.M))


def from_offline(text: str, also_log_lines: bool = False) -> SpecDecodeStats:
    """The block's counts; several different blocks (several runs) are refused, the same block
    pasted twice is read once."""
    notes = []
    starts = [m.start() for m in re.finditer(r"^\s*num_drafts:", text, re.M)]
    if len(starts) > 1:
        parts = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
        if len({_normalised(p) for p in parts}) > 1:
            raise ValueError(
                f"貼上的文字有 {len(parts)} 段 spec_decode.py 的結果：α 請一段一段看（不同設定或資料集的結果不該相加）"
            )
        notes.append(f"同一段 spec_decode.py 結果貼了 {len(parts)} 次，只算一次")
        text = parts[0]
    counts = {name: _integer(value, name) for name, value in _COUNT.findall(text)}
    missing = [name for name in ("num_drafts", "num_draft_tokens", "num_accepted_tokens") if name not in counts]
    if missing:
        raise ValueError("這是 vLLM 範例 spec_decode.py 印出的結果，但缺少 " + "、".join(f"「{m}:」" for m in missing) + f" 那幾行。{_HINT}")
    drafts, drafted, accepted = counts["num_drafts"], counts["num_draft_tokens"], counts["num_accepted_tokens"]
    if drafts == 0:
        check_consistent(SpecDecodeStats(0, drafted, accepted, ()), _HINT)
    length = _LENGTH.search(text)
    if length and abs(float(length[1]) - (1 + accepted / drafts)) > 0.005 + 1e-9:
        raise ValueError(
            f"mean acceptance length 印的是 {length[1]}，但 1 + num_accepted_tokens ÷ num_drafts = "
            f"1 + {accepted:,} ÷ {drafts:,} = {1 + accepted / drafts:.4f}：數字對不上，是不是改過了？"
        )
    positions = {int(i): float(r) for i, r in _RATE.findall(text)}
    if positions and sorted(positions) != list(range(len(positions))):
        raise ValueError(f"acceptance at token 的位置必須是 0、1、…、k−1 連續出現，收到 {sorted(positions)}：是不是只複製了一部分？")
    rates = [positions[i] for i in range(len(positions))]
    if any(r > 1 for r in rates):
        raise ValueError(f"acceptance at token 的比率必須是 0 到 1 的分數，收到 {rates}：是不是改成了百分比？")
    per_pos, spare = (), ()
    if rates:
        found = counts_for(rates, drafts, accepted, 0.005)
        if found is None:
            raise ValueError(
                f"acceptance at token 的比率 {rates} 和 num_accepted_tokens {accepted:,}、num_drafts {drafts:,} 對不上"
                "（各位置的計數加起來要等於被接受的 token 數）：是不是改過或截斷了？"
            )
        per_pos, spare = tuple(found), tuple(slack(rates, drafts, found, 0.005, accepted))
        notes.append(
            f"acceptance at token 只印到小數 2 位：各位置的計數最多可能差 {max(spare):,}，"
            "α 只準到約 ±0.005；estimate_alpha 的 i.i.d. 檢定只算抽樣誤差、沒算這個四捨五入，要判斷各位置是否一樣請改貼 /metrics"
        )
    else:
        notes.append("沒有「acceptance at token i」那幾行：算得出 E，量不到 α")
    if also_log_lines:
        notes.append("同時貼了 SpecDecoding metrics 的 log 行：它們是同一次執行的分段，已用結尾的總計，log 行不另外相加")
    stats = SpecDecodeStats(drafts, drafted, accepted, per_pos, "offline", per_position_slack=spare, notes=tuple(notes))
    check_consistent(stats, _HINT)
    return stats


def _normalised(part: str) -> str:
    """The part's numbers, without the dashes and the output-token line (which a split at
    ``num_drafts:`` hands to the part before)."""
    return "\n".join(line.strip() for line in part.splitlines()
                     if line.strip() and not line.strip().startswith(("-", "total_num_output_tokens")))


def _integer(text: str, name: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"spec_decode.py 結果裡 {name} 的數值看不懂：{text!r}") from None
    if not (value >= 0 and value == int(value)):
        raise ValueError(f"spec_decode.py 結果裡 {name} 必須是非負整數（它是計數），收到 {text!r}")
    return int(value)
