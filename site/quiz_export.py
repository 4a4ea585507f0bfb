"""Every lesson's quiz for a learning management system (docs/authoring.md, `make quiz-export`):

    python site/quiz_export.py [--out build/quiz-export]

writes two files from the `/// quiz` blocks of the lessons in mkdocs.yml's nav order:
- specdec-lab-qti.zip: an IMS Content Packaging 1.1 package of QTI 1.2 assessments, one per lesson
  with a quiz, in the dialect Canvas imports (Settings → Import course content → QTI .zip file):
  single-choice questions with every option's explanation as that option's feedback (options
  unlettered, so Canvas's own order or shuffle shows no stray "A."), numeric questions as Canvas
  numerical questions showing the answer as the page prints it and accepting the page's range,
  the explanation as feedback; beside each assessment, Canvas's assessment_meta.xml (title,
  description, practice quiz, unlimited attempts, answers not shuffled), as Canvas's own export;
- specdec-lab-moodle.xml: the same questions as Moodle XML, the format Moodle's question bank
  imports without a plugin (Question bank → Import → Moodle XML format; one category per lesson;
  Moodle letters the options itself, answernumbering ABCD, not shuffled).
The QTI follows the structure text2qti writes for Canvas (the same response, feedback and
numeric-range conditions). Text is HTML rendered from the lesson's Markdown as the site renders
it; formulas stay as \\( … \\), which both systems' MathJax filters show. No library:
qti-package-maker 26.7.14 (the one on PyPI) writes Canvas QTI without any feedback, and the
explanations are the point.
"""
from __future__ import annotations

import argparse
import os
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "site" / "hooks"))

from quiz_format import Quiz, parse_quizzes  # noqa: E402

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
# IMS Content Packaging 1.1.x: its namespace with its own schema (Canvas's exporter writes Common
# Cartridge 1.1's namespace beside schemaversion 1.1.3, which a CP 1.1 validator rejects)
CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"
CP_SCHEMA = "http://www.imsglobal.org/xsd/imscp_v1p1.xsd"
CP_VERSION = "1.1.3"
# Canvas's quiz settings file and the resource type its exporter and importer give it
CANVAS_NS = "http://canvas.instructure.com/xsd/cccv1p0"
CANVAS_SCHEMA = "https://canvas.instructure.com/xsd/cccv1p0.xsd"
CANVAS_META = "assessment_meta.xml"
CANVAS_META_TYPE = "associatedcontent/imscc_xmlv1p1/learning-application-resource"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
RESPONSE = "response1"


def lessons(config_file: Path = ROOT / "mkdocs.yml"):
    """[(title, src_uri, [Quiz]), …] for the lessons of the nav that have a quiz, and the site's
    Markdown renderer (the extensions of mkdocs.yml)."""
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    from mkdocs.config import load_config
    import markdown
    config = load_config(str(config_file))
    docs = Path(config.docs_dir)
    md = markdown.Markdown(extensions=config.markdown_extensions, extension_configs=config.mdx_configs)

    def to_html(text: str) -> str:
        md.reset()
        return md.convert(text)

    found = []
    for src_uri in _nav_files(config.nav):
        path = docs / src_uri
        text = path.read_text(encoding="utf-8")
        body, first_line, title = _strip_front_matter(text)
        shown = os.path.relpath(path, Path(config.config_file_path).parent)   # lessons/xyz.md
        quizzes = parse_quizzes(body, path=shown, first_line=first_line)
        if quizzes:
            found.append((title or _first_heading(body) or src_uri, src_uri, quizzes))
    return found, to_html


