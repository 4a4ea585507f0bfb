"""Every lesson's quiz for a learning management system (README 給講師, `make quiz-export`):

    python site/quiz_export.py [--out build/quiz-export]

writes two files from the `/// quiz` blocks of the lessons in mkdocs.yml's nav order:
- specdec-lab-qti.zip: an IMS content package of QTI 1.2 assessments, one per lesson with a quiz,
  in the dialect Canvas imports (Settings → Import course content → QTI .zip file): single-choice
  questions with every option's explanation as that option's feedback, numeric questions as
  Canvas numerical questions (the answer within its tolerance) with the explanation as feedback;
- specdec-lab-moodle.xml: the same questions as Moodle XML, the format Moodle's question bank
  imports without a plugin (Question bank → Import → Moodle XML format; one category per lesson).
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
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
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
        right = _sub(processing, "respcondition", continue_="No")
        either = _sub(_sub(right, "conditionvar"), "or")
        _sub(either, "varequal", _num(quiz.number.value), respident=RESPONSE)
        within = _sub(either, "and")
        _sub(within, "vargte", _num(quiz.number.value - quiz.number.tolerance), respident=RESPONSE)
        _sub(within, "varlte", _num(quiz.number.value + quiz.number.tolerance), respident=RESPONSE)
        _sub(right, "setvar", "100", action="Set", varname="SCORE")
        item.extend([presentation, processing])
        _feedback(item, "general_fb", to_html(quiz.explanation))
        return item
    _metadata(item, "multiple_choice_question", ",".join(option_ident(quiz, o.label) for o in quiz.options))
    response = _sub(presentation, "response_lid", ident=RESPONSE, rcardinality="Single")
    choices = _sub(response, "render_choice")
    for option in quiz.options:
        label = _sub(choices, "response_label", ident=option_ident(quiz, option.label))
        _material(label, f"{option.label}. {_inline(to_html(option.text))}")
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


def qti_package(found, to_html) -> dict[str, bytes]:
    """{path in the zip: bytes}: imsmanifest.xml and one assessment per lesson."""
    ET.register_namespace("", QTI_NS)
    files = {}
    manifest = ET.Element("manifest", identifier="specdec-lab-quizzes", xmlns=CP_NS)
    metadata = _sub(manifest, "metadata")
    _sub(metadata, "schema", "IMS Content")
    _sub(metadata, "schemaversion", "1.1.3")
    _sub(manifest, "organizations")
    resources = _sub(manifest, "resources")
    for title, src_uri, quizzes in found:
        ident = assessment_ident(src_uri)
        root = ET.Element("questestinterop", xmlns=QTI_NS)
        assessment = _sub(root, "assessment", ident=ident, title=f"{title}：測驗")
        section = _sub(assessment, "section", ident="root_section")
        section.extend(qti_item(quiz, to_html) for quiz in quizzes)
        path = f"{ident}/{ident}.xml"
        files[path] = _xml_bytes(root)
        resource = _sub(resources, "resource", identifier=ident, type="imsqti_xmlv1p2")
        _sub(resource, "file", href=path)
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
                answer = _sub(question, "answer", fraction="100")
                _sub(answer, "text", _num(quiz.number.value))
                _sub(answer, "tolerance", _num(quiz.number.tolerance))
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
