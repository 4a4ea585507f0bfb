"""Build-time helpers of the lesson site that are not the quiz: TeX → MathML, the toy's no-JS round."""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "hooks"))

from tex_mathml import MathError, tex_to_mathml, tex_to_mathml_html  # noqa: E402
from toy_fallback import example_round, fill_toys  # noqa: E402


def test_arithmatex_output_becomes_mathml():
    page = ('<p>α 是 <span class="arithmatex">\\(\\alpha &lt; 1\\)</span>。</p>\n'
            '<div class="arithmatex">\\[\n\\frac{1-\\alpha^{K+1}}{1-\\alpha}\n\\]</div>')
    html = tex_to_mathml_html(page)
    assert "arithmatex" not in html
    assert html.count("<math") == 2
    assert 'display="inline"' in html and 'display="block"' in html
    assert "<mfrac>" in html and ("&lt;" in html or "&#x0003C;" in html)
    assert '<div class="sd-math">' in html


def test_operator_names_are_identifiers_and_spaces_are_lengths():
    mathml = tex_to_mathml(r"\min\!\left(1, \frac{p}{q}\right)", display=False)
    assert "<mi>min</mi>" in mathml
    assert "negativethinmathspace" not in mathml


def test_a_prime_follows_its_base_instead_of_a_tiny_superscript():
    mathml = tex_to_mathml(r"p'(x) = q^{\prime}", display=False)
    assert "<msup>" not in mathml
    assert mathml.count('<mo lspace="0" rspace="0">&#x02032;</mo>') == 2


@pytest.mark.parametrize("tex", [r"a^", r"\left( x", r"\notacommand{x}"])
def test_bad_tex_is_an_error_quoting_the_formula(tex):
    with pytest.raises(MathError, match=re.escape(tex)):
        tex_to_mathml(tex, display=True)


@pytest.mark.parametrize("k", range(1, 9))
def test_example_round_is_consistent(k):
    html = example_round(k)
    verdicts = re.findall(r'sd-toy__verdict" data-state="(\w+)"', html)
    states = verdicts[:k]
    assert len(states) == k
    accepted = states.count("accept")
    assert states[:accepted] == ["accept"] * accepted          # hits come first
    assert states.count("reject") == (1 if accepted < k else 0)
    produced = int(re.search(r"<strong>(\d+) 個字</strong>", html).group(1))
    assert produced == accepted + 1
    assert ("修正" in html) == (accepted < k) and ("★</span> bonus" in html) == (accepted == k)


def test_fill_toys_keeps_attributes_and_excludes_the_example_from_search():
    html = fill_toys('<div class="sd-toy" data-k="3" data-alpha="0.6">\n</div>')
    assert html.startswith('<div class="sd-toy" data-k="3" data-alpha="0.6" data-search-exclude>')
    assert "草稿猜 3 個" in html
