"""Split a folder of data out of the project's wheel into a wheel of its own, so that the kernel
fetches it only with the module that reads it (runtime.toml [kernel.split_out]).

The Traditional Chinese font (specdec_lab/fonts/, 1.4 MB of a 1.55 MB wheel) is read only by
specdec_lab.plotting; in the project's wheel it was fetched before lesson 1's first output, which
prints a number. Split out, it comes with matplotlib, at the first figure. Pyodide unpacks both
wheels into the same site-packages/specdec_lab/ folder, so the font sits where the plotting module
looks for it (style.FONT_PATH), as it does in a pip-installed package.

Both wheels keep every entry of the original as it was (name, date, compression, bytes), so the
same sources give the same bytes; each gets a RECORD of what it holds.
"""
from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from lab.builder.fetch import BuildError


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write(path: Path, entries: list[tuple[zipfile.ZipInfo, bytes]], dist_info: str) -> None:
    """A wheel of `entries` (ZipInfo, bytes) and its dist-info/RECORD, written last."""
    record_name = f"{dist_info}/RECORD"
    lines = [_record_line(info.filename, data) for info, data in entries]
    template = next((info for info, _ in entries if info.filename.startswith(dist_info + "/")), entries[0][0])
    record = zipfile.ZipInfo(record_name, date_time=template.date_time)
    record.compress_type, record.external_attr = zipfile.ZIP_DEFLATED, template.external_attr
    body = ("\n".join(lines + [f"{record_name},,"]) + "\n").encode()
    with zipfile.ZipFile(path, "w") as out:
        for info, data in entries:
            out.writestr(info, data)
        out.writestr(record, body)


def split_out(wheel: Path, folder: str, name: str, out: Path) -> tuple[Path, Path]:
    """Rewrite `wheel` (in place) without the files under `folder` (e.g. "specdec_lab/fonts/"),
    and write those files into a new wheel `name` of the same version in `out`, with no
    dependencies. Returns (the project's wheel, the new wheel). A folder the wheel does not
    have stops the build."""
    if not folder.endswith("/"):
        raise BuildError(f"runtime.toml [kernel.split_out]：{folder!r} 要以 / 結尾（一個資料夾）")
    project, version = wheel.name.split("-")[:2]
    own_info = f"{project}-{version}.dist-info"
    kept, moved = [], []
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename == f"{own_info}/RECORD":
                continue
            (moved if info.filename.startswith(folder) else kept).append((info, z.read(info)))
    if not moved:
        raise BuildError(f"runtime.toml [kernel.split_out]：{wheel.name} 裡沒有 {folder} 底下的檔案")
    dist_name = name.replace("-", "_")
    new_info = f"{dist_name}-{version}.dist-info"
    date = moved[0][0].date_time

    def meta(filename: str, text: str) -> tuple[zipfile.ZipInfo, bytes]:
        info = zipfile.ZipInfo(f"{new_info}/{filename}", date_time=date)
        info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, moved[0][0].external_attr
        return info, text.encode()
    metadata = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                f"Summary: {folder} of {project}, split out of its wheel for the course's lab\n")
    generator = "Wheel-Version: 1.0\nGenerator: specdec-lab site/lab/builder/split_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    target = out / f"{dist_name}-{version}-py3-none-any.whl"
    _write(target, moved + [meta("METADATA", metadata), meta("WHEEL", generator)], new_info)
    _write(wheel, kept, own_info)
    return wheel, target
