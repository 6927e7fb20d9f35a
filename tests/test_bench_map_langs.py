"""The pure parts of bench/bench_map_langs.py: the one-file change, what aider cannot parse, the boot texts, the table."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import bench_map_langs as langs  # noqa: E402


def test_comment_touch_closes_a_c_comment_and_differs_per_run():
    touch = langs.comment_touch("c")
    first, second = touch(b"int x;\n", 0), touch(b"int x;\n", 1)
    assert first.startswith(b"int x;\n") and first.rstrip().endswith(b"*/")
    assert first != second
    assert langs.comment_touch("rust")(b"", 2) == b"\n// bench touch 2\n"


def test_not_parsed_names_only_extensions_without_a_tag_query():
    coverage = {".ts": {"files": 10, "tag_query": True, "files_with_definitions": 9},
                ".cjs": {"files": 3, "tag_query": False, "files_with_definitions": 0}}
    assert langs.not_parsed(coverage) == {".cjs": 3}


def test_task_texts_prefer_the_dev_set_then_the_written_reports():
    dev = [{"repo": "a/b", "problem_statement": f"report {i}"} for i in range(7)]
    assert langs.task_texts("a/b", dev, 5) == ([f"report {i}" for i in range(5)], "multilang dev set")
    texts, source = langs.task_texts("jestjs/jest", dev, 5)
    assert len(texts) == 5 and source.startswith("written")
    assert langs.task_texts("c/d", dev, 5) == ([], "written in bench_map_langs.py")


def test_markdown_table_has_one_row_per_project_and_marks_a_skipped_aider():
    figures = {"source_files": 50, "cold_s": 1.0, "noop_s_process": 0.4, "one_file_s_process": 0.5,
               "peak_rss_mb": 30, "load_1_5_15": "2.0 1.0 0.5", "aider": {"skipped": "no venv"}}
    table = langs.markdown_table({"x+y": figures})
    lines = table.splitlines()
    assert len(lines) == 3
    assert lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    assert lines[2].startswith("| x+y | 50 | 1.00 | – | – |")
    figures["boot"] = {"median_s": 0.3, "median_cpu_s": 0.2, "p95_s": 0.4}
    assert "| 0.3 (0.2) | 0.4 |" in langs.markdown_table({"x+y": figures})
