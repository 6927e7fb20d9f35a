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


# -- KeptModules: brain's modules from the code a process before kept ------------------------------------

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

PROBE = ("import sys, json, brain, brain.tokens as t, brain.search.service as s\n"
         "from brain.lean import _KeptLoader\n"
         "print(json.dumps([type(t.__loader__).__name__, t.__file__, t.__spec__.cached, s.__spec__.parent,\n"
         "                  getattr(t, 'MARKER', None), t.estimate_tokens('parse the Http response'),\n"
         "                  t.estimate_tokens.__code__.co_filename, isinstance(t.__loader__, _KeptLoader)]))\n")


@pytest.fixture
def copy(tmp_path):
    """A copy of the package (its sources only), and a brain home of its own."""
    src = tmp_path / "src"
    shutil.copytree(Path(SRC) / "brain", src / "brain", ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    home.mkdir()
    return src, home


def _run(src, home, code=PROBE, *flags):
    env = {**os.environ, "PYTHONPATH": str(src), "BRAIN_HOME": str(home)}
    out = subprocess.run([sys.executable, *flags, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _kept_file(home):
    found = list((home / "cache").glob("modules.*.blobs"))
    return found[0] if found else None


def test_a_second_process_runs_the_kept_code_with_the_same_module_attributes(copy):
    src, home = copy
    first = _run(src, home)
    assert _kept_file(home) is not None
    second = _run(src, home)
    tokens = str(src / "brain" / "tokens.py")
    assert first == second
    assert second[1] == tokens and second[6] == tokens  # __file__ and the code's own file name
    assert second[2].endswith(".pyc") and second[3] == "brain.search"
    assert second[7] is True


def test_an_edited_source_is_loaded_again_and_kept_anew(copy):
    src, home = copy
    _run(src, home)
    path = src / "brain" / "tokens.py"
    path.write_text(path.read_text() + "\nMARKER = 1\n")  # a new size
    assert _run(src, home)[4] == 1
    # the same size, another mtime: still the new text
    text = path.read_text().replace("MARKER = 1", "MARKER = 2")
    st = path.stat()
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert _run(src, home)[4] == 2
    assert _run(src, home)[4] == 2  # and kept: a third process gets the same


def test_a_package_added_beside_a_kept_module_is_found_as_the_path_finder_finds_it(copy):
    src, home = copy
    _run(src, home)
    shadow = src / "brain" / "search" / "service"  # a package named as a kept module: it wins, as it would
    shadow.mkdir()
    (shadow / "__init__.py").write_text("WHO = 'package'\n")
    code = "import json, brain.search.service as s\nprint(json.dumps(s.WHO))\n"
    assert _run(src, home, code) == "package"


def test_a_damaged_file_or_another_user_s_changes_nothing(copy):
    src, home = copy
    expected = _run(src, home)
    kept = _kept_file(home)
    kept.write_bytes(b"not marshal")
    assert _run(src, home)[:7] == expected[:7]
    kept.chmod(0o666)  # a file others can write is never read
    assert _run(src, home)[:7] == expected[:7]


def test_optimized_processes_do_not_use_it(copy):
    src, home = copy
    _run(src, home)
    got = _run(src, home, PROBE, "-O")
    assert got[0] == "SourceFileLoader" and got[7] is False


def test_a_process_that_moved_to_another_brain_home_writes_nothing_kept(copy, tmp_path):
    """`brain demo` points BRAIN_HOME into its folder mid-process: nothing is written outside it."""
    src, home = copy
    other = tmp_path / "other"
    other.mkdir()
    code = (f"import os, json, brain\nos.environ['BRAIN_HOME'] = {str(other)!r}\n"
            "import brain.search.service\nprint(json.dumps(1))\n")
    assert _run(src, home, code) == 1
    assert _kept_file(home) is None and _kept_file(other) is None


def test_the_kept_store_is_under_the_home_the_settings_name(tmp_path, monkeypatch):
    """BRAIN_HOME=~/... is the same folder for the kept code as for everything else (not a literal `~`)."""
    from brain.kept import Kept
    from brain.settings import brain_home

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("BRAIN_HOME", "~/brain-home")
    assert Kept("probe").path().startswith(str(brain_home()) + os.sep)
    assert str(brain_home()) == str(tmp_path / "brain-home")


def test_the_modules_store_reads_the_values_it_is_asked_for_and_merges_on_save(tmp_path, monkeypatch):
    from brain.kept import KeptBlobs

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    first = KeptBlobs("probe")
    assert first.get(("a", "/x")) is None
    first.put(("a", "/x"), ("a.py", 1, 2, 3, b"code of a"))
    first.put(("b", "/x"), ("b.py", 4, 5, 6, b""))
    first.save()
    other = KeptBlobs("probe")  # another process, meanwhile: its entry and the first's are both kept
    other.put(("c", "/y"), ("c.py", 7, 8, 9, b"c" * 70_000))
    other.save()
    later = KeptBlobs("probe")
    assert later.get(("a", "/x")) == ("a.py", 1, 2, 3, b"code of a")
    assert later.get(("b", "/x")) == ("b.py", 4, 5, 6, b"")
    assert later.get(("c", "/y")) == ("c.py", 7, 8, 9, b"c" * 70_000)
    assert later.get(("d", "/y")) is None
    path = Path(later.path())
    assert path.name.startswith("probe.") and path.suffix == ".blobs" and path.stat().st_mode & 0o777 == 0o600
    data = path.read_bytes()
    path.write_bytes(data[:-10])  # cut short: the value past the end is not read, the others are
    cut = KeptBlobs("probe")
    assert cut.get(("c", "/y")) is None and cut.get(("a", "/x")) == ("a.py", 1, 2, 3, b"code of a")
    for damaged in (b"", b"\xff" * 8 + data[8:], data[:8] + b"not marshal"):
        path.write_bytes(damaged)
        assert KeptBlobs("probe").get(("a", "/x")) is None
    path.write_bytes(data)
    path.chmod(0o620)  # a file others can write is never read
    assert KeptBlobs("probe").get(("a", "/x")) is None


def test_the_modules_store_reads_alike_where_there_is_no_pread(tmp_path, monkeypatch):
    """Windows has no os.pread: a seek and a read under a lock give the same values."""
    import brain.kept as kept

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    store = kept.KeptBlobs("probe")
    store.put(("a", "/x"), ("a.py", 1, 2, 3, b"code of a"))
    store.put(("b", "/x"), ("b.py", 4, 5, 6, b"b" * 5000))
    store.save()

    def seek_read(fd, length, offset):
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)

    monkeypatch.setattr(kept, "_pread", seek_read)
    later = kept.KeptBlobs("probe")
    assert later.get(("b", "/x")) == ("b.py", 4, 5, 6, b"b" * 5000)
    assert later.get(("a", "/x")) == ("a.py", 1, 2, 3, b"code of a")