def _nav_files(nav) -> list[str]:
    out = []
    for entry in nav or []:
        if isinstance(entry, str):
            out.append(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                out.extend(_nav_files(value) if isinstance(value, list) else [value])
    return [f for f in out if f.endswith(".md")]


def _strip_front_matter(text: str) -> tuple[str, int, str | None]:
    if not text.startswith("---\n"):
        return text, 1, None
    end = text.index("\n---\n", 4)
    title = next((line.split(":", 1)[1].strip() for line in text[4:end].split("\n")
                  if line.startswith("title:")), None)
    body = text[end + 5:]
    return body, text[:end + 5].count("\n") + 1, title


def _first_heading(body: str) -> str | None:
    return next((line[2:].strip() for line in body.split("\n") if line.startswith("# ")), None)


def _inline(html: str) -> str:
    s = html.strip()
    return s[3:-4] if s.startswith("<p>") and s.endswith("</p>") and s.count("<p>") == 1 else s


def _num(x: float) -> str:
    return f"{x:.12g}"


def numeric_answers(number) -> list[tuple[str, float, float]]:
    """The right answers of a numeric question as (shown, low, high), first the one to show.

    The page prints the answer rounded (3.44) and accepts |x - value| <= tolerance around the exact
    value (3.439 ± 0.01). Canvas and Moodle show an answer with a symmetric margin, so the printed
    answer comes first with the widest margin that stays inside the page's range, then, when it is
    not the exact value, the whole range (Canvas: a range answer; Moodle: the value ± tolerance).
    """
    low, high = number.value - number.tolerance, number.value + number.tolerance
    shown = float(number.shown)
    if shown == number.value:
        return [(number.shown, low, high)]
    margin = max(0.0, min(shown - low, high - shown))
    return [(number.shown, shown - margin, shown + margin), (_num(number.value), low, high)]


def item_ident(quiz: Quiz) -> str:
    return f"q{quiz.key}"


def option_ident(quiz: Quiz, label: str) -> str:
    return f"q{quiz.key}-{label}"


# --------------------------------------------------------------------------- QTI 1.2 (Canvas)

def _sub(parent, tag, text=None, **attrs):
    node = ET.SubElement(parent, tag, {k.rstrip("_"): str(v) for k, v in attrs.items()})
    if text is not None:
        node.text = text
    return node


def _material(parent, html: str):
    material = _sub(parent, "material")
    _sub(material, "mattext", html, texttype="text/html")
    return material


def _metadata(item, question_type: str, answer_ids: str = ""):
    fields = _sub(_sub(item, "itemmetadata"), "qtimetadata")
    for label, entry in (("question_type", question_type), ("points_possible", "1"),
                         ("original_answer_ids", answer_ids)):
        field = _sub(fields, "qtimetadatafield")
        _sub(field, "fieldlabel", label)
        _sub(field, "fieldentry", entry)


def _feedback(item, ident: str, html: str):
    _material(_sub(_sub(item, "itemfeedback", ident=ident), "flow_mat"), html)


def qti_item(quiz: Quiz, to_html) -> ET.Element:
    item = ET.Element("item", ident=item_ident(quiz), title=quiz.title or quiz.question[:40])
    presentation = ET.Element("presentation")
    _material(presentation, to_html(quiz.question))
    processing = ET.Element("resprocessing")
    outcomes = _sub(processing, "outcomes")
    _sub(outcomes, "decvar", maxvalue="100", minvalue="0", varname="SCORE", vartype="Decimal")
    if quiz.number:
        _metadata(item, "numerical_question")
        response = _sub(presentation, "response_str", ident=RESPONSE, rcardinality="Single")
        _sub(_sub(response, "render_fib", fibtype="Decimal"), "response_label", ident="answer1")
        general = _sub(processing, "respcondition", continue_="Yes")
        _sub(_sub(general, "conditionvar"), "other")
        _sub(general, "displayfeedback", feedbacktype="Response", linkrefid="general_fb")
        for index, (shown, low, high) in enumerate(numeric_answers(quiz.number)):
            right = _sub(processing, "respcondition", continue_="No")
            condition = _sub(right, "conditionvar")
            if index == 0:      # Canvas's exact answer: the value it shows, its margin from varlte
                condition = _sub(condition, "or")
                _sub(condition, "varequal", shown, respident=RESPONSE)
                condition = _sub(condition, "and")
            _sub(condition, "vargte", _num(low), respident=RESPONSE)     # else a range answer
            _sub(condition, "varlte", _num(high), respident=RESPONSE)
            _sub(right, "setvar", "100", action="Set", varname="SCORE")
        item.extend([presentation, processing])
        _feedback(item, "general_fb", to_html(quiz.explanation))
        return item
    _metadata(item, "multiple_choice_question", ",".join(option_ident(quiz, o.label) for o in quiz.options))
    response = _sub(presentation, "response_lid", ident=RESPONSE, rcardinality="Single")
    choices = _sub(response, "render_choice")
    for option in quiz.options:
        label = _sub(choices, "response_label", ident=option_ident(quiz, option.label))
        _material(label, _inline(to_html(option.text)))
    for option in quiz.options:     # every option's explanation, shown when it is chosen
        condition = _sub(processing, "respcondition", continue_="Yes")
        _sub(_sub(condition, "conditionvar"), "varequal", option_ident(quiz, option.label), respident=RESPONSE)
        _sub(condition, "displayfeedback", feedbacktype="Response",
             linkrefid=option_ident(quiz, option.label) + "_fb")
    right = _sub(processing, "respcondition", continue_="No")
    _sub(_sub(right, "conditionvar"), "varequal", option_ident(quiz, quiz.answer), respident=RESPONSE)
    _sub(right, "setvar", "100", action="Set", varname="SCORE")
    item.extend([presentation, processing])
    for option in quiz.options:
        _feedback(item, option_ident(quiz, option.label) + "_fb", to_html(option.explanation))
    return item


def assessment_ident(src_uri: str) -> str:
    return "lesson-" + src_uri.removesuffix(".md").replace("/", "-")


def quiz_title(title: str) -> str:
    return f"〈{title}〉測驗"


def canvas_meta(ident: str, title: str, quizzes: list[Quiz]) -> ET.Element:
    """Canvas's assessment_meta.xml for one lesson's quiz: what Canvas would otherwise default
    (its importer reads these fields; the rest keep Canvas's defaults)."""
    root = ET.Element("quiz", {"identifier": ident, "xmlns": CANVAS_NS, "xmlns:xsi": XSI_NS,
                               "xsi:schemaLocation": f"{CANVAS_NS} {CANVAS_SCHEMA}"})
    numeric = sum(1 for quiz in quizzes if quiz.number)
    for tag, text in (
            ("title", quiz_title(title)),
            ("description", f"<p>specdec-lab〈{title}〉的練習：{len(quizzes) - numeric} 題情境選擇題、"
                            f"{numeric} 題計算題，每個選項都附解釋，與課程網頁上的測驗相同。</p>"),
            ("shuffle_answers", "false"),      # as on the page; the explanations are per option
            ("scoring_policy", "keep_highest"),
            ("quiz_type", "practice_quiz"),    # a self-check beside the lesson, not graded
            ("points_possible", str(len(quizzes))),
            ("show_correct_answers", "true"),
            ("allowed_attempts", "-1"),
            ("one_question_at_a_time", "false"),
            ("cant_go_back", "false")):
        _sub(root, tag, text)
    return root


def qti_package(found, to_html) -> dict[str, bytes]:
    """{path in the zip: bytes}: imsmanifest.xml, and per lesson one assessment and its
    assessment_meta.xml, laid out and referenced as Canvas's own QTI export does."""
    ET.register_namespace("", QTI_NS)
    files = {}
    manifest = ET.Element("manifest", {"identifier": "specdec-lab-quizzes", "xmlns": CP_NS,
                                       "xmlns:xsi": XSI_NS, "xsi:schemaLocation": f"{CP_NS} {CP_SCHEMA}"})
    metadata = _sub(manifest, "metadata")
    _sub(metadata, "schema", "IMS Content")
    _sub(metadata, "schemaversion", CP_VERSION)
    _sub(manifest, "organizations")
    resources = _sub(manifest, "resources")
    for title, src_uri, quizzes in found:
        ident = assessment_ident(src_uri)
        root = ET.Element("questestinterop", xmlns=QTI_NS)
        assessment = _sub(root, "assessment", ident=ident, title=quiz_title(title))
        section = _sub(assessment, "section", ident="root_section")
        section.extend(qti_item(quiz, to_html) for quiz in quizzes)
        path, meta_path = f"{ident}/{ident}.xml", f"{ident}/{CANVAS_META}"
        files[path] = _xml_bytes(root)
        files[meta_path] = _xml_bytes(canvas_meta(ident, title, quizzes))
        resource = _sub(resources, "resource", identifier=ident, type="imsqti_xmlv1p2")
        _sub(resource, "file", href=path)
        _sub(resource, "dependency", identifierref=f"{ident}-meta")
        meta = _sub(resources, "resource", identifier=f"{ident}-meta", type=CANVAS_META_TYPE, href=meta_path)
        _sub(meta, "file", href=meta_path)
    files["imsmanifest.xml"] = _xml_bytes(manifest)
    return files


# --------------------------------------------------------------------------- Moodle XML

def moodle_xml(found, to_html) -> bytes:
    root = ET.Element("quiz")
    for title, _src_uri, quizzes in found:
        category = _sub(root, "question", type="category")
        _sub(_sub(category, "category"), "text", f"$course$/specdec-lab/{title}")
        for quiz in quizzes:
            kind = "numerical" if quiz.number else "multichoice"
            question = _sub(root, "question", type=kind)
            _sub(_sub(question, "name"), "text", quiz.title or quiz.question[:40])
            _sub(_sub(question, "questiontext", format="html"), "text", to_html(quiz.question))
            _sub(question, "defaultgrade", "1")
            if quiz.number:
                _sub(_sub(question, "generalfeedback", format="html"), "text", to_html(quiz.explanation))
                for shown, low, high in numeric_answers(quiz.number):   # Moodle shows the first
                    answer = _sub(question, "answer", fraction="100")
                    _sub(answer, "text", shown)
                    _sub(answer, "tolerance", _num((high - low) / 2))
                    _sub(_sub(answer, "feedback", format="html"), "text", "")
                continue
            _sub(question, "single", "true")
            _sub(question, "shuffleanswers", "0")
            _sub(question, "answernumbering", "ABCD")
            for option in quiz.options:
                answer = _sub(question, "answer", fraction="100" if option.correct else "0", format="html")
                _sub(answer, "text", _inline(to_html(option.text)))
                _sub(_sub(answer, "feedback", format="html"), "text", to_html(option.explanation))
    return _xml_bytes(root)


def _xml_bytes(root: ET.Element) -> bytes:
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")


def export(out: Path) -> tuple[Path, Path]:
    found, to_html = lessons()
    out.mkdir(parents=True, exist_ok=True)
    qti = out / "specdec-lab-qti.zip"
    with zipfile.ZipFile(qti, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(qti_package(found, to_html).items()):
            archive.writestr(name, data)
    moodle = out / "specdec-lab-moodle.xml"
    moodle.write_bytes(moodle_xml(found, to_html))
    count = sum(len(q) for _t, _s, q in found)
    print(f"{count} 題（{len(found)} 課）→ {qti.relative_to(ROOT) if qti.is_relative_to(ROOT) else qti}"
          f"（Canvas：QTI .zip）與 {moodle.name}（Moodle：Moodle XML）")
    return qti, moodle


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "quiz-export",
                        help="output folder (default build/quiz-export)")
    args = parser.parse_args(argv)
    try:
        export(args.out.resolve())
    except ValueError as error:        # a broken quiz: path:line: message, as the site build says it
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
