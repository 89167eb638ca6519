"""`gdcourse lab`: students' JupyterLab from the course venv, without nbgrader's instructor tools."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gdcourse import lab

ROOT = Path(__file__).resolve().parent.parent


def _serve(env, folder: Path, port: int) -> subprocess.Popen:
    cmd = [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", "--IdentityProvider.token=t", f"--ServerApp.root_dir={folder}",
           "--allow-root"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder)


def _get(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers={"Authorization": "token t"}), timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _page_config(env, folder: Path) -> tuple[dict, int]:
    """The lab page's configuration and the status of /formgrader, from a server started with ``env``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = _serve(env, folder, port)
    try:
        deadline = time.time() + 60
        while True:
            try:
                status, page = _get(f"http://127.0.0.1:{port}/lab")
                if status == 200:
                    break
            except OSError:
                pass
            assert time.time() < deadline and server.poll() is None, "jupyter lab did not start"
            time.sleep(0.3)
        data = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
        return json.loads(data.group(1)), _get(f"http://127.0.0.1:{port}/formgrader")[0]
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    plain = _page_config(dict(__import__("os").environ), folder)
    config = lab.write_config(tmp_path_factory.mktemp("config"))
    student = _page_config(lab.environment(config), folder)
    return plain, student


def test_the_student_lab_has_no_instructor_tools(pages):
    (plain, plain_formgrader), (student, student_formgrader) = pages
    disabled = student.get("disabledExtensions", [])
    assert set(lab.INSTRUCTOR_PLUGINS) <= set(disabled)
    assert "@jupyter/nbgrader:validate-assignment" not in disabled, "students keep Validate"
    assert student_formgrader == 404
    # and the instructor's own lab, from the same venv, still has them
    assert not set(lab.INSTRUCTOR_PLUGINS) & set(plain.get("disabledExtensions", []))
    assert plain_formgrader in (200, 302)


def test_the_plugins_we_turn_off_exist_in_nbgrader():
    """If nbgrader renames a plugin, disabling the old name would silently do nothing."""
    static = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader" / "static"
    bundle = "\n".join(p.read_text(errors="ignore") for p in static.glob("*.js"))
    for plugin in lab.INSTRUCTOR_PLUGINS + ("@jupyter/nbgrader:validate-assignment",):
        assert f'"{plugin}"' in bundle or f"'{plugin}'" in bundle, plugin
