"""JavaScript and Java specifics of the ranking: multi-line and type imports, class headers whose brace
opens below, `extends` links and overrides, declaration twins, links to a running service, file names."""

from __future__ import annotations

from brain.search.definitions import base_types, scan_definitions
from brain.search.evidence.neighbours import Context, _overrides, _siblings, declaration_twins, entry_importers
from brain.search.locate import extract_signals, url_routes
from brain.search.ranking import Evidence, Links, _lend_to_entry_points, _lend_to_overriders, _lend_to_siblings
from brain.search.weights import shipped_weights
from card_helpers import commit_files

NOW = "# Now\n\nFix the bugs.\n"  # a brain with its now.md, as a session leaves it
W = shipped_weights().shares


def _reasons(brain, text: str) -> dict[str, list[str]]:
    return {hit.path: hit.reasons for hit in brain.locate(text, limit=40).files}


# -- the scanner ------------------------------------------------------------------------


def test_javascript_imports_that_end_a_multi_line_statement_and_type_imports_in_comments():
    text = ('const {\n  kFormatter,\n  wrapText,\n} = require("../common/utils");\n'
            'import {\n  a,\n  b,\n} from "./helpers";\n'
            '/**\n * @typedef {import("../fetchers/types").Lang} Lang\n */\n'
            "function render() {\n  if (x) {\n  } else {\n  }\n}\n"
            "const mod = await import('./lazy');\n")
    assert scan_definitions(text, "js").imports == ["../common/utils", "./helpers", "../fetchers/types", "./lazy"]


def test_java_class_headers_with_the_brace_below_still_own_their_methods():
    text = ("package com.acme.core;\n\npublic abstract class JsonParser\n    implements Closeable, Versioned\n{\n"
            "    public abstract NumberType getNumberType() throws IOException;\n"
            "    public static enum NumberType\n    {\n        INT, LONG;\n    }\n"
            "    public int nextToken() { return 0; }\n}\n")
    quals = {qual for _, _, qual, _ in scan_definitions(text, "java").symbols}
    assert {"JsonParser.getNumberType", "JsonParser.NumberType", "JsonParser.nextToken"} <= quals
    assert scan_definitions(text, "java").imports == ["Closeable", "Versioned"]


def test_base_types_of_a_class_header_drop_generics_and_packages():
    assert base_types("public class A<T extends X> extends b.B<T, Map<K, V>> implements C, D<E> {") == ["B", "C", "D"]
    assert base_types("    implements Closeable, Versioned") == ["Closeable", "Versioned"]
    assert base_types("public final class Plain {") == []


# -- pure helpers -----------------------------------------------------------------------


def test_declaration_twins_pair_a_module_with_its_d_ts_and_a_declaration_with_its_flavours():
    files = {"index.d.ts", "index.d.cts", "lib/axios.js", "lib/x.js", "lib/x.d.ts", "src/types.d.ts"}
    assert declaration_twins(files, "lib/x.js") == ["lib/x.d.ts"]
    assert declaration_twins(files, "lib/x.d.ts") == ["lib/x.js"]
    assert declaration_twins(files, "index.d.ts") == ["index.d.cts"]
    assert declaration_twins(files, "lib/axios.js") == []
    assert declaration_twins(files, "src/types.d.ts") == []


def test_links_to_a_running_service_keep_their_route_not_other_addresses():
    text = ("![](https://stats.example.app/api/pin/?username=a&repo=b) see https://github.com/o/r/issues/12 "
            "and https://www.youtube.com/watch?v=1 and https://x.example/api/ and "
            "https://github.com/o/r/blob/main/src/x.go#L3")
    assert url_routes(text) == ["api/pin"]
    assert extract_signals(text).routes == ["api/pin"]


def test_identifiers_met_only_on_trace_lines_are_marked():
    text = ("Fails\n\nboom\n\tat com.acme.core.JsonParser.nextToken(JsonParser.java:4)\n\nThe `Reader` is fine\n")
    sig = extract_signals(text)
    assert "JsonParser" in sig.in_traces_only
    assert "Reader" not in sig.in_traces_only


# -- ranking on small repositories ----------------------------------------------------------


