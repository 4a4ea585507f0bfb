"""Text, file or upload? And the JSON values in a text. Shared by the readers.

A string is read as a file only when it names an existing file, or when it cannot be anything
else (one short line that ends in .json/.txt/.log or contains a path separator); everything
else is pasted text. No raw ``OSError`` ever leaves: a pasted table is not a "file name too
long". A file chosen with an ipywidgets ``FileUpload`` (each item of its ``value``: a dict with
the file's ``name`` and its bytes as ``content``) is read as UTF-8 text under its name.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

_PATHLIKE = (".json", ".jsonl", ".txt", ".log")


def is_upload(source) -> bool:
    """An item of an ipywidgets FileUpload's value: the file's name and its bytes."""
    return (isinstance(source, dict) and isinstance(source.get("name"), str)
            and isinstance(source.get("content"), (bytes, bytearray, memoryview)))


def text_of(source, what: str) -> tuple[str, str]:
    """(text, where it came from) for a path, a pasted string or an uploaded file."""
    if is_upload(source):
        try:
            return bytes(source["content"]).decode("utf-8"), source["name"]
        except UnicodeDecodeError:
            raise ValueError(f"上傳的 {source['name']!r} 不是 UTF-8 文字檔（{what}）") from None
    if isinstance(source, Path):
        return _read(source, what), source.name
    if not isinstance(source, str):
        raise ValueError(f"{what}必須是檔案路徑或貼上的文字，收到 {type(source).__name__}")
    one_line = "\n" not in source.strip() and len(source) <= 1024
    stripped = source.strip()
    if one_line and stripped and stripped[0] not in "{[":
        try:
            exists = Path(stripped).is_file()
        except (OSError, ValueError):  # a name too long, a NUL byte
            exists = False
        if exists:
            return _read(Path(stripped), what), Path(stripped).name
        if stripped.lower().endswith(_PATHLIKE) or (os.sep in stripped and " " not in stripped):
            raise ValueError(f"找不到 {what}檔 {stripped!r}：用筆記本裡的「上傳」鈕讀進檔案（your_gpu 筆記本第 3 節），"
                             "或直接把內容貼成文字")
    return source, "貼上的文字"


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"找不到 {what}檔 {str(path)!r}") from None
    except IsADirectoryError:
        raise ValueError(f"{str(path)!r} 是資料夾，不是檔案：請給資料夾裡的 .json 檔（例如 glob.glob('results/*.json')）") from None
    except UnicodeDecodeError:
        raise ValueError(f"{str(path)!r} 不是 UTF-8 文字檔（{what}）") from None
    except OSError as e:
        raise ValueError(f"讀不到檔案 {str(path)!r}：{e.strerror or e}") from None


def json_values(text: str) -> list:
    """Every JSON value in ``text``: one document, several appended, JSON lines, or SSE
    ``data: {…}`` lines. Raises ``json.JSONDecodeError`` (for the caller to explain)."""
    decoder, pos, out = json.JSONDecoder(), 0, []
    text = "\n".join(line[5:] if line.startswith("data:") else line for line in text.splitlines())
    while True:
        while pos < len(text) and (text[pos].isspace() or text[pos] == ","):
            pos += 1
        if pos >= len(text):
            return out
        if text.startswith("[DONE]", pos):
            pos += 6
            continue
        value, pos = decoder.raw_decode(text, pos)
        out.append(value)
