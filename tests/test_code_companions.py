"""Source files of languages a project writes beside its main one."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.search.code import CODE_EXTENSIONS
from brain.search.definitions import scan_definitions
from brain.search.locate import extract_signals


def _names(text: str, lang: str) -> set[tuple[str, str]]:
    return {(qual, kind) for _, kind, qual, _ in scan_definitions(text, lang).symbols}


# -- companion languages ----------------------------------------------------------------


def test_companion_extensions_are_indexed_languages():
    for ext in (".jq", ".lua", ".pl", ".pm", ".y", ".l", ".bash"):
        assert ext in CODE_EXTENSIONS
    # the main languages keep their own names
    assert CODE_EXTENSIONS[".py"] == "python" and CODE_EXTENSIONS[".c"] == "c" and CODE_EXTENSIONS[".hh"] == "cpp"


def test_jq_definitions_and_imports():
    text = ('def gsub($re; str): sub($re; str; "g");\ndef nth($n): .[$n];\n  def inner: 1;\n'
            '# def commented: 2;\nimport "lib/x" as x;\ninclude "y";\n')
    scan = scan_definitions(text, "jq")
    assert {("gsub", "function"), ("nth", "function"), ("inner", "function")} <= _names(text, "jq")
    assert ("commented", "function") not in _names(text, "jq")
    assert scan.imports == ["lib/x", "y"]


def test_lua_perl_shell_definitions():
    lua = ('local M = {}\nlocal json = require("cjson.safe")\nfunction M.util.encode(x)\nend\n'
           "function obj:close()\nend\nlocal function helper()\nend\nM.decode = function(s) end\n")
    assert {("M.encode", "method"), ("obj.close", "method"), ("helper", "function"),
            ("M.decode", "method")} <= _names(lua, "lua")
    assert scan_definitions(lua, "lua").imports == ["cjson.safe"]
    perl = "package App::Util;\nuse strict;\nsub parse_args {\n}\n"
    assert {("App::Util", "class"), ("parse_args", "function")} <= _names(perl, "perl")
    shell = "#!/bin/sh\n. ./lib/common.sh\nusage() {\n}\nfunction cleanup {\n}\nif [ -x a ]; then\n  run\nfi\n"
    assert _names(shell, "shell") == {("usage", "function"), ("cleanup", "function")}
    assert scan_definitions(shell, "shell").imports == ["./lib/common.sh"]


def test_a_companion_path_in_the_text_is_a_path():
    sig = extract_signals("nth/2 is strange\n\n--- a/src/builtin.jq\n+++ b/src/builtin.jq\n and lib/x.lua:12")
    written = {p for p, _ in sig.paths}
    assert {"a/src/builtin.jq", "lib/x.lua"} <= written


@pytest.fixture
def jqlike(brain):
    repo = brain.repo
    files = {
        "src/builtin.c": "#include <regex.h>\nstatic jv f_match(jq_state *jq, jv input, jv regex) {\n  return input;\n}\n",
        "src/builtin.jq": "def sub($re; str): . as $in | [match($re)] | .[0];\ndef gsub($re; str): sub($re; str; \"g\");\n"
                          "def ascii_downcase: explode | implode;\n",
        "src/execute.c": "jv jq_next(jq_state *jq) {\n  return jv_invalid();\n}\n",
        "tests/modules/a.jq": "def gsub: 1;\n",
    }
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    brain.write("now.md", "# Now\n\nFix the bugs.\n")
    return brain


def test_a_builtin_written_in_the_companion_language_ranks_its_file(jqlike):
    ranked = jqlike.locate("gsub loops infinitely with \"^\"\n\n`jq '.key|=gsub(\"^\";\"\")'` never ends").paths
    assert ranked[0] == "src/builtin.jq"
    assert "tests/modules/a.jq" not in ranked[:2]