def test_a_class_header_links_a_subclass_to_its_base_in_another_package(brain):
    commit_files(brain, {
        "src/main/java/com/acme/core/JsonParser.java":
            "package com.acme.core;\n\npublic abstract class JsonParser\n    implements Closeable\n{\n"
            "    public abstract NumberType getNumberType() throws IOException;\n}\n",
        "src/main/java/com/acme/core/util/JsonParserDelegate.java":
            "package com.acme.core.util;\n\nimport com.acme.core.*;\n\npublic class JsonParserDelegate extends JsonParser\n{\n"
            "    public NumberType getNumberType() throws IOException { return delegate.getNumberType(); }\n}\n",
    }, now=NOW)
    brain.locate("getNumberType")  # brings the index up to date
    view = brain.index.code_view()
    forward, _ = view.import_graph()
    assert forward["src/main/java/com/acme/core/util/JsonParserDelegate.java"] == {
        "src/main/java/com/acme/core/JsonParser.java"}
    assert sorted(view.files_writing("getNumberType", 5)) == ["src/main/java/com/acme/core/JsonParser.java",
                                                             "src/main/java/com/acme/core/util/JsonParserDelegate.java"]
    assert view.files_writing("delegate", 5) == ["src/main/java/com/acme/core/util/JsonParserDelegate.java"]


class _View:
    """The few CodeView lookups the link reading uses."""

    def __init__(self, imports: dict[str, list[str]], links: dict[str, set[str]]):
        self._imports, self._links = imports, links

    def is_test(self, path: str) -> bool:
        return False

    def imports_of(self, path: str) -> list[str]:
        return self._imports.get(path, [])

    def import_graph(self):
        backward: dict[str, set[str]] = {}
        for a, bs in self._links.items():
            for b in bs:
                backward.setdefault(b, set()).add(a)
        return self._links, backward


def _lent(lend, evidence: Evidence, score: dict[str, float]) -> dict[str, tuple[float, str]]:
    """What one lending pass of ``combine`` gives, file -> (share, reason)."""
    got: dict[str, tuple[float, str]] = {}
    lend(evidence, shipped_weights(), dict(score), lambda p, w, r: got.setdefault(p, (w, r)), None)
    return got


def _evidence(links: dict[str, Links]) -> Evidence:
    evidence = Evidence()
    for path, found in links.items():
        evidence.file(path).links = found
    return evidence


def test_a_subclass_defining_the_method_the_text_names_borrows_from_its_base():
    base, sub, user, other = "core/JsonParser.java", "util/JsonParserDelegate.java", "core/Factory.java", "x/Other.java"
    view = _View({sub: ["core.JsonParser", "JsonParser"], user: ["core.JsonParser"]},
                 {sub: {base}, user: {base}})
    defs = {"getNumberType": [(base, "decl", "JsonParser.getNumberType"), (sub, "method", "JsonParserDelegate.getNumberType"),
                              (user, "method", "Factory.getNumberType"), (other, "method", "Other.getNumberType")]}
    params = shipped_weights().params
    overrides = _overrides(view, base, {sub, user}, Context({"getNumberType": 2.0, "value": 0.2}, defs), params)
    assert overrides == [("getNumberType", sub)]  # `user` only imports it; `value` is not code-like enough
    score = {base: 20.0, "a.java": 10.0, "b.java": 9.0, sub: 2.0, user: 2.0}
    got = _lent(_lend_to_overriders, _evidence({base: Links(overrides=overrides)}), score)
    assert got == {sub: (W["override"] * 20.0, f"also defines `getNumberType` of `{base}`")}
    # a method defined all over is no sign of an override; nor is an English word
    crowded = {"getNumberType": defs["getNumberType"] + [(f"f{i}.java", "method", "F.getNumberType") for i in range(5)]}
    assert _overrides(view, base, {sub, user}, Context({"getNumberType": 2.0}, crowded), params) == []
    # and one of the best files borrows nothing from another
    assert _lent(_lend_to_overriders, _evidence({base: Links(overrides=overrides)}), {**score, sub: 15.0}) == {}


