"""The code slot shows the best-ranked file's code first when the function ranking leaves it out
(``boot.slots.code._best_file_part``): a file with no definitions the index parses, real boots."""

from __future__ import annotations

from pathlib import Path

import brain as brainlib
from brain.boot.slots.code import file_excerpt_lines

BUILTIN = "".join(f"def helper_{i}: .[{i}];\n" for i in range(60)) + (
    "# nth picks one output\n"
    "def nth($n; g): if $n < 0 then error(\"nth doesn't support negative indices\") else last(limit($n + 1; g)) end;\n"
    "def first: .[0];\n") + "".join(f"def other_{i}: .[{i}];\n" for i in range(60))
MAIN = ("#include <stdio.h>\n\nint run_program(int argc) {\n    return argc;\n}\n\n"
        "int main(int argc, char **argv) {\n    return run_program(argc);\n}\n")


def _write(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text, encoding="utf-8")


def test_the_excerpt_keeps_the_lines_holding_the_rarest_words_code_before_comments():
    lines = ["// limit the nth output", "int a = limit;", "int b = limit;", "int c = 0;", "int d = nth(limit);",
             "int e = 0;", "int f = 0;", "int g = 0;", "int h = 0;", "int i = 0;", "int j = 0;", "int k = limit;"]
    assert file_excerpt_lines(lines, {"nth": 2.0, "limit": 1.0}, most=5) == [3, 4, 5, 6, 7]
    assert file_excerpt_lines(lines, {"absent": 2.0}) == []
    assert file_excerpt_lines(lines, {}) == []
    assert len(file_excerpt_lines(lines, {"nth": 2.0, "limit": 1.0}, most=20)) <= 20


def test_the_best_file_without_parsed_definitions_shows_its_lines_first(repo):
    b = brainlib.init(repo)
    _write(repo, "src/builtin.jq", BUILTIN)
    _write(repo, "src/main.c", MAIN)
    b.reindex()
    text = "nth with a negative index\n`nth` and `limit` give the wrong output for negative indices"
    result = b.boot(text, budget=8000, record=False)
    assert result.files[0] == "src/builtin.jq"
    head = ("## `src/builtin.jq` (the best-ranked file, no ranked definition of it shown: the lines naming the "
            "task's words)")
    assert head in result.text
    code = result.text.split(head, 1)[1].split("\n## ", 1)[0]
    assert "62 def nth($n; g): if $n < 0" in code and "helper_10" not in code
    assert any(s["source"] == "src/builtin.jq::(lines)" for s in result.sections)
    assert result.tokens <= 8000


def test_no_file_lines_when_a_definition_of_the_best_file_is_shown(repo):
    b = brainlib.init(repo)
    _write(repo, "src/main.c", MAIN)
    _write(repo, "src/other.c", "int unrelated(void) {\n    return 0;\n}\n")
    b.reindex()
    result = b.boot("run_program returns the wrong exit code\n`run_program` ignores argc", budget=8000, record=False)
    assert result.files[0] == "src/main.c"
    assert "## `src/main.c::run_program`" in result.text
    assert "the best-ranked file, no ranked definition" not in result.text
