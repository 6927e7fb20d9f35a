"""Package build scripts (``setup.py``, ``Gruntfile.js``, ``rollup.config.js``) are reached as neighbours of the
product files they build (``brain.search.buildscripts``, share ``package_build``).

Each repository is written to disk and indexed for real; the ranking is compared with the share at 0, so
the tests fail without the link."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.search.buildscripts import is_build_script, package_build_scripts
from brain.search.locate import locate
from brain.search.weights import shipped_weights


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("path, expected", [
    ("setup.py", True), ("pkg/setup.py", True), ("Gruntfile.js", True), ("gulpfile.mjs", True),
    ("rollup.config.js", True), ("webpack.config.ts", True), ("tsdx.config.js", True),
    ("jest.config.js", False), ("eslint.config.mjs", False), ("conftest.py", False), ("setup_utils.py", False),
    ("src/build.js", False),
])
def test_build_scripts_by_name(path, expected):
    assert is_build_script(path) is expected


def test_the_nearest_package_s_script_of_the_file_s_language(brain):
    repo = brain.repo
    _write(repo, "setup.py", "from setuptools import setup\nsetup(name='tool', packages=['tool'])\n")
    _write(repo, "tool/core.py", "def run():\n    return 1\n")
    _write(repo, "web/rollup.config.js", "export default { input: 'src/index.js' };\n")
    _write(repo, "web/src/index.js", "export function start() { return 1; }\n")
    _write(repo, "web/src/util/pad.js", "export function pad(s) { return s; }\n")
    _write(repo, "tests/test_core.py", "def test_run():\n    assert True\n")
    brain.reindex()
    view = brain.index.code_view()
    assert package_build_scripts(view, "tool/core.py") == ["setup.py"]
    assert package_build_scripts(view, "web/src/util/pad.js") == ["web/rollup.config.js"]  # not the Python one
    assert package_build_scripts(view, "tests/test_core.py") == []  # a test serves no package
    assert package_build_scripts(view, "setup.py") == []


def test_a_setup_script_is_reached_as_a_neighbour_below_the_file_it_serves(brain):
    repo = brain.repo
    _write(repo, "setup.py", "from setuptools import setup\n\nsetup(name='resizer', packages=['resizer'],\n"
                             "      install_requires=['pillow'])\n")
    _write(repo, "resizer/widget.py", "def resize_widget(width):\n    return width * 2\n")
    _write(repo, "resizer/other.py", "def unrelated():\n    return 0\n")
    brain.reindex()
    text = "resize_widget doubles the width"
    off = locate(brain.index.code_view(), text, weights=shipped_weights().replace({"package_build": 0.0}))
    assert not any(r.startswith("build script of") for h in off.files for r in h.reasons)
    found = locate(brain.index.code_view(), text)
    assert found.paths[:2] == ["resizer/widget.py", "setup.py"]
    assert found.files[1].reasons == ["build script of `resizer/widget.py`'s package"]
