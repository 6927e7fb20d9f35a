"""brain.lean: pathlib imported without urllib.parse behaves as the real one (in fresh processes: the test
process imported pathlib long ago)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _fresh(code: str):
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC},
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_brain_imports_pathlib_without_urllib_parse_and_as_uri_is_the_same():
    paths = ["/a b/ü/c%d#?.txt", "/", "/x/y", "/tmp/\u4e2d\u6587 file"]
    lean = _fresh("import sys, json\nimport brain\nimport pathlib\n"
                  "before = ['urllib.parse' in sys.modules, 'ipaddress' in sys.modules]\n"
                  f"uris = [pathlib.PurePosixPath(p).as_uri() for p in {paths!r}]\n"
                  "win = pathlib.PureWindowsPath('c:/a b/ü').as_uri()\n"
                  "import urllib.parse, urllib\n"
                  "real = urllib.parse is sys.modules['urllib.parse'] and urllib.parse.__spec__ is not None\n"
                  "print(json.dumps([before, uris, win, real, urllib.parse.quote('a b'), hasattr(urllib.parse, 'urlsplit')]))")
    plain = _fresh("import json, pathlib\n"
                   f"print(json.dumps([[pathlib.PurePosixPath(p).as_uri() for p in {paths!r}],"
                   " pathlib.PureWindowsPath('c:/a b/ü').as_uri()]))")
    before, uris, win, real, quoted, has_split = lean
    assert before == [False, False]
    assert [uris, win] == plain
    assert real and quoted == "a%20b" and has_split


def test_nothing_changes_when_pathlib_or_urllib_parse_is_already_imported():
    for first in ("import pathlib", "import urllib.parse"):
        got = _fresh(f"import sys, json\n{first}\nimport brain, pathlib, urllib.parse\n"
                     "from urllib.parse import quote_from_bytes\n"
                     "print(json.dumps([pathlib.urlquote_from_bytes is quote_from_bytes,"
                     " urllib.parse is sys.modules['urllib.parse']]))")
        assert got == [True, True]


def test_the_stand_in_passes_other_names_to_the_real_module_and_leaves():
    got = _fresh("import sys, json\nfrom brain import lean\n"
                 "seen = []\n"
                 "import builtins\nreal_import = builtins.__import__\n"
                 "def spy(name, *a, **k):\n"
                 "    if name == 'pathlib' and 'urllib.parse' in sys.modules:\n"
                 "        m = sys.modules['urllib.parse']\n"
                 "        seen.append(m.urlsplit('http://h/p').netloc)\n"
                 "    return real_import(name, *a, **k)\n"
                 "builtins.__import__ = spy\n"
                 "for m in ('pathlib',): sys.modules.pop(m, None)\n"
                 "lean.import_pathlib()\nbuiltins.__import__ = real_import\n"
                 "import urllib.parse\n"
                 "print(json.dumps([seen, urllib.parse is sys.modules['urllib.parse'], urllib.parse.__spec__ is not None]))")
    assert got == [["h"], True, True]