def test_a_capitalised_word_names_only_the_file_spelled_the_same(brain):
    commit_files(brain, {
        "src/main/java/com/acme/util/RecyclerPool.java":
            "package com.acme.util;\n\npublic interface RecyclerPool {\n    void release();\n}\n",
        "src/common/card.js": "function draw() {}\nmodule.exports = draw;\n",
    }, now=NOW)
    reasons = _reasons(brain, "Add `RecyclerPool.clear()` for dropping pooled objects\n\nThe Card looks fine.")
    assert "file named `RecyclerPool`" in reasons["src/main/java/com/acme/util/RecyclerPool.java"]
    assert not any(r.startswith("file named") for r in reasons.get("src/common/card.js", []))


def test_a_link_to_the_service_names_its_handler_which_lends_to_what_it_imports(brain):
    commit_files(brain, {
        "api/pin.js": 'const { renderRepoCard } = require("../src/cards/repo-card");\n'
                      "module.exports = async (req, res) => {\n  res.send(renderRepoCard(req.query));\n};\n",
        "src/cards/repo-card.js": "function renderRepoCard(repo) {\n  return repo.name;\n}\n"
                                  "module.exports = { renderRepoCard };\n",
        "api/other.js": "module.exports = async (req, res) => {\n  res.send('');\n};\n",
        "scripts/generate-doc.js": 'const fs = require("fs");\nconst other = require("../api/other");\n'
                                   "function pin() { return 'pin'; }\n",
    }, now=NOW)
    reasons = _reasons(brain, "Long names overflow\n\n![](https://stats.example.app/api/pin/?username=a&repo=b)")
    assert "route `/api/pin` of a link in the task" in reasons["api/pin.js"]
    assert any("imported by `api/pin.js`" in r for r in reasons["src/cards/repo-card.js"])
    # a script (demoted after lending) does not lend on its raw score
    assert not any("`scripts/generate-doc.js`" in r for r in reasons.get("api/other.js", []))


def test_a_javascript_module_lends_its_declaration_twin_a_share(brain):
    commit_files(brain, {
        "lib/headers.js": "class AxiosHeaders {\n  normalize(format) {\n    return this;\n  }\n}\n"
                          "module.exports = AxiosHeaders;\n",
        "lib/headers.d.ts": "export class AxiosHeaders {\n  normalize(format: boolean): AxiosHeaders;\n}\n",
        "lib/other.js": "function unrelated() {}\nmodule.exports = unrelated;\n",
    }, now=NOW)
    reasons = _reasons(brain, "`AxiosHeaders.normalize()` drops the header case")
    assert list(reasons)[0] == "lib/headers.js"
    assert any(r.startswith("declaration twin of `lib/headers.js`") for r in reasons["lib/headers.d.ts"])


def test_a_card_lends_the_declarations_it_imports_from_its_folder_a_share(brain):
    commit_files(brain, {
        "src/cards/langs-card.js": '/**\n * @param {import("./types").LangCardOptions} options\n */\n'
                                   "function renderLangsCard(langs, options) {\n  return langs.slice(options.count);\n}\n"
                                   "module.exports = { renderLangsCard };\n",
        "src/cards/types.d.ts": "export type LangCardOptions = {\n  count: number;\n};\n",
        "src/common/colors.js": "function pick() {}\nmodule.exports = { pick };\n",
    }, now=NOW)
    reasons = _reasons(brain, "`renderLangsCard()` should show an Other entry past the count")
    assert list(reasons)[0] == "src/cards/langs-card.js"
    assert any(r.startswith("declaration twin of `src/cards/langs-card.js`") for r in reasons["src/cards/types.d.ts"])


def test_entry_points_importing_the_best_files_borrow_from_each():
    card, fetcher, other = "src/cards/langs-card.js", "src/fetchers/langs.js", "src/common/colors.js"
    entry, used, script = "api/langs.js", "src/index.js", "scripts/doc.js"
    view = _View({}, {entry: {card, fetcher}, used: {card}, "src/app.js": {used}, script: {card}, "api/other.js": {other}})
    _, backward = view.import_graph()
    params = shipped_weights().params
    # the handler nothing imports; a module imported elsewhere, a script, others are not entry points
    assert entry_importers(view, card, backward, params) == [entry]
    assert entry_importers(view, fetcher, backward, params) == [entry]
    links = {card: Links(entries=[entry]), fetcher: Links(entries=[entry]), "src/x.js": Links()}
    got = _lent(_lend_to_entry_points, _evidence(links), {card: 20.0, fetcher: 10.0, "src/x.js": 9.0, entry: 1.0})
    assert got == {entry: (W["entry_share"] * 30.0, "entry point importing the best files")}  # a share of each


