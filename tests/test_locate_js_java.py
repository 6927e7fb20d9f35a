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


def test_a_camel_case_word_names_the_one_file_of_its_name_in_another_case(brain):
    commit_files(brain, {
        "packages/mobx/src/api/tojs.ts": "export function convert(source: unknown) {\n  return source;\n}\n",
        "packages/mobx/src/api/configure.ts": "export function configure(options: object) {\n  return options;\n}\n",
        "lib/fromjson.ts": "export const a = 1;\n",
        "src/fromjson.ts": "export const b = 2;\n",
        "src/other.js": "module.exports = 2;\n",
    }, now=NOW)
    reasons = _reasons(brain, "`toJS` throws with the proxies setting")
    assert "file named `toJS`" in reasons["packages/mobx/src/api/tojs.ts"]
    reasons = _reasons(brain, "`fromJson` throws with the proxies setting")  # two files of the name: neither
    assert not any(r.startswith("file named") for found in reasons.values() for r in found)
    reasons = _reasons(brain, "The Other setting throws")  # a capitalised word still names only its spelling
    assert not any(r.startswith("file named") for r in reasons.get("src/other.js", []))


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


def test_a_declaration_beside_the_typescript_source_it_is_compiled_from_is_demoted_unless_named(brain):
    commit_files(brain, {
        "src/locale/uk/index.ts": "import { localize } from './localize';\nexport const uk = { code: 'uk', localize };\n",
        "src/locale/uk/index.d.ts": "export const uk: { code: string; localize: unknown };\n",
        "src/locale/uk/localize.ts": "export function localize(day: number) {\n  return 'uk' + day;\n}\n",
        "lib/headers.js": "module.exports = { uk: 1 };\n",
        "lib/headers.d.ts": "export const uk: number;\n",
    }, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    from brain.search.evidence.task import shadowed_declaration

    assert shadowed_declaration(view, "src/locale/uk/index.d.ts")
    assert not shadowed_declaration(view, "lib/headers.d.ts")  # hand-written beside JavaScript: no copy
    assert not shadowed_declaration(view, "src/locale/uk/index.ts")
    ranked = [hit.path for hit in brain.locate("fix uk locale code", limit=10).files]
    assert ranked.index("src/locale/uk/index.ts") < ranked.index("src/locale/uk/index.d.ts")
    named = [hit.path for hit in brain.locate("fix the uk code in src/locale/uk/index.d.ts", limit=10).files]
    assert named[0] == "src/locale/uk/index.d.ts"


def test_a_title_about_exports_lends_the_best_files_barrel_a_share(brain):
    commit_files(brain, {
        "src/index.ts": "export * from './schema/Table';\nexport * from './query/Builder';\n",
        "src/schema/view/View.ts": "export class View {\n  name = 'view';\n}\n",
        "src/schema/Table.ts": "export class Table {\n  name = 'table';\n}\n",
        "src/query/Builder.ts": "export class Builder {\n  build() {\n    return 1;\n  }\n}\n",
        "src/query/index.test.ts": "import { Builder } from './Builder';\n",
    }, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    from brain.search.evidence.neighbours import barrel_of

    assert barrel_of(view, "src/schema/view/View.ts") == "src/index.ts"  # the nearest index above it
    assert barrel_of(view, "src/query/Builder.ts") == "src/index.ts"  # a test named index is no barrel
    assert barrel_of(view, "src/index.ts") is None
    reasons = _reasons(brain, "fix: add missing export for View class")
    assert list(reasons)[0] == "src/schema/view/View.ts"
    assert any(r.startswith("barrel exporting `src/schema/view/View.ts`") for r in reasons["src/index.ts"])
    # a title not about exports lends the barrel nothing
    other = _reasons(brain, "fix: the View class name")
    assert not any(r.startswith("barrel exporting") for r in other.get("src/index.ts", []))


def test_a_wrapper_passing_on_the_module_of_its_name_lends_it_its_score_and_steps_below(brain):
    commit_files(brain, {
        "lib/setImmediate.js": "/**\n * Calls the callback on a later loop around the event loop, in browsers too.\n */\n"
                               "import setImmediate from './internal/setImmediate';\n\nexport default setImmediate;\n",
        "lib/internal/setImmediate.js": "export function fallback(fn) {\n  setTimeout(fn, 0);\n}\n"
                                        "export default typeof setImmediate === 'function' ? setImmediate : fallback;\n",
        "api/pin.js": "const { render } = require('../lib/render');\nmodule.exports = async (req, res) => {\n"
                      "  res.send(render(req.query));\n};\n",
        "lib/render.js": "function render(query) {\n  return query;\n}\nmodule.exports = { render };\n",
        "lib/series.js": "export default function series(tasks) {\n  return tasks;\n}\n",
    }, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    from brain.search.evidence.task import wrapped_module

    assert wrapped_module(view, "lib/setImmediate.js") == "lib/internal/setImmediate.js"
    assert wrapped_module(view, "api/pin.js") is None  # a handler of another name defines nothing either
    assert wrapped_module(view, "lib/series.js") is None  # it defines `series`
    reasons = _reasons(brain, "avoid browser throttling of the callback on a later loop in browsers")
    ranked = list(reasons)
    assert ranked.index("lib/internal/setImmediate.js") < ranked.index("lib/setImmediate.js")
    assert any(r.startswith("wrapped by `lib/setImmediate.js`") for r in reasons["lib/internal/setImmediate.js"])


def test_a_javascript_file_in_a_folder_the_title_names_whole_is_lifted(brain):
    commit_files(brain, {
        "src/language-js/comments/handle-comments.js": "function handleComment(node) {\n  return node.parens;\n}\n"
                                                      "module.exports = { handleComment };\n",
        "src/language-js/print/function.js": "function printFunction(node) {\n  return node.parens + node.body;\n}\n"
                                             "module.exports = { printFunction };\n",
        "app/comments/views.py": "def parens(node):\n    return node.body\n",
    }, now=NOW)
    reasons = _reasons(brain, "Fix comment between parens and function body")
    assert "in a folder the title names (`comments`)" in reasons["src/language-js/comments/handle-comments.js"]
    assert not any(r.startswith("in a folder the title names") for r in reasons.get("app/comments/views.py", []))
    assert not any(r.startswith("in a folder the title names") for r in reasons["src/language-js/print/function.js"])
