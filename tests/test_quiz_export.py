"""`make quiz-export` (site/quiz_export.py): the QTI 1.2 package for Canvas and the Moodle XML file
hold every lesson's quiz exactly as the Markdown says: each question, option, right answer and
explanation (as feedback), numeric questions showing the answer as the page prints it and
accepting the page's range. The package is read as Canvas's importer reads it: an IMS Content
Packaging 1.1 manifest, each assessment with its assessment_meta.xml (the quiz's title and
settings), options without letters of their own, numerical answers as exact-with-margin or range.

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
from support.site import nav_pages  # noqa: E402

Q = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"          # IMS Content Packaging 1.1.x
CP = "{%s}" % CP_NS
CANVAS = "{http://canvas.instructure.com/xsd/cccv1p0}"      # Canvas's assessment_meta.xml
XSI = "{http://www.w3.org/2001/XMLSchema-instance}"
LETTERED = re.compile(r"^\s*[A-Ha-h][.)、．]\s")           # "A. …", "b) …": a letter of its own


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
    """{lesson file: [Quiz]} straight from the Markdown (front matter lines counted), in mkdocs.yml's
    nav order, as the export writes them."""
    out = {}
    for page in nav_pages():
        path = ROOT / "lessons" / ((page.rstrip("/") or "index") + ".md")
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


def qti_resources(manifest):
    return [r for r in manifest.findall(f"{CP}resources/{CP}resource") if r.get("type") == "imsqti_xmlv1p2"]


def test_the_manifest_is_ims_content_packaging_1_1(exported):
    """CP 1.1's namespace with CP 1.1's schema and version: the root validates against
    imscp_v1p1.xsd (the CP 1.1.3 schema QTIMigrationTool ships), which Common Cartridge 1.1's
    namespace under schemaversion 1.1.3 does not."""
    with zipfile.ZipFile(exported / "specdec-lab-qti.zip") as archive:
        manifest = ET.fromstring(archive.read("imsmanifest.xml"))
    assert manifest.tag == f"{CP}manifest"
    pairs = (manifest.get(f"{XSI}schemaLocation") or "").split()
    assert dict(zip(pairs[::2], pairs[1::2])) == {CP_NS: "http://www.imsglobal.org/xsd/imscp_v1p1.xsd"}
    assert manifest.findtext(f"{CP}metadata/{CP}schema") == "IMS Content"
    assert manifest.findtext(f"{CP}metadata/{CP}schemaversion") in {"1.1.3", "1.1.4"}
    assert {element.tag.split("}")[0] + "}" for element in manifest.iter()} == {CP}


def test_every_assessment_has_canvas_quiz_settings(exported):
    """Canvas reads <assessment ident>/assessment_meta.xml, listed in a learning-application
    resource (CC::Importer::Canvas::QuizMetadataConverter): without it the quiz takes Canvas's
    defaults and other readers call it "Untitled"."""
    expected = lesson_quizzes()
    with zipfile.ZipFile(exported / "specdec-lab-qti.zip") as archive:
        manifest = ET.fromstring(archive.read("imsmanifest.xml"))
        by_id = {r.get("identifier"): r for r in manifest.findall(f"{CP}resources/{CP}resource")}
        resources = qti_resources(manifest)
        assert len(resources) == len(expected)
        for resource in resources:
            ident = resource.get("identifier")
            assessment = ET.fromstring(archive.read(resource.find(f"{CP}file").get("href"))).find(f"{Q}assessment")
            assert assessment.get("ident") == ident
            [dependency] = resource.findall(f"{CP}dependency")
            meta_resource = by_id[dependency.get("identifierref")]
            assert meta_resource.get("type").endswith("learning-application-resource")
            hrefs = [f.get("href") for f in meta_resource.findall(f"{CP}file")]
            assert f"{ident}/assessment_meta.xml" in hrefs
            meta = ET.fromstring(archive.read(f"{ident}/assessment_meta.xml"))
            assert meta.tag == f"{CANVAS}quiz" and meta.get("identifier") == ident
            title = meta.findtext(f"{CANVAS}title")
            assert title and title == assessment.get("title") and "Untitled" not in title
            assert text_of(meta.findtext(f"{CANVAS}description"))
            assert meta.findtext(f"{CANVAS}shuffle_answers") == "false"   # as the page, letters in order
            assert meta.findtext(f"{CANVAS}quiz_type") == "practice_quiz"
            assert meta.findtext(f"{CANVAS}show_correct_answers") == "true"
            assert int(meta.findtext(f"{CANVAS}allowed_attempts")) == -1
            quizzes = expected[ident.removeprefix("lesson-")]
            assert float(meta.findtext(f"{CANVAS}points_possible")) == len(quizzes)


def test_the_qti_package_has_every_question_option_answer_and_explanation(exported, render):
    expected = lesson_quizzes()
    assert expected, "no lesson has a quiz"
    assert list(expected)[:2] == ["index", "draft-trees"], list(expected)     # lesson 2 carried, after lesson 1
    with zipfile.ZipFile(exported / "specdec-lab-qti.zip") as archive:
        manifest = ET.fromstring(archive.read("imsmanifest.xml"))
        resources = qti_resources(manifest)
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
    assert all(c.find(f"{Q}setvar").text == "100" for c in scoring)
    if quiz.number:
        assert field(item, "question_type") == "numerical_question"
        assert presentation.find(f"{Q}response_str/{Q}render_fib").get("fibtype") == "Decimal"
        answers = [canvas_numeric_answer(c.find(f"{Q}conditionvar")) for c in scoring]
        shown, *_ = answers[0]
        assert shown == quiz.number.shown           # Canvas shows the first exact answer: as the page
        check_accepted_range([(low, high) for _shown, low, high in answers], quiz.number)
        assert list(feedback.values()) == [render(quiz.explanation)]
        return
    assert len(scoring) == 1
    assert field(item, "question_type") == "multiple_choice_question"
    labels = presentation.findall(f"{Q}response_lid/{Q}render_choice/{Q}response_label")
    texts = [text_of(label.find(f".//{Q}mattext").text) for label in labels]
    assert texts == [render(o.text) for o in quiz.options]
    assert not any(LETTERED.match(text) for text in texts), texts    # Canvas may shuffle them
    ident_of = {o.label: label.get("ident") for o, label in zip(quiz.options, labels)}
    right = scoring[0].find(f"{Q}conditionvar/{Q}varequal").text
    assert right == ident_of[quiz.answer]
    shown = {c.find(f"{Q}conditionvar/{Q}varequal").text: c.find(f"{Q}displayfeedback").get("linkrefid")
             for c in conditions if c.find(f"{Q}displayfeedback") is not None}
    for option in quiz.options:        # choosing an option shows that option's explanation
        assert feedback[shown[ident_of[option.label]]] == render(option.explanation)


def canvas_numeric_answer(condition):
    """(shown, low, high) of one numerical answer as Canvas's importer reads it
    (Qti::NumericInteraction): <or> is an exact answer, its margin taken from varlte; a bare
    vargte/varlte pair is a range answer."""
    either = condition.find(f"{Q}or")
    if either is not None:
        exact = either.find(f"{Q}varequal").text
        margin = float(either.find(f"{Q}and/{Q}varlte").text) - float(exact)
        assert float(either.find(f"{Q}and/{Q}vargte").text) == pytest.approx(float(exact) - margin, abs=1e-12)
        return exact, float(exact) - margin, float(exact) + margin
    return None, float(condition.find(f"{Q}vargte").text), float(condition.find(f"{Q}varlte").text)


def check_accepted_range(intervals, number):
    """The answers together accept exactly what the page accepts, |x - value| <= tolerance."""
    low, high = number.value - number.tolerance, number.value + number.tolerance
    assert all(low - 1e-12 <= a <= b <= high + 1e-12 for a, b in intervals), (intervals, low, high)
    reach = min(a for a, _b in intervals)
    for a, b in sorted(intervals):          # no gap between the answers
        assert a <= reach + 1e-12
        reach = max(reach, b)
    assert min(a for a, _b in intervals) == pytest.approx(low, abs=1e-11)
    assert reach == pytest.approx(high, abs=1e-11)


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
            assert all(a.get("fraction") == "100" for a in answers)
            assert answers[0].find("text").text == quiz.number.shown     # Moodle shows the first
            centres = [(float(a.find("text").text), float(a.find("tolerance").text)) for a in answers]
            check_accepted_range([(c - t, c + t) for c, t in centres], quiz.number)
            assert text_of(question.find("generalfeedback/text").text) == render(quiz.explanation)
            continue
        assert question.get("type") == "multichoice" and question.find("single").text == "true"
        assert question.find("answernumbering").text == "ABCD"           # Moodle letters them itself
        assert question.find("shuffleanswers").text == "0"
        texts = [text_of(a.find("text").text) for a in answers]
        assert texts == [render(o.text) for o in quiz.options]
        assert not any(LETTERED.match(text) for text in texts), texts
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
