"""A cold `brain boot` imports only what it uses, and the lean CLI dispatch changes no help text.

Speed itself is measured by bench/bench_task_boot.py (a boot without a task against `python -c pass`);
these tests keep the reasons for it from coming back: the modules a no-task boot must not import, and
that building one command's parser gives the same parser as building them all (decision 0038).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

# what a boot without a task never needs: each one costs 2-6 ms of a 30-40 ms process
NOT_ON_THE_BOOT_PATH = ("dataclasses", "inspect", "typing", "hashlib", "shutil", "sqlite3", "subprocess",
                        "urllib.parse", "ipaddress",  # pathlib's, left out by brain.lean
                        "unicodedata")  # ASCII paths are checked without it (a task boot counts non-ASCII text with it)


def _run_in_fresh_process(code: str, cwd) -> str:
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = {**os.environ, "PYTHONPATH": src}  # BRAIN_HOME: the test's own (conftest)
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return out.stdout


@pytest.mark.parametrize("as_json", [False, True])
def test_a_boot_without_a_task_imports_none_of_the_heavy_modules(brain, as_json):
    code = ("import io, json, sys, contextlib\n"
            "from brain.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    code = main(['boot', '--no-record'{', ' + repr('--json') if as_json else ''}])\n"
            f"print(json.dumps([code, out.getvalue(), [m for m in {NOT_ON_THE_BOOT_PATH!r} if m in sys.modules]]))\n")
    code, text, loaded = json.loads(_run_in_fresh_process(code, brain.repo))
    assert code == 0 and "# Boot:" in text
    assert loaded == []


def test_the_heavy_modules_check_can_fail(brain):
    """The check above sees a module the boot did import (so it is not vacuous)."""
    code = ("import sys, json\nimport dataclasses\nfrom brain.cli import main\n"
            f"print(json.dumps([m for m in {NOT_ON_THE_BOOT_PATH!r} if m in sys.modules]))\n")
    assert "dataclasses" in json.loads(_run_in_fresh_process(code, brain.repo))


def _subparsers(parser):
    return next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")


def _describe(parser) -> list:
    """Everything a parser accepts and says, nested parsers included."""
    rows = [parser.prog, parser.format_help(), parser.format_usage()]
    for action in parser._actions:
        rows.append((type(action).__name__, action.option_strings, action.dest, action.nargs, action.default,
                     action.choices if not isinstance(action.choices, dict) else sorted(action.choices),
                     action.required, action.help, action.metavar))
        if isinstance(action.choices, dict):
            rows += [_describe(p) for p in action.choices.values()]
    # handlers by name: a lambda made by another register() call is another object
    rows.append(sorted((k, v.__qualname__ if callable(v) else repr(v)) for k, v in parser._defaults.items()))
    return rows


@pytest.mark.parametrize("columns", ["80", "200"])
def test_one_command_s_parser_is_the_same_as_in_the_full_parser(monkeypatch, columns):
    from brain.cli.main import COMMAND_INDEX, build_parser

    monkeypatch.setenv("COLUMNS", columns)
    full = _subparsers(build_parser()).choices
    for command in COMMAND_INDEX:
        alone = _subparsers(build_parser(command)).choices
        assert list(alone) == [command]
        assert _describe(alone[command]) == _describe(full[command]), command


def test_help_is_formatted_at_the_width_of_the_moment(monkeypatch):
    """The formatter asks the width when it formats, not when the parser is built: a parser built at
    one width and formatted at another says what one built at the second width says."""
    from brain.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "200")
    parser = _subparsers(build_parser("boot")).choices["boot"]
    wide = parser.format_help()
    monkeypatch.setenv("COLUMNS", "40")
    narrow = parser.format_help()
    assert narrow == _subparsers(build_parser("boot")).choices["boot"].format_help()
    assert len(narrow.splitlines()) > len(wide.splitlines())


def test_content_hash_is_sha256():
    from brain.memory.files import content_hash

    for data in (b"", b"# Now\n", bytes(range(256)) * 1000):
        assert content_hash(data) == hashlib.sha256(data).hexdigest()


# what a task boot (search, ranking, the task module's card) never needs: its records are brain.records',
# hashes are cached, nothing logs, no token is checked, git is found without shutil (decision 0043); no
# source text is parsed (ast comes with the first Python file an index or a card reads); the weights are not
# copied, the memory folders not walked (unchanged), no copyright notice read, no report appended
NOT_ON_THE_TASK_BOOT_PATH = ("dataclasses", "inspect", "typing", "hashlib", "shutil", "logging", "pickle", "secrets",
                             "brain.team.tokens", "ast", "urllib.parse", "ipaddress", "copy", "brain.search.memory_walk",
                             "brain.search.copyright", "brain.appendonly")


def _mapped_repo(brain):
    for rel, text in {"shop/__init__.py": "from shop.cart import total\n",
                      "shop/cart.py": "def total(items: list) -> int:\n    \"\"\"Sum of the cart.\"\"\"\n    return sum(items)\n",
                      "billing/invoice.py": "def render_invoice(number: int) -> str:\n    return str(number)\n"}.items():
        (brain.repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (brain.repo / rel).write_text(text)
    brain.map()
    (brain.repo / "task.txt").write_text("The cart total in shop/cart.py is wrong for an empty cart\n")


def _task_boot(brain, before: str = "") -> tuple[dict, list, list]:
    code = (f"import io, json, sys, contextlib\n{before}"
            "from brain.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    code = main(['boot', '--task-file', 'task.txt', '--json', '--no-record'])\n"
            "assert code == 0\n"
            f"print(json.dumps([json.loads(out.getvalue()), [m for m in {NOT_ON_THE_TASK_BOOT_PATH!r} if m in sys.modules],"
            " sorted(m for m in sys.modules if m.startswith('brain.'))]))\n")
    return tuple(json.loads(_run_in_fresh_process(code, brain.repo)))


def test_a_task_boot_imports_none_of_the_modules_it_does_not_use(brain):
    _mapped_repo(brain)
    data, loaded, brain_modules = _task_boot(brain)
    # the boot went the whole way: ranked files, the task's module found through the cards' mapper
    assert "shop/cart.py" in data["files"]
    assert {"brain.search.service", "brain.cards.hashing", "brain.team.identity"} <= set(brain_modules)
    assert loaded == []


def test_the_task_boot_check_can_fail(brain):
    """The check above sees what the token store's import (the team package's, before) used to bring."""
    _mapped_repo(brain)
    _data, loaded, _modules = _task_boot(brain, before="import brain.team.tokens\n")
    assert {"hashlib", "secrets", "brain.team.tokens"} <= set(loaded)


@pytest.mark.parametrize("search", ["", "/nonexistent", os.defpath, "/usr/bin:/usr/bin:/bin"])
def test_git_is_found_where_shutil_which_finds_it(search):
    import shutil

    from brain.gitsafe import _search_path, _which_git

    for path in (search, _search_path()):
        assert _which_git(path) == shutil.which("git", path=path)


def test_a_boot_in_process_leaves_the_collector_as_it_found_it(brain):
    """`main([...])` called by a program (not the `brain` process itself) gets the collector's thresholds
    back and nothing frozen; the `brain` process (`main()` with no argv) freezes what it made, as it ends
    (decision 0066). Both print the same boot, and the boot itself ran at the raised threshold."""
    code = ("import io, gc, json, sys, contextlib\n"
            "from brain.cli import main\n"
            "import brain.workspace as ws\n"
            "seen = []\n"
            "original = ws.Brain.boot\n"
            "ws.Brain.boot = lambda self, *a, **k: seen.append(gc.get_threshold()[0]) or original(self, *a, **k)\n"
            "gc.set_threshold(700, 10, 10)\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    code = main(['boot', '--no-record', '--json'])\n"
            "in_process = [code, gc.get_threshold(), gc.get_freeze_count(), json.loads(out.getvalue())['text']]\n"
            "sys.argv = ['brain', 'boot', '--no-record', '--json']\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    code = main()\n"
            "print(json.dumps([seen, in_process, [code, gc.get_threshold(), gc.get_freeze_count() > 0, "
            "json.loads(out.getvalue())['text']]]))\n")
    seen, in_process, as_process = json.loads(_run_in_fresh_process(code, brain.repo))
    assert seen == [100_000, 100_000]
    assert in_process[:3] == [0, [700, 10, 10], 0]
    assert as_process[:3] == [0, [700, 10, 10], True]
    assert in_process[3] == as_process[3] and "# Boot:" in in_process[3]
