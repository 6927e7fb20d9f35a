"""brain.lazyre: a pattern compiled at its first use answers as re.compile's would."""

from __future__ import annotations

import re
import subprocess
import sys

from brain.lazyre import lazy


def test_a_lazy_pattern_answers_like_the_compiled_one():
    text = "File \"a/b.py\", line 12, in run\nfile \"c.py\", LINE 3"
    for source, flags in ((r"File \"([^\"]+)\", line (\d+)", 0), (r"file \"([^\"]+)\", line (\d+)", re.I),
                          (rb"[a-z]+", 0)):
        subject = text.encode() if isinstance(source, bytes) else text
        eager, deferred = re.compile(source, flags), lazy(source, flags)
        assert deferred.findall(subject) == eager.findall(subject)
        assert [m.span() for m in deferred.finditer(subject)] == [m.span() for m in eager.finditer(subject)]
        assert deferred.sub(b"-" if isinstance(source, bytes) else "-", subject) == eager.sub(
            b"-" if isinstance(source, bytes) else "-", subject)
        assert deferred.flags == eager.flags and deferred.groups == eager.groups
        assert deferred.pattern == source and deferred.compiled() == eager  # the same program (lazyre.compile)


def test_nothing_is_compiled_before_the_first_use():
    deferred = lazy(r"(unbalanced")  # a compile would raise
    assert deferred.pattern == "(unbalanced"
    try:
        deferred.search("x")
    except re.error:
        pass
    else:
        raise AssertionError("the pattern was not compiled at its first use")


def test_importing_the_cli_compiles_no_pattern_of_the_search_modules():
    """The modules a boot without a task imports leave their patterns uncompiled."""
    code = ("import re, re._compiler, sys\n"
            "seen = []\n"
            "real = re._compiler.compile\n"
            "def spy(p, f=0):\n"
            "    frame = sys._getframe(1)\n"
            "    while frame is not None and frame.f_code.co_filename.startswith(re.__file__.rsplit('/', 1)[0]):\n"
            "        frame = frame.f_back\n"
            "    if frame is not None and '/brain/' in frame.f_code.co_filename:\n"
            "        seen.append((frame.f_code.co_filename, frame.f_lineno))\n"
            "    return real(p, f)\n"
            "re._compiler.compile = spy\n"
            "import brain.cli.main, brain.search.signals, brain.search.code, brain.search.quotes, brain.gitsafe, brain.tokens\n"
            "print(seen)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


_KEPT_CHECK = (
    "import re, sys, json\n"
    "from brain import lazyre\n"
    "subject = 'File \"a/b.py\", line 12, in run ENV_X=1 \u65e5\u672c sk-' + 'a' * 20\n"
    "patterns = [(r'File \"([^\"]+)\", line (\\d+)(?:, in (?P<fn>[\\w<>.]+))?', 0), (r'[\u2e80-\u9fff]+', 0),\n"
    "            (r'env_(?P<name>\\w+)', re.I), (rb'[a-z]+', 0)]\n"
    "out = []\n"
    "for source, flags in patterns:\n"
    "    got, want = lazyre.compile(source, flags), re.compile(source, flags)\n"
    "    s = subject.encode() if isinstance(source, bytes) else subject\n"
    "    out.append([got == want, got is want, got.groupindex == want.groupindex, got.groups == want.groups,\n"
    "                [m.span() for m in got.finditer(s)] == [m.span() for m in want.finditer(s)]])\n"
    "print(json.dumps([out, len(lazyre._kept().entries())]))\n"
)


def _kept_run(home) -> tuple[list, int]:
    import json
    import os

    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = {**os.environ, "PYTHONPATH": src, "BRAIN_HOME": str(home)}
    out = subprocess.run([sys.executable, "-c", _KEPT_CHECK], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_a_kept_program_builds_the_same_pattern_in_the_next_process(tmp_path):
    """The first process compiles (re's own object) and keeps the programs; the next builds equal patterns
    from them (not re's cached objects: built from the file), and they find the same matches."""
    first, kept_before = _kept_run(tmp_path)
    assert kept_before == 0 and all(row == [True, True, True, True, True] for row in first)
    files = list((tmp_path / "cache").glob("patterns.*"))
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700
    second, kept = _kept_run(tmp_path)
    assert kept == 4 and all(row == [True, False, True, True, True] for row in second)


def test_a_damaged_or_foreign_file_compiles_as_re_does(tmp_path):
    _kept_run(tmp_path)
    kept = next((tmp_path / "cache").glob("patterns.*"))
    import marshal

    data = marshal.loads(kept.read_bytes())
    for entry in data["entries"].values():
        entry[1][:] = [999999] * len(entry[1])  # a program the interpreter refuses
    kept.write_bytes(marshal.dumps(data))
    rows, count = _kept_run(tmp_path)
    assert count == 4 and all(row[0] and row[1] and row[4] for row in rows)  # refused: re.compile's own objects
    kept.write_bytes(b"not marshal data")
    rows, count = _kept_run(tmp_path)
    assert count == 0 and all(row[0] and row[1] for row in rows)
    data["version"] = "another interpreter"
    kept.write_bytes(marshal.dumps(data))
    assert _kept_run(tmp_path)[1] == 0


_RECORD_CHECK = (
    "import json\n"
    "from brain import records\n"
    "from brain.search.functions import DefRow\n"
    "row = DefRow(1, 'a.py', 'f', 'f', 'function', 1, 2, 2, True, 'def f():')\n"
    "print(json.dumps([len(records._KEPT.entries()), repr(row), DefRow.__init__.__code__.co_filename,\n"
    "                  row == DefRow(1, 'a.py', 'f', 'f', 'function', 1, 2, 2, True, 'def f():')]))\n"
)


def test_records_are_built_from_kept_code_in_the_next_process(tmp_path):
    """A record's ``__init__`` compiled by one process is kept; the next builds the same record from it."""
    import json
    import os

    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = {**os.environ, "PYTHONPATH": src, "BRAIN_HOME": str(tmp_path)}
    runs = [json.loads(subprocess.run([sys.executable, "-c", _RECORD_CHECK], env=env, capture_output=True, text=True,
                                      check=True).stdout) for _ in range(2)]
    assert runs[0][0] == 0 and runs[1][0] > 0
    assert runs[0][1:] == runs[1][1:] == [
        "DefRow(id=1, path='a.py', qual='f', name='f', kind='function', start=1, end=2, body_start=2, exported=True, "
        "signature='def f():', bases=())", "<record DefRow>", True]
    kept = next((tmp_path / "cache").glob("records.*"))
    kept.write_bytes(b"\0damaged")
    third = json.loads(subprocess.run([sys.executable, "-c", _RECORD_CHECK], env=env, capture_output=True, text=True,
                                      check=True).stdout)
    assert third[0] == 0 and third[1:] == runs[0][1:]  # nothing kept read: compiled again


def test_a_kept_file_others_could_write_is_never_used(tmp_path):
    """Kept code runs unchecked, as a .pyc does: a file the group or others may write is ignored (and a link)."""
    import os

    _kept_run(tmp_path)
    kept = next((tmp_path / "cache").glob("patterns.*"))
    assert _kept_run(tmp_path)[1] == 4
    os.chmod(kept, 0o620)
    rows, count = _kept_run(tmp_path)
    assert count == 0 and all(row[0] and row[1] for row in rows)  # compiled as re does, nothing read
    os.chmod(kept, 0o600)
    moved = kept.with_name("elsewhere")
    os.replace(kept, moved)
    os.symlink(moved, kept)
    assert _kept_run(tmp_path)[1] == 0
