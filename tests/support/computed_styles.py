"""Every element's computed style on a page, to tell whether two stylesheets style it alike.

    digests = page.evaluate(STYLE_DIGESTS)       # [[where, digest], ...] in document order
    page.evaluate(STYLES_AT, [3, 17])            # {index: every property and value} for those entries

One entry per element, and one per ::before or ::after the element draws (its `content` is not
none), each a 32-bit FNV-1a digest of its every computed property and value. `where` names
the element (tag, id, classes) so that a difference can be told. The page must be still: no
animation running, nothing changing under it.
"""
from __future__ import annotations

_WALK = r"""
const entries = [];
for (const el of document.querySelectorAll("*")) {
  const name = el.localName + (el.id ? "#" + el.id : "")
    + [...el.classList].map(c => "." + c).join("");
  for (const pseudo of [null, "::before", "::after"]) {
    const style = getComputedStyle(el, pseudo);
    if (pseudo && style.content === "none") continue;
    entries.push([name + (pseudo || ""), style]);
  }
}
const text = style => {
  // sorted: custom properties come in the order the stylesheets declare them
  return [...style].sort().map(p => p + "\u0001" + style.getPropertyValue(p) + "\u0002").join("");
};
"""

STYLE_DIGESTS = "() => {" + _WALK + r"""
return entries.map(([where, style]) => {
  let h = 0x811c9dc5;
  const s = text(style);
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return [where, h];
});
}"""

STYLES_AT = "(indices) => {" + _WALK + r"""
return Object.fromEntries(indices.map(i => [i, text(entries[i][1])]));
}"""


def style_differences(before: dict[int, str], after: dict[int, str]) -> dict[int, list[str]]:
    """{index: ["prop: before -> after", ...]} for STYLES_AT's answers on two pages."""
    out = {}
    for index in before:
        a = dict(p.split("\x01", 1) for p in before[index].split("\x02") if p)
        b = dict(p.split("\x01", 1) for p in after.get(index, "").split("\x02") if p)
        out[index] = [f"{p}: {a.get(p)!r} -> {b.get(p)!r}" for p in sorted(a.keys() | b.keys())
                      if a.get(p) != b.get(p)]
    return out
