"""`make quiz-export` (site/quiz_export.py): the QTI 1.2 package for Canvas and the Moodle XML file
hold every lesson's quiz exactly as the Markdown says: each question, option, right answer and
explanation (as feedback), numeric questions with their computed value and tolerance.

Fast layer: the export runs as the command would (a subprocess into a temporary folder) and the
files are read back with the standard library's XML parser, not with the exporter's code.
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "site" / "hooks"))
from quiz_format import parse_quizzes  # noqa: E402

Q = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
CP = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)


def text_of(html: str) -> str:
    parser = _Text()
    parser.feed(html or "")
    return re.sub(r"\s+", " ", "".join(parser.parts)).strip()


@pytest.fixture(scope="module")
def render():
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.config import load_config
    config = load_config(str(ROOT / "mkdocs.yml"))
    md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs)

    def to_text(source: str) -> str:
        md.reset()
        return text_of(md.convert(source))
    return to_text


def lesson_quizzes():
    """{lesson file: [Quiz]} straight from the Markdown (front matter lines counted)."""
    out = {}
    for path in sorted((ROOT / "lessons").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        quizzes = parse_quizzes(text, path=str(path))
        if quizzes:
            out[path.stem] = quizzes
    return out


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("quiz-export")
    done = subprocess.run([sys.executable, str(ROOT / "site" / "quiz_export.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "題" in done.stdout
    return out


def test_the_qti_package_has_every_question_option_answer_and_explanation(exported, render):
    expected = lesson_quizzes()
    assert expected, "no lesson has a quiz"
    with zipfile.ZipFile(exported / "specdec-lab-qti.zip") as archive:
        manifest = ET.fromstring(archive.read("imsmanifest.xml"))
        resources = manifest.findall(f"{CP}resources/{CP}resource")
        assert {r.get("type") for r in resources} == {"imsqti_xmlv1p2"}
        assert [r.get("identifier") for r in resources] == [f"lesson-{stem}" for stem in expected]
        for resource in resources:
            stem = resource.get("identifier").removeprefix("lesson-")
            root = ET.fromstring(archive.read(resource.find(f"{CP}file").get("href")))
            items = root.findall(f"{Q}assessment/{Q}section/{Q}item")
            quizzes = expected[stem]
            assert len(items) == len(quizzes)
            for item, quiz in zip(items, quizzes):
                check_qti_item(item, quiz, render)


def field(item, label):
    for f in item.iter(f"{Q}qtimetadatafield"):
        if f.find(f"{Q}fieldlabel").text == label:
            return f.find(f"{Q}fieldentry").text


def check_qti_item(item, quiz, render):
    assert item.get("title") == quiz.title
    presentation = item.find(f"{Q}presentation")
    assert text_of(presentation.find(f"{Q}material/{Q}mattext").text) == render(quiz.question)
    feedback = {f.get("ident"): text_of(f.find(f".//{Q}mattext").text) for f in item.findall(f"{Q}itemfeedback")}
    conditions = item.findall(f"{Q}resprocessing/{Q}respcondition")
    scoring = [c for c in conditions if c.find(f"{Q}setvar") is not None]
    assert len(scoring) == 1 and scoring[0].find(f"{Q}setvar").text == "100"
    if quiz.number:
        assert field(item, "question_type") == "numerical_question"
        assert presentation.find(f"{Q}response_str/{Q}render_fib").get("fibtype") == "Decimal"
        cond = scoring[0].find(f"{Q}conditionvar/{Q}or")
        assert float(cond.find(f"{Q}varequal").text) == pytest.approx(quiz.number.value, rel=1e-11)
        low, high = float(cond.find(f"{Q}and/{Q}vargte").text), float(cond.find(f"{Q}and/{Q}varlte").text)
        assert low == pytest.approx(quiz.number.value - quiz.number.tolerance, abs=1e-11)
        assert high == pytest.approx(quiz.number.value + quiz.number.tolerance, abs=1e-11)
        assert low <= float(quiz.number.shown) <= high            # the printed answer scores
        assert list(feedback.values()) == [render(quiz.explanation)]
        return
    assert field(item, "question_type") == "multiple_choice_question"
    labels = presentation.findall(f"{Q}response_lid/{Q}render_choice/{Q}response_label")
    assert [text_of(label.find(f".//{Q}mattext").text) for label in labels] == \
        [f"{o.label}. {render(o.text)}" for o in quiz.options]
    ident_of = {o.label: label.get("ident") for o, label in zip(quiz.options, labels)}
    right = scoring[0].find(f"{Q}conditionvar/{Q}varequal").text
    assert right == ident_of[quiz.answer]
    shown = {c.find(f"{Q}conditionvar/{Q}varequal").text: c.find(f"{Q}displayfeedback").get("linkrefid")
             for c in conditions if c.find(f"{Q}displayfeedback") is not None}
    for option in quiz.options:        # choosing an option shows that option's explanation
        assert feedback[shown[ident_of[option.label]]] == render(option.explanation)


def test_the_moodle_file_has_the_same_questions(exported, render):
    root = ET.parse(exported / "specdec-lab-moodle.xml").getroot()
    questions = [q for q in root.findall("question")]
    expected = [quiz for quizzes in lesson_quizzes().values() for quiz in quizzes]
    real = [q for q in questions if q.get("type") != "category"]
    assert len(real) == len(expected)
    assert sum(q.get("type") == "category" for q in questions) == len(lesson_quizzes())
    for question, quiz in zip(real, expected):
        assert question.find("name/text").text == quiz.title
        assert text_of(question.find("questiontext/text").text) == render(quiz.question)
        answers = question.findall("answer")
        if quiz.number:
            assert question.get("type") == "numerical"
            [answer] = answers
            assert float(answer.find("text").text) == pytest.approx(quiz.number.value, rel=1e-11)
            assert float(answer.find("tolerance").text) == quiz.number.tolerance
            assert text_of(question.find("generalfeedback/text").text) == render(quiz.explanation)
            continue
        assert question.get("type") == "multichoice" and question.find("single").text == "true"
        assert [text_of(a.find("text").text) for a in answers] == [render(o.text) for o in quiz.options]
        assert [a.get("fraction") for a in answers] == ["100" if o.correct else "0" for o in quiz.options]
        assert [text_of(a.find("feedback/text").text) for a in answers] == \
            [render(o.explanation) for o in quiz.options]


def test_a_broken_quiz_stops_the_export_at_file_line(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "index.md").write_text("# 一課\n\n/// quiz | Q\n題目\n\n答案：`expected_tokens(0.8, 5)` = 3.6 ± 0.01\n"
                                      "    解釋\n///\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\ndocs_dir: lessons\nnav:\n  - index.md\n", encoding="utf-8")
    sys.path.insert(0, str(ROOT / "site"))
    import quiz_export
    with pytest.raises(ValueError, match=r"lessons/index\.md:6: 答案寫 3\.6"):
        quiz_export.lessons(tmp_path / "mkdocs.yml")
