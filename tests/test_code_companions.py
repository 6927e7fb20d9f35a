"""Source files of languages a project writes beside its main one, and copied-in third-party folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from card_helpers import write
from brain.search.code import CODE_EXTENSIONS, FolderMarks, copyright_holder, scan_files, vendored_folders
from brain.search.definitions import scan_definitions
from brain.search.locate import extract_signals


def _names(text: str, lang: str) -> set[tuple[str, str]]:
    return {(qual, kind) for _, kind, qual, _ in scan_definitions(text, lang).symbols}


# -- companion languages ----------------------------------------------------------------


def test_companion_extensions_are_indexed_languages():
    for ext in (".jq", ".lua", ".pl", ".pm", ".y", ".l", ".sh"):
        assert ext in CODE_EXTENSIONS
    # completion scripts repeat every option and its help: not code a report is about
    assert ".zsh" not in CODE_EXTENSIONS and ".bash" not in CODE_EXTENSIONS
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


# -- copied-in third-party folders ------------------------------------------------------------


@pytest.mark.parametrize("head,holder", [
    ("/* ------ */\n/* Copyright (c) IBM Corporation, 2000, 2010.  All rights reserved.   */\n", {"ibm"}),
    ("// Copyright 2019 The Go Authors. All rights reserved.\n", {"go"}),
    ("/*!\n * express\n * Copyright(c) 2009-2013 TJ Holowaychuk\n", {"tj", "holowaychuk"}),
    ("jq is copyright (C) 2012 Stephen Dolan\n\nPermission is hereby granted", {"stephen", "dolan"}),
    ("# Copyright \N{COPYRIGHT SIGN} 2021 Example Ltd\n", {"example"}),
    ('"Licensor" shall mean the copyright owner or entity\n', set()),
    ("Copyright [yyyy] [name of copyright owner]\n", set()),
    ("int main(void) { return 0; }\n", set()),
])
def test_copyright_holder(head, holder):
    assert copyright_holder(head) == frozenset(holder)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        write(root, rel, text)
    return root


_IBM = "/* Decimal arithmetic */\n/* Copyright (c) IBM Corporation, 2000, 2009.  All rights reserved. */\nint x;\n"


def test_a_library_copied_in_with_its_license_and_another_holder_is_vendored(tmp_path):
    repo = _tree(tmp_path, {
        "COPYING": "jq is copyright (C) 2012 Stephen Dolan\n\nPermission is hereby granted\n",
        "src/main.c": "int main(void) { return 0; }\n",
        "src/jv.c": "/*\n * Portions Copyright (c) 2016 Some University\n */\nint jv;\n",
        "src/decNumber/ICU-license.html": "<html>ICU License</html>\n",
        "src/decNumber/decNumber.c": _IBM, "src/decNumber/decNumber.h": _IBM, "src/decNumber/decContext.c": _IBM,
        # an attribution license beside the project's own code: its files carry no notice
        "src/gis/LICENSE": "Copyright (c) 2007, Some Person\nRedistribution and use ...\n",
        "src/gis/geometry.c": "int area(void) { return 0; }\n", "src/gis/point.c": "int x(void) { return 0; }\n",
    })
    assert vendored_folders(repo) == {"src/decNumber"}


def test_a_licensed_folder_of_the_projects_own_holder_is_not_vendored(tmp_path):
    header = "/*!\n * Copyright(c) 2009-2013 TJ Holowaychuk\n * MIT Licensed\n */\nmodule.exports = 1;\n"
    repo = _tree(tmp_path, {
        "LICENSE": "(The MIT License)\n\nCopyright (c) 2009-2014 TJ Holowaychuk <tj@vision-media.ca>\n",
        "index.js": "module.exports = require('./lib/app');\n",
        "lib/LICENSE": "the same license\n", "lib/app.js": header, "lib/router.js": header, "lib/view.js": header,
    })
    assert vendored_folders(repo) == set()
    # the same folder with no holder in the root license: the other files' holder is the project's
    (repo / "LICENSE").write_text("Apache License\n\n\"Licensor\" shall mean the copyright owner\n")
    _tree(repo, {"bin/cli.js": header, "src/util.js": header})
    assert vendored_folders(repo) == set()


def test_the_index_walk_notes_the_same_vendored_folders_as_a_walk_of_their_own(tmp_path):
    # the code index's one walk (scan_files) notes the folders; vendored_folders then walks nothing
    repo = _tree(tmp_path, {
        "COPYING": "Copyright (c) 2012 Stephen Dolan\n",
        "src/jv_print.c": "void jv_dumpf(int x) {\n}\n",
        "src/decNumber/LICENSE": "ICU\n", "src/decNumber/decNumber.c": _IBM + "void d(int x) {\n}\n",
        "src/decNumber/decContext.c": _IBM,
        "third_party/zlib/LICENSE": "zlib\n", "third_party/zlib/deps/x.c": _IBM,
        "third_party/zlib/inflate.c": _IBM, "lib/deps/y.c": "int y;\n",
        "pkg.egg-info/LICENSE": "x\n", "tools/LICENSE.txt": "mine\n", "tools/a.c": "int a;\n",
    })
    marks = FolderMarks()
    files = scan_files(repo, marks)
    alone = vendored_folders(repo)
    assert alone == {"src/decNumber", "third_party", "lib/deps"}
    assert vendored_folders(repo, files, marks) == alone


def test_folders_named_as_copies_of_other_libraries_are_vendored(tmp_path):
    # the spellings projects give a folder of third-party code (`3rd-party/eigen`), or a library bundled inside
    # the product's own tree (`include/log/fmt/bundled`); a folder merely containing the word is not one
    repo = _tree(tmp_path, {
        "src/main.cpp": "int main() { return 0; }\n", "3rd-party/eigen/Core.h": "int e;\n",
        "lib/3rd_party/x.c": "int x;\n", "include/log/fmt/bundled/format.h": "int f;\n",
        "include/log/bundled_sinks/s.h": "int s;\n", "src/bundler/b.cpp": "int b;\n",
    })
    assert vendored_folders(repo) == {"3rd-party", "lib/3rd_party", "include/log/fmt/bundled"}


def test_vendored_files_are_marked_generated_in_the_index(brain):
    _tree(brain.repo, {
        "COPYING": "Copyright (c) 2012 Stephen Dolan\n",
        "src/jv_print.c": "void jv_dumpf(int x) {\n}\n",
        "src/decNumber/readme.txt": "decNumber\n", "src/decNumber/LICENSE": "ICU\n",
        "src/decNumber/decNumber.c": _IBM + "void decNumberToString(int x) {\n}\n", "src/decNumber/decContext.c": _IBM,
    })
    brain.index.refresh_code()
    view = brain.index.code_view()
    assert "src/decNumber/decNumber.c" in view.generated and "src/jv_print.c" not in view.generated


# -- the command line: the program's entry point ------------------------------------------------------


@pytest.mark.parametrize("title,cli", [
    ("Commit 6d3d2750 now requires '-e' to detect syntax error in input", True),
    ("Allow `--` to come just before the jq program", True),
    ("Assertion failure when using --jsonargs with invalid JSON", True),
    ("support no_color env to disable ansi_color output", True),
    ("Wrong exit code when the input is empty", True),
    ("Array indexing of negative indices wraps twice", False),
    ("non-blocking read - returns early", False),
    ("Add re-export of Sender", False),
])
def test_a_title_about_the_command_line(title, cli):
    assert extract_signals(title + "\n\n`jq -n '.[-5]'` prints 1").cli is cli


def test_a_command_line_report_ranks_the_entry_point(brain):
    _tree(brain.repo, {
        "src/main.c": "int main(int input, char **status) {\n  return 0;\n}\n",
        "src/execute.c": "int execute(int input, char **status) {\n  return 0;\n}\n",
        "src/reader.c": "int reader(int input, char **status) {\n  return 0;\n}\n",
        "tests/main_test.c": "int main(void) { return 0; }\n",
        "examples/demo.c": "int main(void) { return 0; }\n",
    })
    body = "\n\nA syntax error in the input gives status 0 now."
    ranked = brain.locate("Commit abc now requires '-e' to report bad input" + body).files
    assert ranked[0].path == "src/main.c" and "entry point" in ranked[0].reasons[1], ranked
    # the same words without a command-line title leave the entry point alone
    plain = brain.locate("Commit abc now fails to report bad input" + body).files
    assert not any("entry point" in r for hit in plain for r in hit.reasons)


# -- the title's inflected words that the code never writes reach their stems ---------------------------


def test_title_words_absent_from_the_code_reach_their_stems(brain):
    _tree(brain.repo, {
        "src/dump.c": "static const char *def_colors[] = {0};\nvoid set_colors(const char *c) {\n}\n",
        "src/output.c": "int printing_mode(int width) {\n  return width;\n}\n",
        "src/value.c": "int print_value(int width) {\n  return width;\n}\n",
    })
    brain.index.refresh_code()
    view = brain.index.code_view()
    # no file writes `coloring`: its stem `color` finds the file that does
    assert [p for p, _ in view.bm25(["coloring"], stems="absent")] == ["src/dump.c"]
    assert view.bm25(["coloring"]) == []
    # `printing` is written in the code: taken as written, not widened to every `print...`
    assert [p for p, _ in view.bm25(["printing"], stems="absent")] == ["src/output.c"]
    assert {p for p, _ in view.bm25(["printing"], stems=True)} == {"src/output.c", "src/value.c"}
    # the title's own pass: only the stems of the absent words
    assert [p for p, _ in view.bm25(["coloring", "printing"], stems="only-absent")] == ["src/dump.c"]
    assert view.bm25(["printing"], stems="only-absent") == []
