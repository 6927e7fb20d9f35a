"""Quoted text: messages, usage lines and long options a report pastes, found verbatim in a few files."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.search.locate import extract_signals
from brain.search.quotes import MAX_CANDIDATES, MAX_WORDS, WINDOW, phrase_windows, quoted_candidates
from card_helpers import write


def test_messages_come_first_then_options_spans_and_output_lines():
    text = ("capture fails\n"
            "Running `jq --null-input '.a'` prints nothing.\n"
            "```\n"
            "let value = parse(input);\n"
            "jq - commandline JSON processor [version 1.7]\n"
            "jq: error (at <stdin>:0): Cannot index number with \"foo\"\n"
            "```\n"
            "It says \"the input was not valid\" and dies.\n")
    found = quoted_candidates(text)
    assert found[0] == ("jq", "error", "at", "stdin", "0", "Cannot", "index", "number", "with", "foo")
    assert found[1] == ("--null-input",)
    assert ("jq", "null-input", "a") in found and ("the", "input", "was", "not", "valid") in found
    assert found[-1] == ("jq", "commandline", "JSON", "processor", "version", "1.7")
    # the reporter's own code matches the library's examples, not where the behaviour lives
    assert ("let", "value", "parse", "input") not in found


def test_exceptions_are_messages_and_traceback_source_lines_are_not_quotes():
    text = ("```\nTraceback (most recent call last):\n"
            '  File "/srv/app/django/db/models/query.py", line 12, in get\n'
            "    raise self.model.DoesNotExist(\n"
            '  File "D:\\venv\\lib\\django\\db\\utils.py", line 3, in run\n'
            "    return self.cursor.execute(sql, params)\n"
            "django.db.utils.OperationalError: the operator prohibited in index expressions\n")
    assert quoted_candidates(text) == [("django.db.utils.OperationalError", "the", "operator", "prohibited", "in",
                                        "index", "expressions")]


def test_prose_is_not_a_quote_and_short_spans_are_dropped():
    text = ("Given that it is an error to pass options here, I think this should fail.\n"
            "The `capture` function and `x` differ.\n")
    assert quoted_candidates(text) == []  # no `prefix: ` head, no code block, spans of one word


def test_panics_and_assertions_are_messages():
    text = ("thread 'main' panicked at 'attempt to subtract with overflow', src/buf/uninit.rs:12:5\n"
            "Assertion failed: (0 && \"Invalid value\"), function jv_dump_term, file jv_print.c, line 221.\n"
            "src/decNumber/decNumber.c:6257:28: runtime error: index -17 out of bounds for type 'uint8_t [49]'\n")
    found = quoted_candidates(text)
    assert found[2][:3] == ("src/decNumber/decNumber.c:6257:28", "runtime", "error")
    assert found[0][:6] == ("thread", "main", "panicked", "at", "attempt", "to")
    assert found[1][:4] == ("Assertion", "failed", "0", "Invalid")


def test_windows_need_two_content_words_and_options_stand_alone():
    assert phrase_windows(("it", "does", "not", "work")) == []
    assert phrase_windows(("cannot", "allocate", "memory")) == [(0, ("cannot", "allocate", "memory"))]
    assert phrase_windows(("a", "syntax", "error", "in", "the")) == [(0, ("a", "syntax", "error")),
                                                                      (1, ("syntax", "error", "in"))]
    assert phrase_windows(("--sort-keys",)) == [(0, ("--sort-keys",))]
    assert phrase_windows(("jsonargs",)) == []


def test_extract_signals_carries_the_quotes():
    sig = extract_signals("Crash\n\n```\npanic: runtime error: index out of range [3] with length 3\n```\n")
    assert sig.quoted == [("panic", "runtime", "error", "index", "out", "of", "range", "3", "with", "length", "3")]
    assert extract_signals("").quoted == []


@given(st.text(alphabet=st.sampled_from(list("aZ_.-:( \n\"'`0é~error panic--")), max_size=2000))
@settings(max_examples=200, deadline=None)
def test_extraction_is_bounded_on_any_text(text):
    found = quoted_candidates(text)
    assert len(found) <= MAX_CANDIDATES and len(set(found)) == len(found)
    for words in found:
        assert 1 <= len(words) <= MAX_WORDS and (len(words) >= WINDOW or words[0].startswith("--"))
        for start, window in phrase_windows(words):
            assert len(window) in (1, WINDOW) and words[start : start + len(window)] == window


@pytest.mark.parametrize("text", ["`" * 60_000, '"' * 60_000, "--a" * 20_000, "error: " * 9000, "```\n" * 15_000,
                                  "a`b\"c-" * 10_000, ("x: error " + "w " * 200 + "\n") * 150])
def test_pathological_texts_come_back_at_once(text):
    started = time.perf_counter()
    found = quoted_candidates(text)
    assert time.perf_counter() - started < 1.0 and len(found) <= MAX_CANDIDATES


# -- a real repository ----------------------------------------------------------------


@pytest.fixture
def cli(brain):
    repo = brain.repo
    write(repo, "src/main.c", '#include "jv.h"\nint main(int argc, char **argv) {\n'
                               '  if (!strcmp(argv[1], "--sort-keys")) { options |= SORTED_OUTPUT; }\n'
                               '  fprintf(stderr, "Use jq --help for help with command-line options,\\n");\n'
                               '  return run(argv);\n}\n'
                               + "".join(f"static int step{i}(int state) {{ return state * {i} + 1; }}\n"
                                         for i in range(120)))
    write(repo, "src/jv_alloc.c", 'void *jv_mem_alloc(size_t sz) {\n  void *p = malloc(sz);\n'
                                   '  if (!p) memory_exhausted("cannot allocate memory");\n  return p;\n}\n')
    for i in range(6):  # files that share the words, not the message
        write(repo, f"src/util{i}.c", f"/* memory for options: allocate with help */\nint util{i}(int jq) {{\n"
                                       f"  return jq + {i}; /* command line */\n}}\n")
    # a file with more of the words, in another order: BM25 alone prefers it
    write(repo, "src/options.c", "/* options: help for the command line, with memory to allocate;\n"
                                  " * use help options, a seq of options for jq, the command line help */\n"
                                  "int sort_keys(int help, int keys, int line) {\n"
                                  "  return help + keys + line; /* sort keys */\n}\n"
                                  "int allocate_memory_for_options(int jq) {\n  return jq;\n}\n")
    write(repo, "tests/alloc_test.c", 'void t(void) { expect("cannot allocate memory"); }\n')
    brain.reindex()
    return brain


def test_a_pasted_message_points_at_the_file_that_prints_it(cli):
    hits = cli.locate("Out of memory on big inputs\n\n```\n$ jq . big.json\nerror: cannot allocate memory\n```\n").files
    assert hits[0].path == "src/jv_alloc.c" and any(r.startswith("quoted text") for r in hits[0].reasons)


def test_a_quoted_usage_line_points_at_the_file_that_prints_it(cli):
    hits = cli.locate("Usage hint is wrong\n\n    Use jq --help for help with command-line options,\n").files
    assert hits[0].path == "src/main.c"


def test_a_long_option_points_at_the_file_that_parses_it(cli):
    # `--sort-keys` keeps its inner dash as one token; `sort_keys` and `sort keys` elsewhere are other tokens
    assert cli.locate("Output order is wrong\n\nThe --sort-keys flag is ignored.").files[0].path == "src/main.c"