class _WritingView(_View):
    def __init__(self, imports, links, writers: dict[str, list[str]]):
        super().__init__(imports, links)
        self._writers = writers

    def files_writing(self, word: str, limit: int) -> list[str]:
        return self._writers.get(word, [])[:limit]


def test_sibling_subclasses_writing_the_named_method_borrow_from_the_best_one():
    base, seed, sib, quiet, user = "ParserBase.java", "ReaderParser.java", "StreamParser.java", "AsyncParser.java", "Io.java"
    imports = {seed: ["ParserBase"], sib: ["ParserBase"], quiet: ["ParserBase"], user: ["a.b.ParserBase"]}
    links = {seed: {base}, sib: {base}, quiet: {base}, user: {base}}
    view = _WritingView(imports, links, {"usesPadding": [seed, sib, user, "Base64Variant.java"]})
    forward, backward = view.import_graph()
    siblings = _siblings(view, seed, forward, backward, ["usesPadding"], {}, shipped_weights().params)
    # both subclasses of the base are siblings (a file only importing it is not); only one writes the name
    assert siblings == [("ParserBase", [quiet, sib], [("usesPadding", [sib])])]
    score = {seed: 20.0, "a.java": 10.0, "b.java": 9.0, sib: 3.0}
    got = _lent(_lend_to_siblings, _evidence({seed: Links(siblings=siblings)}), score)
    assert got == {sib: (W["sibling"] * 20.0, f"like `{seed}` extends `ParserBase` and writes `usesPadding`")}


def test_only_code_shaped_names_reach_the_override_and_sibling_shares():
    """A capitalised prose word of a title ("Add", "Avoid") weighs like code there (x2 for the title) but
    is not code: the override and sibling shares take only names shaped or marked as code."""
    from brain.search.locate import extract_signals

    sig = extract_signals("Add usesPadding check to the `clear` method\n\nAvoid padding when reading.")
    assert sig.idents["Add"] >= 1.0  # the title's weight alone would have let it through
    assert {"usesPadding", "clear"} <= sig.code_like
    assert not {"Add", "Avoid", "padding", "reading"} & sig.code_like


def test_typescript_imports_name_a_source_by_what_it_compiles_to(brain):
    commit_files(brain, {
        "src/core/options.ts": "import { merge } from '../utils/merge.js';\nexport function normalize() {\n"
                               "  return merge();\n}\n",
        "src/utils/merge.ts": "export function merge() {\n  return {};\n}\n",
        "src/view.tsx": "import { normalize } from './core/options.js';\nexport const View = () => normalize();\n",
        "src/esm.mts": "import { merge } from './utils/merge.js';\nexport const m = merge;\n",
        "src/legacy.js": "const x = require('./plain.js');\nmodule.exports = x;\n",
        "src/plain.js": "module.exports = 1;\n",
        "src/plain.ts": "export default 2;\n",
    }, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    assert view.resolve_import("src/core/options.ts", "../utils/merge.js") == ["src/utils/merge.ts"]
    assert view.resolve_import("src/view.tsx", "./core/options.js") == ["src/core/options.ts"]
    assert view.resolve_import("src/esm.mts", "./utils/merge.js") == ["src/utils/merge.ts"]
    # a real `.js` file beside a `.ts` of the same name is the one imported
    assert view.resolve_import("src/legacy.js", "./plain.js") == ["src/plain.js"]
    assert view.resolve_import("src/core/options.ts", "../utils/missing.js") == []
    forward, backward = view.import_graph()
    assert "src/utils/merge.ts" in forward["src/core/options.ts"]
    assert "src/view.tsx" in backward["src/core/options.ts"]
