"""The font families Chromium really drew an element's text with (DevTools protocol's
CSS.getPlatformFontsForNode): what a CSS font stack promised is not what the engine used, when a
font lacks some of the text's characters (a CJK font without ⁰, a Latin one without 中)."""
from __future__ import annotations


def fonts_drawing_each(page, selector: str, in_frame: bool = False) -> list[tuple[str, list[str]]]:
    """For every element matching `selector` in the page (or, in_frame=True, in the document of
    the page's first iframe), in document order: (its outer HTML, the families drawing its text)."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        document = cdp.send("DOM.getDocument", {"depth": -1, "pierce": in_frame})["root"]
        if in_frame:
            document = _frame_document(document)
            assert document is not None, "no iframe with a document in the page"
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": document["nodeId"], "selector": selector})["nodeIds"]
        return [(cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"],
                 [f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]])
                for node in nodes]
    finally:
        cdp.detach()


def fonts_drawing(page, selector: str, in_frame: bool = False) -> list[str]:
    """The families drawing the first element matching `selector` (see fonts_drawing_each)."""
    drawn = fonts_drawing_each(page, selector, in_frame)
    assert drawn, f"nothing matches {selector!r}"
    return drawn[0][1]


def _frame_document(node):
    if node.get("nodeName") == "IFRAME" and node.get("contentDocument"):
        return node["contentDocument"]
    for child in node.get("children", []):
        found = _frame_document(child)
        if found:
            return found
    return None
