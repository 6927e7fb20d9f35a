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
        assert deferred.pattern == source and deferred.compiled() is eager  # re's own cache: the same object


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
