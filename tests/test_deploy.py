"""Deployment as an instructor does it (README 部署): the GitHub Pages workflow is valid and runs
the README's own commands; `make serve` listens on 127.0.0.1 unless told otherwise."""
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from support.site import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_command(after: str) -> str:
    """The first ```bash block after the README line containing `after`."""
    tail = README[README.index(after):]
    return re.search(r"```bash\n(.*?)\n```", tail, re.S)[1].strip()


def tool(name):
    path = shutil.which(name, path=str(ROOT / ".venv" / "bin")) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: it comes with the test extra (pip install -e '.[dev]')")
    return path


def test_workflow_matches_github_schema():
    result = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                             str(WORKFLOW)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_finds_nothing():
    result = subprocess.run([tool("actionlint"), "-no-color", str(WORKFLOW)], capture_output=True,
                            text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflow_tests_then_publishes_the_site_built_for_its_url():
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["build"]["steps"]
    runs = [step.get("run", "").strip() for step in steps]
    test_command = readme_command("跑完整測試")
    assert test_command in runs, f"the workflow does not run the README's test command {test_command!r}"
    build = next(step for step in steps if step.get("run", "").strip() == "make site")
    assert "SPECDEC_SITE_URL" in build.get("env", {}), "the site is not built for the Pages URL"
    assert runs.index(test_command) < steps.index(build), "the site is published before the tests ran"
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "build/site"


def test_readme_deploy_section_names_the_build_command():
    assert "SPECDEC_SITE_URL=https://" in readme_command("## 部署"), "部署 starts with the build command"
    assert ".github/workflows/pages.yml" in README


def test_every_document_the_readme_and_docs_link_exists():
    """The README is short and sends instructors and deployers on (docs/authoring.md, tests/,
    benchmarks/, site/lab/): each relative link in it and in those pages reaches a file."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links {target}, which is not there"
    readme = README
    for doc in ("docs/authoring.md", "docs/architecture.md", "site/lab/README.md", "tests/README.md",
                "benchmarks/README.md"):
        assert f"({doc})" in readme, f"the README does not link {doc}"


@pytest.mark.parametrize("url, ok", [("", False), ("127.0.0.1:8000", False),
                                     ("https://teacher.github.io/specdec-lab/", True),
                                     ("http://192.0.2.7:8000/", True)])
def test_make_site_wants_the_public_url(url, ok):
    """A build for upload must know its URL (the 404 page under a subpath, canonical links)."""
    env = {k: v for k, v in os.environ.items() if k != "SPECDEC_SITE_URL"}
    env["SPECDEC_SITE_URL"] = url
    result = subprocess.run(["make", "-s", "site-url"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=30)
    assert (result.returncode == 0) == ok, result.stderr
    if not ok:
        assert "SPECDEC_SITE_URL=https://" in result.stderr and "部署" in result.stderr


def test_serve_answers_a_missing_url_with_the_sites_404_page(tmp_path):
    import threading
    import urllib.error
    import urllib.request

    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py

    (tmp_path / "404.html").write_text("<h1>404：找不到這一頁</h1>", encoding="utf-8")
    server = serve.make_server(tmp_path, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{server.server_address[1]}/no/such/page/", timeout=10)
        assert missing.value.code == 404
        assert "找不到這一頁" in missing.value.read().decode("utf-8")
    finally:
        server.shutdown()
        server.server_close()


def test_serve_listens_on_loopback_unless_told_otherwise(monkeypatch):
    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py

    monkeypatch.delenv("HOST", raising=False)
    assert serve.parse_options([]).host == "127.0.0.1"
    assert serve.parse_options(["--host", "0.0.0.0"]).host == "0.0.0.0"
    monkeypatch.setenv("HOST", "0.0.0.0")          # make serve HOST=0.0.0.0 passes --host; env too
    assert serve.parse_options([]).host == "0.0.0.0"
    server = serve.make_server(ROOT, 0, host="0.0.0.0")
    try:
        assert server.server_address[0] == "0.0.0.0"
    finally:
        server.server_close()


@pytest.mark.parametrize("name", ["big.bin", "big.js"])     # sent as it is, and gzip-compressed
def test_serve_says_one_short_line_when_a_client_leaves_mid_download(tmp_path, capfd, name):
    """A student who closes the tab while Pyodide downloads costs the teacher's terminal one short
    line, not a BrokenPipe/ConnectionReset traceback (README 教室)."""
    import socket
    import struct
    import threading
    import time

    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py

    # 16 MB that gzip cannot shrink much: more than the sockets buffer, so the server is still
    # writing when the client goes
    (tmp_path / name).write_bytes(os.urandom(16 * 1024 * 1024))
    server = serve.make_server(tmp_path, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as client:
            client.sendall(f"GET /{name} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n".encode())
            assert client.recv(65536).startswith(b"HTTP/1.0 200")
            # leave with a reset (SO_LINGER 0), as a closed tab or a dropped Wi-Fi does
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        deadline = time.monotonic() + 20
        said = ""
        while time.monotonic() < deadline:   # until the server has said what it says about it
            said += capfd.readouterr().err
            if "中途離開" in said or said.count("-" * 40) >= 2:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the server said nothing about the client that left within 20 s: {said!r}")
    finally:
        server.shutdown()
        server.server_close()
    lines = said.strip().splitlines()
    assert "Traceback" not in said and len(lines) == 1 and len(lines[0]) <= 120, said
    assert name in lines[0]


def test_a_preview_tab_leaving_its_reload_wait_is_not_announced_as_a_learner(tmp_path, capfd):
    """`make serve` answers each lesson tab's long poll (/__reload) when a rebuild is done; the
    instructor's own tab reloads then and leaves its wait. That printed "中途離開：/__reload?v=…",
    the line the README says means a student closed a tab mid-download."""
    import socket
    import struct
    import threading
    import time

    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py

    reloader = serve.Reloader()
    server = serve.make_server(tmp_path, 0, reloader=reloader)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as client:
            client.sendall(f"GET {serve.RELOAD_PATH}?v={reloader.version} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            time.sleep(0.3)                                  # the server is waiting for a rebuild
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        time.sleep(0.3)
        with reloader.changed:                               # a rebuild is done: the answer goes out
            reloader.version = str(time.time())
            reloader.changed.notify_all()
        time.sleep(1.0)
        said = capfd.readouterr().err
    finally:
        server.shutdown()
        server.server_close()
    assert "中途離開" not in said and "Traceback" not in said, said


def test_make_serve_says_a_busy_port_before_it_builds(monkeypatch, capsys):
    """A second `make serve` on a port in use ended, after the whole build, in an English
    traceback (OSError: Address already in use)."""
    import socket

    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py

    monkeypatch.setattr(serve.build, "main", lambda argv: pytest.fail("built before finding the port busy"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert serve.main(["--port", str(port), "--no-watch"]) == 2
    said = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in said and f"make serve PORT={port + 1}" in said and "Traceback" not in said


def test_make_serve_builds_the_lessons_for_the_port_it_serves(monkeypatch):
    """Material's instant navigation follows only links to the site's own URL: built for :8000 and
    served on another port (make serve PORT=8301), every click reloaded the page."""
    sys.path.insert(0, str(ROOT / "site"))
    import serve  # site/serve.py

    built_for = []
    monkeypatch.delenv("SPECDEC_SITE_URL", raising=False)
    monkeypatch.setattr(serve.build, "main", lambda argv: built_for.append(os.environ.get("SPECDEC_SITE_URL")) or 0)
    served = []
    monkeypatch.setattr(serve.SiteServer, "serve_forever", lambda self: served.append(self.server_address[1]))
    assert serve.main(["--port", "0", "--no-watch"]) == 0
    assert built_for == [f"http://127.0.0.1:{served[0]}/"]
