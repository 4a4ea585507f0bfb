"""The static, no-JavaScript content of the "草稿猜 5 個" toy: one fixed example round.

site/assets/toy.js replaces it with the interactive toy; without JavaScript (or before it loads)
the reader still sees what one verification round looks like.
"""
from __future__ import annotations

import html
import re

TOY_RE = re.compile(r'<div class="sd-toy"(?P<attrs>[^>]*)>\s*</div>')
K_RE = re.compile(r'data-k="(\d+)"')

PREFIX = "今天下午我們"
TARGET = ["去", "公園", "散步", "，", "順便", "買", "杯", "咖啡", "。"]
DRAFT = ["去", "公園", "野餐", "吧", "。", "然後", "回家", "了"]
FIRST_MISS = 3          # 1-based position of the example's first rejected guess
K_MAX = len(DRAFT)


def _verdict(icon: str, word: str) -> str:
    return f'<span class="sd-toy__icon" aria-hidden="true">{icon}</span> {word}'


def example_round(k: int) -> str:
    """HTML of the fixed example round with k draft tokens (1 ≤ k ≤ 8)."""
    k = max(1, min(K_MAX, k))
    miss = FIRST_MISS if FIRST_MISS <= k else None
    heads, drafts, targets, verdicts = [], [], [], []
    for i in range(1, k + 1):
        heads.append(f"<th scope=\"col\">{i}</th>")
        if miss is None or i < miss:
            state, target, verdict = "accept", TARGET[i - 1], _verdict("✓", "接受")
        elif i == miss:
            state, target, verdict = "reject", TARGET[i - 1], _verdict("✗", "拒絕")
        else:
            state, target, verdict = "discard", "—", _verdict("−", "丟棄")
        drafts.append(f'<td class="sd-toy__cell" data-state="{state}">{html.escape(DRAFT[i - 1])}</td>')
        correction = ' data-state="correction"' if state == "reject" else ""
        targets.append(f'<td class="sd-toy__cell"{correction}>{html.escape(target)}</td>')
        verdicts.append(f'<td class="sd-toy__cell sd-toy__verdict" data-state="{state}">{verdict}</td>')
    accepted = TARGET[: (miss - 1 if miss else k)]
    if miss:
        extra, extra_kind = TARGET[miss - 1], "修正"
        plus = "—"
    else:
        extra, extra_kind = TARGET[k], "bonus"
        plus = html.escape(extra)
    plus_state = "" if miss else ' data-state="bonus"'
    plus_verdict = "—" if miss else _verdict("★", "bonus")
    produced = len(accepted) + 1
    tokens = "".join(f'<span class="sd-toy__token" data-state="accept">{html.escape(t)}</span>'
                     for t in accepted)
    tokens += (f'<span class="sd-toy__token" data-state="{"correction" if miss else "bonus"}">'
               f'{html.escape(extra)}<small>{extra_kind}</small></span>')
    return f"""<div class="sd-toy__static">
<p class="sd-toy__title"><strong>草稿猜 {k} 個</strong>（固定的一輪示範；開啟 JavaScript 就能自己抽）</p>
<p class="sd-toy__prefix">前文：<span>{PREFIX}</span>…</p>
<div class="sd-toy__scroll"><table class="sd-toy__table">
<caption>一輪驗證：草稿的猜測、大模型在同一次前向給的字、判定</caption>
<thead><tr><th scope="col">位置</th>{"".join(heads)}<th scope="col">＋1</th></tr></thead>
<tbody>
<tr><th scope="row">草稿</th>{"".join(drafts)}<td class="sd-toy__cell">—</td></tr>
<tr><th scope="row">大模型</th>{"".join(targets)}<td class="sd-toy__cell"{plus_state}>{plus}</td></tr>
<tr><th scope="row">判定</th>{"".join(verdicts)}<td class="sd-toy__cell sd-toy__verdict"{plus_state}>{plus_verdict}</td></tr>
</tbody></table></div>
<p class="sd-toy__output">本輪輸出：{tokens} <span class="sd-toy__nobr">→ <strong>{produced} 個字</strong></span></p>
</div>"""


def fill_toys(page_html: str) -> str:
    """Put the static example inside every empty `<div class="sd-toy" …></div>`."""
    def replace(match: re.Match) -> str:
        k = K_RE.search(match.group("attrs"))
        body = example_round(int(k.group(1)) if k else 5)
        # data-search-exclude: Material's search leaves the example round out of the index
        return f'<div class="sd-toy"{match.group("attrs")} data-search-exclude>\n{body}\n</div>'
    return TOY_RE.sub(replace, page_html)
