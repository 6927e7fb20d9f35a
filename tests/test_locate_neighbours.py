"""The boot's compact tail of ranked files, and the ranking's neighbour signals (imports, header/source pairs)."""

from __future__ import annotations

from brain.boot.slots.task_files import DETAILED_FILES, render
from brain.search.locate import FileHit, Localization, extract_signals
from brain.tokens import estimate_tokens
from card_helpers import commit_files, write

NOW = "# Now\n\nFix the bugs.\n"  # a brain with its now.md, as a session leaves it


def test_files_after_the_first_few_are_named_without_reasons():
    hits = [FileHit(f"pkg/file_{i}.go", 10.0 - i * 0.1, ["defines `Thing`", "full-text match"]) for i in range(40)]
    text = render(Localization(hits, []))
    for hit in hits:
        assert f"`{hit.path}`" in text  # every ranked file is named, so it counts as in the context
    assert text.count("defines `Thing`") == DETAILED_FILES
    full = "\n".join(f"{i}. `{h.path}` ({'; '.join(h.reasons)})" for i, h in enumerate(hits, 1))
    assert estimate_tokens(text) < 0.7 * estimate_tokens(full)
    # the order stays the ranking's order
    positions = [text.index(f"`{h.path}`") for h in hits]
    assert positions == sorted(positions)


def test_boot_names_forty_ranked_files_by_default(brain):
    for i in range(45):
        write(brain.repo, f"svc/handler_{i:02}.go", f"package svc\n\nfunc Handle{i:02}() {{\n\t// retry timeout\n}}\n")
    result = brain.boot("retry timeout in the svc handlers", record=False)
    named = [f for f in result.files if f.startswith("svc/")]
    assert len(named) == 40
    assert all(f"`{f}`" in result.text for f in named)


def _reasons(brain, text: str) -> dict[str, list[str]]:
    return {hit.path: hit.reasons for hit in brain.locate(text).files}


def test_a_javascript_module_lends_a_share_to_the_file_requiring_it(brain):
    commit_files(brain, {
        "lib/redirects.js": "function followRedirects(res) {\n  return res;\n}\nmodule.exports = followRedirects;\n",
        "lib/adapter.js": "const follow = require('./redirects');\nfunction send(req) {\n  return follow(req);\n}\n"
                          "module.exports = send;\n",
        "lib/unrelated.js": "function colors() {}\nmodule.exports = colors;\n",
    }, now=NOW)
    reasons = _reasons(brain, "`followRedirects()` drops the body when a redirect is followed")
    assert list(reasons)[0] == "lib/redirects.js"
    assert any("imported by `lib/redirects.js`" in r for r in reasons["lib/adapter.js"])
    assert "lib/unrelated.js" not in reasons


def test_a_c_source_lends_a_share_to_its_header(brain):
    commit_files(brain, {
        "src/printer.c": '#include <stdio.h>\nvoid dump_term(int x) {\n  printf("%d", x);\n}\n',
        "include/printer.h": "#ifndef PRINTER_H\n#define PRINTER_H\nstruct printer_opts { int indent; };\n#endif\n",
        "src/other.c": "void unrelated(void) {\n}\n",
    }, now=NOW)
    reasons = _reasons(brain, "dump_term() prints negative numbers wrong")
    assert list(reasons)[0] == "src/printer.c"
    assert any("twin of `src/printer.c`" in r for r in reasons["include/printer.h"])
    assert "src/other.c" not in reasons


def test_a_go_file_lends_a_share_to_its_importers_and_their_imports(brain):
    commit_files(brain, {
        "go.mod": "module example.com/app\n",
        "core/mapping/unmarshaler.go": "package mapping\n\nfunc UnmarshalKey(m map[string]any, v any) error {\n"
                                       "\treturn nil\n}\n",
        "core/mapping/fieldoptions.go": "package mapping\n\ntype fieldOptions struct {\n\tOptional bool\n}\n",
        "rest/server.go": 'package rest\n\nimport (\n\t"example.com/app/core/mapping"\n)\n\n'
                          "func Start() {\n\t_ = mapping.UnmarshalKey(nil, nil)\n}\n",
        "core/other/other.go": "package other\n\nfunc Other() {}\n",
    }, now=NOW)
    reasons = _reasons(brain, "UnmarshalKey ignores the default value")
    assert list(reasons)[0] == "core/mapping/unmarshaler.go"
    assert "core/mapping/fieldoptions.go" in reasons  # the importer imports its whole package
    assert any("imported by `core/mapping/unmarshaler.go`" in r for r in reasons["rest/server.go"])
    assert "core/other/other.go" not in reasons


def test_a_hub_imported_by_many_files_lends_nothing(brain):
    files = {"lib/util.js": "function deepMergeOptions(a, b) {\n  return a;\n}\nmodule.exports = deepMergeOptions;\n"}
    for i in range(20):
        files[f"lib/user_{i:02}.js"] = f"const merge = require('./util');\nfunction use{i}() {{ merge(); }}\n"
    commit_files(brain, files, now=NOW)
    reasons = _reasons(brain, "`deepMergeOptions()` loses nested arrays")
    assert list(reasons)[0] == "lib/util.js"
    assert not any("imported by `lib/util.js`" in r for rs in reasons.values() for r in rs)


def test_identifiers_written_against_cjk_text_are_read_whole():
    # CJK characters count as word characters: `但discov.EtcdConf中没有user` must still give the names
    sig = extract_signals("现在不支持etcd的身份验证吗？\n但discov.EtcdConf中没有user等字段，无法进行身份认证。")
    assert "discov.EtcdConf" in sig.dotted
    assert "EtcdConf" in sig.idents
    assert {"discov", "etcdconf", "etcd", "conf"} <= set(sig.words)


def test_a_cjk_report_naming_a_go_struct_ranks_its_file(brain):
    commit_files(brain, {
        "core/discov/config.go": "package discov\n\ntype EtcdConf struct {\n\tHosts []string\n\tKey string\n}\n",
        "core/discov/publisher.go": "package discov\n\nfunc NewPublisher(hosts []string) {}\n",
        "rest/server.go": "package rest\n\n// user name check\nfunc Start(user string) {}\n",
    }, now=NOW)
    assert brain.locate("但discov.EtcdConf中没有user等字段，无法进行身份认证").paths[0] == "core/discov/config.go"
