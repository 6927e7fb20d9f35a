"""Task localization in Go, Rust, Java, JavaScript, C and C++: definitions, traces, test files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.search.code import is_nonproduct_path, is_test_path, looks_generated
from brain.search.definitions import scan_definitions
from brain.search.locate import extract_signals
from brain.search.signals import TEMPLATE_SENTENCES
from brain.search.ranking import combine, gather
from brain.search.traces import trace_frames
from brain.search.weights import shipped_weights


def _defs(text: str, lang: str) -> set[tuple[str, str]]:
    return {(qual, kind) for _, kind, qual, _ in scan_definitions(text, lang).symbols}


# -- definitions ---------------------------------------------------------------------


def test_go_functions_methods_with_receivers_types_and_imports():
    text = ('package mapping\n\nimport (\n\t"encoding/json"\n\tyaml "gopkg.in/yaml.v2"\n)\n\n'
            "type Unmarshaler struct {\n\tkey string\n}\n\ntype Reader interface {\n\tRead(p []byte) (int, error)\n}\n\n"
            "func (u *Unmarshaler) Unmarshal(v any) error {\n\tfill(v)\n\treturn nil\n}\n\n"
            "func (Set[T]) Add(x T) {}\n\nfunc unmarshalJsonBytes(b []byte) error {\n\treturn nil\n}\n")
    scan = scan_definitions(text, "go")
    assert {("Unmarshaler", "class"), ("Reader", "class"), ("Reader.Read", "method"), ("Unmarshaler.Unmarshal", "method"),
            ("Set.Add", "method"), ("unmarshalJsonBytes", "function")} <= _defs(text, "go")
    assert ("fill", "function") not in _defs(text, "go")
    assert scan.imports == ["encoding/json", "gopkg.in/yaml.v2"]


def test_rust_items_impl_owners_macros_and_test_modules():
    text = ("use crate::sync::mpsc;\npub struct Sender<T> {\n    chan: u8,\n}\n"
            "impl<T: Clone> fmt::Debug for Sender<T> {\n    fn fmt(&self) {\n        helper(x);\n    }\n}\n"
            "impl<T> Sender<T> {\n    pub async fn send(&self) {}\n    pub(crate) fn try_send(&self) {}\n}\n"
            "pub trait Stream {\n    fn poll_next(&mut self);\n}\n"
            "macro_rules! ready {\n    () => {};\n}\npub(crate) const MAX: usize = 3;\n"
            "#[cfg(test)]\nmod tests {\n    fn only_in_tests() {}\n}\npub fn after_tests() {}\n")
    defs = _defs(text, "rust")
    assert {("Sender", "class"), ("Sender.fmt", "method"), ("Sender.send", "method"), ("Sender.try_send", "method"),
            ("Stream", "class"), ("Stream.poll_next", "method"), ("ready", "macro"), ("MAX", "var"),
            ("after_tests", "function")} <= defs
    assert not any("only_in_tests" in q or q == "helper" for q, _ in defs)
    assert scan_definitions(text, "rust").imports == ["crate::sync::mpsc"]


def test_java_classes_and_methods_not_calls():
    text = ("package com.acme.core;\n\nimport java.util.List;\n\n"
            "public abstract class JsonParser extends Base implements Closeable {\n"
            "    protected JsonParser(int f) { super(); }\n"
            "    public abstract JsonToken nextToken() throws IOException;\n"
            "    @Override\n    public <T> List<T> readValues(Class<T> c) {\n"
            "        helper(c);\n        result.add(c);\n        String s = other(c);\n        return last(c);\n    }\n}\n")
    defs = _defs(text, "java")
    assert {("JsonParser", "class"), ("JsonParser.nextToken", "method"), ("JsonParser.readValues", "method")} <= defs
    assert not {q for q, _ in defs} & {"JsonParser.helper", "JsonParser.add", "JsonParser.other", "JsonParser.last"}


def test_javascript_functions_classes_exports_and_prototype_methods():
    text = ("const path = require('path');\nimport { x } from './utils';\n"
            "class Card {\n  constructor(a) {\n    this.a = a;\n  }\n  render() {\n    if (x) {\n    }\n  }\n}\n"
            "function renderError(message) {}\nconst clampValue = (a, b) => a;\n"
            "module.exports.fetchStats = fetchStats;\nres.send = function send(body) {\n};\n")
    defs = _defs(text, "js")
    assert {("Card", "class"), ("Card.render", "method"), ("renderError", "function"), ("clampValue", "function"),
            ("fetchStats", "function"), ("res.send", "method")} <= defs
    assert ("Card.if", "method") not in defs
    assert scan_definitions(text, "js").imports == ["path", "./utils"]
    ts = ("export class CartStore {\n  private items: Item[] = [];\n  public async addItem(id: string): Promise<void> {\n"
          "    this.items.push(id);\n  }\n  get<T>(key: string): T | undefined {\n    return undefined;\n  }\n}\n")
    assert {("CartStore.addItem", "method"), ("CartStore.get", "method")} <= _defs(ts, "ts")
    assert ("CartStore.push", "method") not in _defs(ts, "ts")


def test_c_and_cpp_functions_types_macros_not_statements():
    c = ('#include "jv.h"\n#define JV_MAX(a) (a)\ntypedef struct {\n  int x;\n} jv_kind_t;\n'
         "struct jv_refcnt {\n  int count;\n};\nstatic jv f_tostring(jq_state *jq, jv input) {\n  jv_free(input);\n"
         "  return jv_dump(input, 0);\n}\nint\njv_parse_sized(const char* s, int len)\n{\n}\njv jv_string(const char*);\n")
    defs = _defs(c, "c")
    assert {("JV_MAX", "macro"), ("jv_kind_t", "class"), ("jv_refcnt", "class"), ("f_tostring", "function"),
            ("jv_parse_sized", "function"), ("jv_string", "decl")} <= defs
    assert not {q for q, _ in defs} & {"jv_free", "jv_dump"}
    cpp = ("template <typename Char> class basic_context {\n public:\n  auto arg(int id) const -> int { return 0; }\n"
           "  void advance_to(int it) { detail::step(it); }\n};\nclass API format_error : public std::runtime_error {\n};\n"
           "template <typename T>\nauto format_to(Out out, const T& value) -> Out {\n  detail::write(out, value);\n}\n"
           "auto file::size() const -> long long {\n}\n")
    defs = _defs(cpp, "cpp")
    assert {("basic_context", "class"), ("basic_context.arg", "method"), ("basic_context.advance_to", "method"),
            ("format_error", "class"), ("format_to", "function"), ("file.size", "method")} <= defs
    assert not any(q.endswith(("step", "write")) for q, _ in defs)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("afn{}()<>:;*& \t\n=.#/\"'$_-[]!@") + ["fn ", "impl ", "class ", "func ",
                                                                              "struct ", "typedef "]), max_size=200).map("".join),
       st.sampled_from(["go", "rust", "java", "js", "c", "cpp", "kotlin", "ts"]))
def test_definitions_never_fail_on_any_text(text, lang):
    scan = scan_definitions(text, lang)
    assert all(isinstance(name, str) and name for name, _, _, _ in scan.symbols)


@pytest.mark.parametrize("lang", ["go", "rust", "java", "js", "c", "cpp"])
def test_definitions_of_pathological_files_come_back_at_once(lang):
    text = ("impl<" * 50 + "class a" * 40 + "x (" * 60 + "\n") * 3000 + ("/*" * 2000) + "f" * 100_000
    started = time.perf_counter()
    scan_definitions(text, lang)
    assert time.perf_counter() - started < 5.0


# -- traces ----------------------------------------------------------------------------

_name = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
_frames = st.lists(st.tuples(st.lists(_name, min_size=1, max_size=3), _name, st.integers(1, 99_999)), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(_frames)
def test_go_panics_parse_to_their_files_deepest_last(frames):
    lines = ["panic: runtime error: index out of range", "", "goroutine 1 [running]:"]
    for dirs, name, line in frames:  # Go prints the innermost frame first
        lines += [f"example.com/app/{'/'.join(dirs)}.(*T).{name}(0xc000010000)", f"\t/src/app/{'/'.join(dirs)}/{name}.go:{line} +0x1d"]
    parsed, _ = trace_frames("\n".join(lines))
    assert [p for p, _ in parsed] == [f"/src/app/{'/'.join(d)}/{n}.go" for d, n, _ in reversed(frames)]


@settings(max_examples=60, deadline=None)
@given(_frames, _frames)
def test_java_traces_parse_packages_to_paths_root_cause_last(first, cause):
    def block(frames):
        return [f"\tat com.{'.'.join(d)}.{n.capitalize()}.run({n.capitalize()}.java:{line})" for d, n, line in frames]

    text = "\n".join(["java.lang.IllegalStateException: boom", *block(first), "Caused by: java.io.IOException: eof",
                      *block(cause), "\t... 3 more"])
    parsed, _ = trace_frames(text)
    want = [f"com/{'/'.join(d)}/{n.capitalize()}.java" for d, n, _ in [*reversed(first), *reversed(cause)]]
    assert [p for p, _ in parsed] == want


@settings(max_examples=60, deadline=None)
@given(_frames, st.booleans())
def test_javascript_stack_frames_parse_deepest_last(frames, named):
    lines = ["TypeError: Cannot read properties of undefined (reading 'x')"]
    for dirs, name, line in frames:
        where = f"/app/{'/'.join(dirs)}/{name}.js:{line}:7"
        lines.append(f"    at {name} ({where})" if named else f"    at {where}")
    parsed, _ = trace_frames("\n".join(lines))
    assert [p for p, _ in parsed] == [f"/app/{'/'.join(d)}/{n}.js" for d, n, _ in reversed(frames)]


@settings(max_examples=60, deadline=None)
@given(_frames, st.booleans())
def test_rust_panics_and_backtraces_parse_the_panic_site_last(frames, old_style):
    dirs, name, line = frames[0]
    site = f"src/{'/'.join(dirs)}/{name}.rs:{line}:5"
    head = f"thread 'main' panicked at 'boom', {site}" if old_style else f"thread 'main' panicked at {site}:"
    lines = [head, "stack backtrace:"]
    for i, (d, n, ln) in enumerate(frames[1:]):
        lines += [f"  {i}: app::{n}", f"             at ./src/{'/'.join(d)}/{n}.rs:{ln}:9"]
    parsed, _ = trace_frames("\n".join(lines))
    assert parsed[-1][0] == f"src/{'/'.join(dirs)}/{name}.rs"
    assert [p for p, _ in parsed[:-1]] == [f"src/{'/'.join(d)}/{n}.rs" for d, n, _ in reversed(frames[1:])]


@settings(max_examples=60, deadline=None)
@given(_frames, st.sampled_from(["h", "c", "cc", "cpp", "hpp"]))
def test_c_compiler_errors_parse_the_first_error_last(frames, ext):
    dirs, name, line = frames[0]
    error = f"include/{'/'.join(dirs)}/{name}.{ext}"
    lines = [f"{error}:{line}:4: error: static assertion failed"]
    lines += [f"src/{'/'.join(d)}/{n}.{ext}:{ln}:3:   required from here" for d, n, ln in frames[1:]]
    parsed, _ = trace_frames("\n".join(lines))
    assert parsed[-1][0] == error and len(parsed) == len(frames)


def test_sanitizer_frames_and_msvc_errors():
    text = ("==1==ERROR: AddressSanitizer: heap-use-after-free\n    #0 0x4005d4 in jv_free /src/jq/src/jv.c:123:4\n"
            "    #1 0x4005d4 in main src/main.c:5:2\nsrc\\fmt\\format.cc(12): error C2039: 'x': is not a member")
    parsed, used = trace_frames(text)
    assert [p for p, _ in parsed] == ["src/main.c", "/src/jq/src/jv.c", "src/fmt/format.cc"]
    assert parsed[1][1] == "jv_free" and used == {1, 2, 3}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("at ()/.:\t\n#0x'") + ["java", ".go", ".rs", ".js", ".c", "error",
                                                                "panicked at ", "Caused by:", "goroutine 1 ["]),
                max_size=300).map("".join))
def test_trace_parsing_never_fails_and_marks_only_real_lines(text):
    frames, used = trace_frames(text)
    assert all(0 <= i < len(text.split("\n")) for i in used)
    assert all(path for path, _ in frames)


@pytest.mark.parametrize("text", ["    at " + "a(" * 20_000, "\tat " + "x." * 30_000 + "(", "#0 " + "a" * 50_000,
                                  ("/a" * 400 + ".go:1 +0x1\n") * 500, "panicked at " + "'" * 40_000])
def test_pathological_traces_come_back_at_once(text):
    started = time.perf_counter()
    extract_signals(text)
    assert time.perf_counter() - started < 5.0


def test_trace_lines_are_frames_not_written_paths():
    sig = extract_signals("Crash\n\tat com.acme.core.JsonParser.next(JsonParser.java:42)\nsee docs/guide.js")
    assert [p for p, _ in sig.paths] == ["docs/guide.js"]
    assert sig.frames == [("com/acme/core/JsonParser.java", "next")]


# -- file classes ----------------------------------------------------------------------


@pytest.mark.parametrize("path,test", [
    ("core/mapping/unmarshaler_test.go", True), ("core/testdata/a.go", True), ("src/test/java/com/x/FooTest.java", True),
    ("src/main/java/com/x/Latest.java", False), ("tokio/tests/io.rs", True), ("tokio/src/runtime/tests/mod.rs", True),
    ("src/__tests__/card.js", True), ("lib/router.spec.js", True), ("test/format-test.cc", True), ("tests/jq.c", True),
    ("src/attest.rs", False), ("django/test/client.py", False), ("src/contest.c", False),
    ("MyLib.Tests/ParserTests.cs", True), ("integration_tests/run.rs", True), ("src/latest/a.rs", False),
    ("test-helpers/context.js", True), ("src/test_utils/fake.go", True), ("src/testament/a.rs", False),
    ("lib/tests-e2e/run.js", True), ("contest-rules/a.js", False),
    # the top of a workspace's package, not a package named `test` nor deeper
    ("packages/less/test/less-test.js", True), ("packages/test/src/index.ts", False),
    ("packages/pug/lib/client/test/a.js", False), ("web/packages/ui/test/button.js", True),
    # Gradle and Kotlin Multiplatform source sets, .NET test projects in camelCase, what tests use
    ("okhttp/src/jvmTest/java/okhttp3/CallTest.kt", True), ("core/src/commonTest/kotlin/Lazy.kt", True),
    ("app/src/androidTest/java/a/MainScreen.kt", True), ("src/UnitTests/Bug/MemberNamedTypeBug.cs", True),
    ("src/Polly.Specs/Retry/RetrySpecs.cs", True), ("src/Polly.TestUtils/Clock.cs", True),
    ("lib/src/testFixtures/java/Fake.java", True), ("src/jvmMain/kotlin/okhttp3/Call.kt", False),
    ("src/Polly.Core/Retry/RetryHelper.cs", False), ("src/Contest/Rules.cs", False), ("lib/latest/x.rb", False),
])
def test_test_files_of_every_language(path, test):
    assert is_test_path(path) is test


def test_nonproduct_and_generated_files():
    assert is_nonproduct_path("examples/dump.rs") and is_nonproduct_path("karma.conf.cjs")
    assert not is_nonproduct_path("src/config.js") and not is_nonproduct_path("lib/router/index.js")
    assert looks_generated("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n")
    assert looks_generated("/* A Bison parser, made by GNU Bison 3.8.2.  */\n")
    assert looks_generated('#line 1 "src/lexer.c"\n')
    assert not looks_generated('"""Return the autogenerated permissions; generated by the caller."""\n')


# -- ranking on a small project of each language -------------------------------------------


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def polyglot(brain):
    repo = brain.repo
    files = {
        # Go: a package with two files, and a test file that defines the same names
        "core/mapping/unmarshaler.go": "package mapping\n\ntype Unmarshaler struct{}\n\nfunc (u *Unmarshaler) fillValue(v any) error {\n\treturn nil\n}\n",
        "core/mapping/utils.go": "package mapping\n\nfunc parseKey(s string) string {\n\treturn s\n}\n",
        "core/mapping/unmarshaler_test.go": "package mapping\n\nfunc fillValue() {}\nfunc TestUnmarshal(t *testing.T) {}\n",
        "core/discov/config.go": "package discov\n\ntype EtcdConf struct {\n\tHosts []string\n}\n",
        # Rust: a crate with modules
        "tokio/src/sync/mpsc/bounded.rs": "pub struct Sender<T> {\n    x: T,\n}\nimpl<T> Sender<T> {\n    pub fn send(&self) {}\n}\n",
        "tokio/src/sync/mpsc/mod.rs": "mod bounded;\npub use bounded::Sender;\n",
        "tokio/src/runtime/park.rs": "pub(crate) fn park_timeout() {\n    unreachable!();\n}\n",
        "tokio/tests/sync_mpsc.rs": "fn send() {}\nfn park_timeout() {}\n",
        # Java: main and test trees
        "src/main/java/com/acme/core/JsonParser.java": "package com.acme.core;\n\npublic class JsonParser {\n    public int nextToken() {\n        return 0;\n    }\n}\n",
        "src/main/java/com/acme/core/io/Reader.java": "package com.acme.core.io;\n\npublic class Reader {\n    public int read() { return 0; }\n}\n",
        "src/test/java/com/acme/core/JsonParserTest.java": "package com.acme.core;\n\npublic class JsonParserTest {\n    public void nextToken() {}\n}\n",
        # JavaScript: CommonJS, a test folder, a config file
        "lib/router/layer.js": "function Layer(path) {}\nLayer.prototype.match = function match(path) {\n  return true;\n};\nmodule.exports = Layer;\n",
        "lib/router/index.js": "const Layer = require('./layer');\nfunction route(path) {}\nmodule.exports.route = route;\n",
        "test/router.test.js": "const Layer = require('../lib/router/layer');\nfunction match() {}\n",
        "webpack.config.js": "const match = 1;\nmodule.exports = { match };\n",
        # C: sources, a header, tests
        "src/jv_print.c": '#include "jv.h"\nstatic void put_color(int c) {\n}\nvoid jv_dumpf(jv x, int flags) {\n  put_color(1);\n}\n',
        "src/jv.h": "#ifndef JV_H\n#define JV_H\ntypedef struct jv_s { int kind; } jv;\nvoid jv_dumpf(jv x, int flags);\n#endif\n",
        "src/jv.c": '#include "jv.h"\njv jv_null(void) {\n  jv x;\n  return x;\n}\n',
        "tests/jv_test.c": "void put_color(int c) {}\nvoid jv_dumpf(void) {}\n",
    }
    for rel, text in files.items():
        _write(repo, rel, text)
    brain.write("now.md", "# Now\n\nFix the bugs.\n")
    return brain


def _first(brain, text: str) -> str:
    ranked = brain.locate(text).paths
    assert not any(is_test_path(p) for p in ranked[:3]), ranked
    return ranked[0]


def test_a_go_panic_ranks_the_faulting_file_first(polyglot):
    # both files are in the trace: the innermost frame (printed first by Go) is the fault
    text = ("Crash on nested maps\n\npanic: runtime error: invalid memory address\n\ngoroutine 1 [running]:\n"
            "example.com/app/core/mapping.parseKey(0xc000010000)\n"
            "\t/home/u/go/pkg/mod/example.com/app/core/mapping/utils.go:4 +0x1d\n"
            "example.com/app/core/mapping.(*Unmarshaler).fillValue(0xc000010000)\n"
            "\t/home/u/go/pkg/mod/example.com/app/core/mapping/unmarshaler.go:5 +0x3a\nmain.main()\n\t/home/u/app/main.go:12 +0x25\n")
    assert _first(polyglot, text) == "core/mapping/utils.go"


def test_a_rust_panic_ranks_the_panicking_file_first(polyglot):
    text = ("Hangs then panics\n\nthread 'main' panicked at tokio/src/sync/mpsc/bounded.rs:5:9:\nboom\nstack backtrace:\n"
            "   0: app::run\n             at ./tokio/src/runtime/park.rs:2:5\n")
    assert _first(polyglot, text) == "tokio/src/sync/mpsc/bounded.rs"


def test_a_java_trace_ranks_the_root_cause_first(polyglot):
    text = ("Fails at the end of the input\n\njava.lang.IllegalStateException: boom\n\tat com.acme.core.JsonParser.nextToken(JsonParser.java:4)\n"
            "Caused by: java.io.IOException: eof\n\tat com.acme.core.io.Reader.read(Reader.java:4)\n\t... 1 more\n")
    assert _first(polyglot, text) == "src/main/java/com/acme/core/io/Reader.java"


def test_a_javascript_stack_ranks_the_deepest_frame_first(polyglot):
    text = ("TypeError on routes with params\n\nTypeError: Cannot read properties of undefined (reading 'length')\n"
            "    at Layer.match (/srv/node_modules/app/lib/router/layer.js:3:10)\n"
            "    at route (/srv/node_modules/app/lib/router/index.js:2:3)\n")
    assert _first(polyglot, text) == "lib/router/layer.js"


def test_a_c_compiler_error_ranks_the_erroring_file_first(polyglot):
    text = ("Build fails with gcc 13\n\nsrc/jv.c:2:1: note: in expansion of macro\n"
            "src/jv.h:3:9: error: unknown type name 'size_t'\n")
    assert _first(polyglot, text) == "src/jv.h"


def test_qualified_names_of_each_language_point_at_their_files(polyglot):
    assert _first(polyglot, "discov.EtcdConf has no user and password for etcd auth") == "core/discov/config.go"
    assert _first(polyglot, "`tokio::sync::mpsc::Sender::send` never wakes the receiver") == "tokio/src/sync/mpsc/bounded.rs"
    assert _first(polyglot, "com.acme.core.JsonParser skips a token") == "src/main/java/com/acme/core/JsonParser.java"
    assert _first(polyglot, "`put_color` picks a dark color for null") == "src/jv_print.c"


def test_test_files_of_every_language_never_rank_above_source(polyglot):
    for text in ("fillValue fails in core/mapping/unmarshaler_test.go", "park_timeout and send in tokio/tests/sync_mpsc.rs",
                 "nextToken in JsonParserTest", "match() in test/router.test.js", "put_color jv_dumpf in tests/jv_test.c"):
        ranked = polyglot.locate(text).paths
        tests = [i for i, p in enumerate(ranked) if is_test_path(p)]
        source = [i for i, p in enumerate(ranked) if not is_test_path(p)]
        assert source and all(t > max(source) for t in tests), (text, ranked)
    assert polyglot.locate("match is wrong").paths[0] == "lib/router/layer.js"  # not the config file defining `match`


def test_inflected_words_of_the_text_reach_their_stems(polyglot):
    from brain.search import locate as locate_module

    polyglot.reindex()
    view = polyglot.index.code_view()
    text = "Values are colorized in a dark foreground\n\nThe colorizing makes them invisible on dark terminals."
    assert locate_module.locate(view, text).paths[0] == "src/jv_print.c"
    unstemmed = shipped_weights().replace({"stem_prefixes": False, "bm25_title_stem": 0.0})
    assert "src/jv_print.c" not in combine(gather(view, text, weights=unstemmed), unstemmed).paths


def test_links_to_repository_files_keep_their_path_and_other_addresses_drop():
    sig = extract_signals("Broken since https://github.com/acme/app/blob/v1.2/core/mapping/unmarshaler.go#L120 landed\n"
                          "![image](https://user-images.example.com/9c2f/shot-a1b2.png) see https://docs.example.com/api/pin")
    assert [p for p, _ in sig.paths] == ["core/mapping/unmarshaler.go"]
    assert not {"pin", "shot", "user-images.example.com"} & set(sig.idents) and "docs.example.com" not in sig.dotted


def test_go_import_paths_and_javascript_requires_name_their_package(polyglot):
    assert _first(polyglot, 'Since v1.3 `import "example.com/app/core/discov"` fails to build') == "core/discov/config.go"
    assert _first(polyglot, "`require('./lib/router')` returns undefined under Node 20") == "lib/router/index.js"
    assert extract_signals("see and/or TCP/IP and ./lib/router").module_paths == ["and/or", "TCP/IP", "lib/router"]


def test_issue_template_sentences_are_not_the_report():
    text = ("Support server sent events\n**Is your feature request related to a problem? Please describe.**\r\n"
            "Streams stop after the `timeoutHandler` fires.\r\n\r\n**Describe the solution you\u2019d like**\r\n"
            "A clear and concise description of what you want to happen.\r\nSkip the timeout for streams.\r\n\r\n"
            "**Additional context**\r\nAdd any other context or screenshots about the feature request here.\r\n"
            "**To Reproduce**\nSteps to reproduce the behavior:\n1. Go to '...'\n2. See error\n"
            " - OS: [e.g. iOS]\n**Expected behavior**\nthe stream stays open")
    sig = extract_signals(text)
    assert not {"feature", "request", "describe", "solution", "context", "screenshots", "concise", "reproduce",
                "behavior", "ios", "additional", "expected"} & set(sig.words), sig.words
    assert {"streams", "timeouthandler", "skip", "timeout", "stream", "stays", "open"} <= set(sig.words)
    assert "Describe" not in sig.idents and "timeoutHandler" in sig.idents


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(list(TEMPLATE_SENTENCES) + [
    "a clear and concise description of it", "[e.g. chrome]", "go to '...'", "scroll down to '....'", "ASCII",
    "see", "error", "the problem", "steps", "reproduce", "describe", "feature"]), st.text(max_size=12)),
    max_size=8), st.lists(st.sampled_from([" ", "\n", "-", "_", "?", "  "]), min_size=8, max_size=8),
    st.randoms(use_true_random=False))
def test_a_text_skipped_by_the_template_check_holds_no_template_text(pieces, seps, rnd):
    """The pattern is not applied to a text the word check rules out (`_may_hold_template`): it would find nothing."""
    from brain.search.signals import _TEMPLATE, _may_hold_template

    pieces = ["".join(c.upper() if rnd.random() < 0.3 else c for c in p).replace(" ", seps[i % 8])
              for i, p in enumerate(pieces)]
    text = seps[0].join(pieces)
    if not _may_hold_template(text):
        assert _TEMPLATE.sub(" ", text) == text
    for sentence in TEMPLATE_SENTENCES:
        assert _may_hold_template(sentence.upper() + "!") and _TEMPLATE.sub("", sentence.upper()) == ""
    assert _may_hold_template("\u212aey: ...")  # not ASCII: always searched (under re.I the Kelvin sign is a k)


def test_cjk_edges_split_words():
    sig = extract_signals("\u4f46discov.EtcdConf\u4e2d\u6ca1\u6709user")
    assert sig.dotted == ["discov.EtcdConf"] and {"EtcdConf", "user"} <= set(sig.idents)


def test_prose_words_are_not_full_text_terms():
    sig = extract_signals("How do I filter invalid tracing requests\nWhat can I do now? Thanks, hope it helps")
    assert sig.title_words == ["filter", "invalid", "tracing", "requests"]
    assert not {"how", "what", "now", "thanks", "hope"} & set(sig.words) and "helps" in sig.words


def test_a_separate_inner_go_module_ranks_below_the_product_unless_named(brain):
    from brain.search.code import nested_modules

    repo = brain.repo
    _write(repo, "go.mod", "module example.com/app\n\ngo 1.19\n")
    _write(repo, "tools/ctl/go.mod", "module example.com/app/tools/apictl/v2\n\ngo 1.19\n")
    _write(repo, "tools/ctl/route/show.go", "package route\n\n// print each route of the spec\n"
                                             "func printRoutes(routes []string) {\n\tfor _, route := range routes {\n"
                                             "\t\tprintln(route)\n\t}\n}\n")
    _write(repo, "rest/server.go", "package rest\n\ntype Server struct{ routes []string }\n\n"
                                   "func (s *Server) AddRoute(route string) {\n\ts.routes = append(s.routes, route)\n}\n")
    assert nested_modules(repo) == {"tools/ctl": ["ctl", "apictl"]}
    assert nested_modules(repo / "tools") == {}  # no root module: nothing is nested
    brain.reindex()
    view = brain.index.code_view()
    from brain.search.locate import locate

    text = "Print each route when the server starts\nprint routes of the server"
    assert locate(view, text).paths[0] == "rest/server.go"
    # the same words, and the text names the tool: its file is back on top
    assert locate(view, "apictl: print each route\nprint routes of the spec").paths[0] == "tools/ctl/route/show.go"
    flat = shipped_weights().replace({"nested": 1.0})
    assert combine(gather(view, text), flat).paths[0] == "tools/ctl/route/show.go"  # what the words alone would rank first


def test_an_index_built_before_inner_modules_were_recorded_learns_them(brain):
    repo = brain.repo
    _write(repo, "go.mod", "module example.com/app\n")
    _write(repo, "tools/ctl/go.mod", "module example.com/app/tools/ctl\n")
    _write(repo, "tools/ctl/main.go", "package main\n\nfunc main() {}\n")
    brain.reindex()
    brain.index.db.execute("DELETE FROM code_modules")
    assert brain.index.code_view().nested == {}
    brain.index.refresh_code()  # nothing changed on disk, the inner modules are looked for again
    assert brain.index.code_view().nested == {"tools/ctl": ["ctl"]}


def test_a_go_qualifier_names_a_package_folder_not_a_file(brain):
    from brain.search.locate import locate

    repo = brain.repo
    _write(repo, "core/jsonx/json.go", "package jsonx\n\nfunc Unmarshal(b []byte, v any) error {\n\treturn nil\n}\n")
    _write(repo, "core/mapping/reader.go", "package mapping\n\nfunc UnmarshalJsonReader(r any, v any) error {\n"
                                          "\treturn nil\n}\n")
    brain.reindex()
    view = brain.index.code_view()
    reasons = {h.path: h.reasons for h in locate(view, "json.Unmarshal and mapping.UnmarshalJsonReader differ").files}
    assert "`mapping.UnmarshalJsonReader` defined here" in reasons["core/mapping/reader.go"]
    # `json` is the standard library's package, not the file json.go of package jsonx
    assert not any("json.Unmarshal" in r for r in reasons.get("core/jsonx/json.go", []))
