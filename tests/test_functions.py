"""Function-level localization: the function index, the ranking, and the task boot's code section."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from brain.search.functions import from_symbols, python_functions
from brain.tokens import estimate_tokens
from conftest import git


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


SHAPES = '''\
import functools


def plain(a, b):
    return helper(a) + b


@functools.lru_cache(maxsize=1)
@other_decorator
def decorated(x):
    return x


class Outer(Base, mixins.Mixin):
    """Doc."""

    limit = compute_limit()

    def method(self):
        self._private()
        obj.remote_call(1)
        return plain(1, 2)

    def _private(self):
        def nested(y):
            return inner_only(y)
        return nested

    class Inner:
        def deep(self):
            return super().method()


def helper(v):
    return v
'''


@pytest.fixture
def shop(brain):
    """A small project: a public API whose behaviour lives in an internal printer it calls."""
    repo = brain.repo
    _write(repo, "shop/__init__.py", "")
    _write(repo, "shop/api.py", "from shop.printing import _Printer\n\n\n"
                                "def render(expr):\n    \"\"\"Public entry point.\"\"\"\n    return _Printer().doprint(expr)\n\n\n"
                                "def parse(text):\n    return text.split()\n")
    _write(repo, "shop/printing.py", "class _Printer:\n    def doprint(self, expr):\n        return self._print_node(expr)\n\n"
                                     "    def _print_node(self, node):\n        if isinstance(node, list):\n"
                                     "            return ', '.join(self._print_node(n) for n in node)\n"
                                     "        return str(node)\n\n\n"
                                     "def unrelated_formatting():\n    return 'x'\n")
    _write(repo, "shop/orders.py", "from shop.tax import vat_for\n\n\nclass Order:\n    def total(self):\n"
                                   "        return vat_for(self)\n\n    def lines(self):\n        return []\n")
    _write(repo, "shop/tax.py", "def vat_for(order):\n    rate = 0.2\n    raise ValueError('unknown country code')\n\n\n"
                                "def rates():\n    return {}\n")
    _write(repo, "shop/shapes.py", SHAPES)
    _write(repo, "tests/test_shop.py", "def render(x):\n    pass\n\ndef test_total():\n    pass\n")
    brain.write("now.md", "# Now\n\nShip the printer fix.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the shop")  # a clean checkout, as a bug report meets it
    brain.reindex()
    return brain


def _defs(brain, path: str) -> dict[str, tuple]:
    db = brain.index.db
    return {q: (k, s, e, bool(x)) for q, k, s, e, x in db.execute(
        "SELECT qual, kind, start, end, exported FROM fn_defs WHERE path = ?", (path,))}


def _calls(brain, path: str, qual: str) -> set[tuple[str, str]]:
    db = brain.index.db
    return {(n, v) for n, v in db.execute("SELECT fn_calls.name, via FROM fn_calls JOIN fn_defs ON fn_defs.id = def_id "
                                          "WHERE path = ? AND qual = ?", (path, qual))}


# -- the index -----------------------------------------------------------------------


def test_index_line_ranges_methods_nested_functions_and_decorators(shop):
    defs = _defs(shop, "shop/shapes.py")
    lines = SHAPES.splitlines()
    assert defs["plain"] == ("function", 4, 5, True)
    assert lines[defs["decorated"][1] - 1].startswith("@functools.lru_cache")  # a decorator's line is the first
    assert defs["decorated"][:3] == ("function", 8, 11)
    assert defs["Outer"][0] == "class" and lines[defs["Outer"][2] - 1].strip() == "return super().method()"
    assert defs["Outer.method"][:1] == ("method",) and defs["Outer._private"][3] is False
    assert defs["Outer._private.nested"][0] == "function" and defs["Outer._private.nested"][3] is False
    assert defs["Outer.Inner"][0] == "class" and defs["Outer.Inner.deep"][0] == "method"
    for qual, (_, start, end, _) in defs.items():
        parent = qual.rsplit(".", 1)[0]
        if "." in qual:
            assert defs[parent][1] <= start <= end <= defs[parent][2], qual


def test_index_call_edges_by_kind_and_not_through_nested_definitions(shop):
    assert _calls(shop, "shop/shapes.py", "plain") == {("helper", "name")}
    method = _calls(shop, "shop/shapes.py", "Outer.method")
    assert method == {("_private", "self"), ("remote_call", "attr"), ("plain", "name")}
    assert _calls(shop, "shop/shapes.py", "Outer._private") == set()  # the nested function's call is its own
    assert _calls(shop, "shop/shapes.py", "Outer._private.nested") == {("inner_only", "name")}
    assert ("method", "self") in _calls(shop, "shop/shapes.py", "Outer.Inner.deep")
    assert ("compute_limit", "name") in _calls(shop, "shop/shapes.py", "Outer")  # the class body's own statements


def test_index_leaves_tests_out_and_follows_changes(shop):
    assert _defs(shop, "tests/test_shop.py") == {}
    _write(shop.repo, "shop/tax.py", "def vat_for(order, country):\n    return 0.2\n")
    (shop.repo / "shop/orders.py").unlink()
    shop.reindex()
    assert _defs(shop, "shop/tax.py") == {"vat_for": ("function", 1, 2, True)}
    assert _defs(shop, "shop/orders.py") == {}
    assert shop.index.dump()["fn_defs"] == (shop.reindex(rebuild=True) and shop.index.dump()["fn_defs"])


@dataclass
class Symbol:  # the shape the cards' language extractors return
    qualname: str
    kind: str
    start: int
    end: int
    exported: bool
    signature: str


def test_symbols_of_any_extractor_become_definitions_with_calls():
    text = "struct Store {}\nimpl Store {\n  fn add(&self) {\n    self.save();\n    helper(1);\n  }\n}\nfn helper(x: i32) {}\n"
    defs = from_symbols([Symbol("Store", "struct", 1, 1, True, "struct Store"), Symbol("Store.add", "fn", 3, 6, True, "fn add"),
                         Symbol("helper", "fn", 8, 8, False, "fn helper"), Symbol("LIMIT", "const", 9, 9, True, "")], text)
    by = {d.qual: d for d in defs}
    assert set(by) == {"Store", "Store.add", "helper"}
    assert by["Store"].kind == "class" and by["Store.add"].kind == "method" and by["helper"].kind == "function"
    assert {(c.name, c.via) for c in by["Store.add"].calls} == {("save", "self"), ("helper", "name")}


def test_typescript_functions_classes_and_methods(brain):
    pytest.importorskip("tree_sitter_typescript")
    _write(brain.repo, "web/cart.ts", "export class CartStore {\n  addItem(id: string) {\n    this.save(id);\n  }\n"
                                      "  save(id: string) {}\n}\n\nexport function emptyCart() {\n  return new CartStore();\n}\n\n"
                                      "const total = (xs: number[]) => {\n  return sum(xs);\n};\n")
    brain.reindex()
    defs = _defs(brain, "web/cart.ts")
    assert defs["CartStore"][:3] == ("class", 1, 6) and defs["CartStore.addItem"][:3] == ("method", 2, 4)
    assert defs["emptyCart"][:3] == ("function", 8, 10) and defs["total"][:3] == ("function", 12, 14)
    assert ("save", "self") in _calls(brain, "web/cart.ts", "CartStore.addItem")


@given(st.text(alphabet=st.sampled_from(list("defclass (): \n    @x=self.rtun_")), max_size=300))
@settings(max_examples=200, deadline=None)
def test_python_extraction_never_fails_and_ranges_nest(text):
    defs = python_functions(text)
    by = {d.qual: d for d in defs}
    for d in defs:
        assert 1 <= d.start <= d.end
        if d.parent in by:
            assert by[d.parent].start <= d.start and d.end <= by[d.parent].end


@given(st.text(alphabet=st.sampled_from(list("fn(){}.self this_x\n")), max_size=300),
       st.lists(st.tuples(st.integers(-2, 30), st.integers(-2, 30), st.sampled_from(["fn", "class", "const", "method"])),
                max_size=6))
@settings(max_examples=150, deadline=None)
def test_symbols_of_any_shape_never_fail(text, spans):
    defs = from_symbols([Symbol(f"s{i}", kind, a, b, True, "") for i, (a, b, kind) in enumerate(spans)], text)
    assert all(1 <= d.start <= d.end and all(d.start <= c.line <= d.end for c in d.calls) for d in defs)


def test_boot_never_shows_code_through_a_symlink_out_of_the_repository(shop, tmp_path):
    secret = tmp_path / "outside.py"
    secret.write_text("def vat_for(order):\n    SECRET_TOKEN = 'do-not-show'\n")
    (shop.repo / "shop" / "tax.py").unlink()
    (shop.repo / "shop" / "tax.py").symlink_to(secret)
    shop.reindex()
    result = _boot(shop, "vat_for raises ValueError: unknown country code")
    assert "do-not-show" not in result.text


# -- the ranking --------------------------------------------------------------------


def _ranked(brain, text: str, weights=None) -> list[str]:
    from brain.search.rank_functions import locate_functions

    _, hits = locate_functions(brain, text, limit=20, weights=weights)
    return [h.key for h in hits]


def test_a_traceback_frame_names_the_function(shop):
    text = ("Checkout fails for Monaco\nTraceback (most recent call last):\n"
            '  File "/srv/venv/lib/site-packages/shop/orders.py", line 6, in total\n'
            '  File "/srv/venv/lib/site-packages/shop/tax.py", line 3, in vat_for\n'
            "ValueError: unknown country code\n")
    ranked = _ranked(shop, text)
    assert ranked[0] == "shop/tax.py::vat_for"
    assert ranked.index("shop/orders.py::Order.total") < ranked.index("shop/orders.py::Order.lines")


def test_a_public_function_named_ranks_the_callee_that_holds_the_fix(shop):
    text = "render() drops the brackets of lists in lists\n\nCalling `render([1, [2, 3]])` gives '1, 2, 3'."
    ranked = _ranked(shop, text)
    assert ranked[0] == "shop/api.py::render"
    # the file ranking never names shop/printing.py: only the call graph leads there
    assert "shop/printing.py::_Printer.doprint" in ranked[:5]
    assert "shop/printing.py::_Printer._print_node" in ranked[:5]
    assert "shop/printing.py::unrelated_formatting" not in ranked[:5]
    assert "shop/printing.py::_Printer._print_node" not in _ranked(shop, text, _without("call"))[:5]


def test_ranking_is_deterministic_and_empty_without_evidence(shop):
    text = "Order.total ignores the VAT rate"
    assert _ranked(shop, text) == _ranked(shop, text)
    assert _ranked(shop, "") == []


# -- the boot ------------------------------------------------------------------------


def _boot(brain, text, **kw):
    return brain.boot(text, record=False, **kw)


def test_boot_shows_the_ranked_functions_code_with_line_numbers_before_cards(shop):
    shop.map()
    text = ("Checkout fails for Monaco\n"
            '  File "/srv/venv/lib/site-packages/shop/tax.py", line 3, in vat_for\n'
            "ValueError: unknown country code\n")
    result = _boot(shop, text)
    body = result.text
    assert body.index("## Now (.brain/now.md)") < body.index("## Functions for this task (ranked)")
    head = "## `shop/tax.py::vat_for` (lines 1-3, whole)"
    assert head in body
    code = body.split(head, 1)[1]
    assert "1 def vat_for(order):\n2     rate = 0.2\n3     raise ValueError('unknown country code')" in code
    assert body.index(head) < body.index("## Module card")
    slots = [s["slot"] for s in result.sections]
    assert slots.index("code") < slots.index("cards")
    assert result.functions[0]["id"] == "shop/tax.py::vat_for" and result.functions[0]["code"] == "whole"


def test_a_large_function_shows_its_signature_and_the_lines_the_evidence_points_to(shop):
    filler = "".join(f"    step_{i} = compute_step({i})\n" for i in range(150))
    _write(shop.repo, "shop/big.py", "def reconcile_ledger(entries):\n" + filler +
           "    balance = apply_discount_rounding(entries)\n" + filler + "    return balance\n")
    shop.reindex()
    result = _boot(shop, "reconcile_ledger gives a wrong balance\n"
                         '  File "/app/shop/big.py", line 152, in reconcile_ledger\n'
                         "  apply_discount_rounding is off by one cent")
    head = next(line for line in result.text.splitlines() if line.startswith("## `shop/big.py::reconcile_ledger`"))
    assert "excerpt" in head
    code = result.text.split(head, 1)[1].split("\n## ", 1)[0]
    assert "  1 def reconcile_ledger(entries):" in code
    assert "152     balance = apply_discount_rounding(entries)" in code
    assert "⋮" in code and "step_100 " not in code
    entry = next(f for f in result.functions if f["id"] == "shop/big.py::reconcile_ledger")
    assert entry["code"] == "excerpt"


@pytest.mark.parametrize("budget", [500, 900, 1500, 3000, 8000])
def test_task_boot_keeps_its_budget_and_now_first_and_whole(shop, budget):
    shop.map()
    shop.write("now.md", "# Now\n\n" + "Ship the printer fix carefully.\n" * 20)
    result = _boot(shop, "render() prints nested lists wrong; `_print_node` loses brackets", budget=budget)
    assert result.tokens <= budget and estimate_tokens(result.text) <= budget
    assert result.sections[0]["slot"] == "now"
    assert result.text.split("## Now (.brain/now.md)\n\n", 1)[1].startswith("# Now\n\n" + "Ship the printer fix carefully.\n" * 20)


def test_task_boot_is_deterministic(shop):
    shop.map()
    text = "render() prints nested lists wrong; see shop/api.py"
    first, second = _boot(shop, text), _boot(shop, text)
    assert first.text == second.text and first.to_dict() == second.to_dict()


def test_task_boot_cards_are_cut_to_the_ranked_files_and_the_rest_named(shop):
    _write(shop.repo, "shop/extra.py", "".join(f"def extra_helper_{i}(a, b):\n    return a\n\n" for i in range(60)))
    git(shop.repo, "add", "-A")
    git(shop.repo, "commit", "-q", "-m", "extra helpers")
    shop.reindex()
    shop.map()
    full = shop.boot(module="shop", record=False).text
    assert "extra_helper_10" in full  # the whole card lists everything
    result = _boot(shop, "Checkout fails: vat_for raises ValueError: unknown country code for Monaco")
    assert "Module card: `shop` (inferred from the task), cut to the ranked files' entries" in result.text
    assert "extra_helper_10" not in result.text
    assert any(o.source == ".brain/modules/shop.md" and o.fetch == "brain read modules/shop.md" for o in result.omitted)
    assert "`.brain/modules/shop.md`" in result.text or ".brain/modules/shop.md (" in result.text


def test_boot_json_functions_schema_from_the_cli(shop):
    out = subprocess.run([sys.executable, "-m", "brain", "-C", str(shop.repo), "boot", "--task",
                          "vat_for raises ValueError: unknown country code", "--json", "--no-record"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["tokens"] <= data["budget"]
    functions = data["functions"]
    assert functions and functions[0]["id"] == "shop/tax.py::vat_for"
    assert functions[0]["evidence"] == "named"  # the task writes `vat_for`
    for entry in functions:
        assert set(entry) == {"id", "path", "name", "kind", "start", "end", "score", "why", "code", "evidence"}
        assert entry["evidence"] in ("frame", "named", "call", "near", "text")
        assert entry["id"] == f"{entry['path']}::{entry['name']}"
        assert entry["kind"] in ("function", "method", "class")
        assert isinstance(entry["start"], int) and 1 <= entry["start"] <= entry["end"]
        assert isinstance(entry["score"], float) and all(isinstance(w, str) for w in entry["why"])
        assert entry["code"] in (None, "whole", "excerpt")
        assert not re.match(r"tests?/", entry["path"])
    plain = json.loads(subprocess.run([sys.executable, "-m", "brain", "-C", str(shop.repo), "boot", "--json", "--no-record"],
                                      capture_output=True, text=True, timeout=60, check=True).stdout)
    assert plain["functions"] == []


def test_task_boot_files_continue_with_the_files_the_top_functions_files_import(brain):
    """Past the ranked files and functions, the boot's `files` goes on where the code leads: the files the top
    functions' files import, nearest first (a fix often sits a module or two below what the report names)."""
    repo = brain.repo
    _write(repo, "flow/__init__.py", "")
    _write(repo, "flow/entry.py", "from flow.stages import advance\n\n\ndef run_pipeline(records):\n"
                                  "    \"\"\"Public entry point.\"\"\"\n    return [advance(r) for r in records]\n")
    _write(repo, "flow/stages.py", "from flow import storage\n\n\ndef advance(record):\n    return storage.keep(record)\n")
    _write(repo, "flow/storage.py", "from flow.codec import encode\n\n\ndef keep(item):\n    return encode(item)\n")
    _write(repo, "flow/codec.py", "def encode(value):\n    return repr(value)\n")
    _write(repo, "flow/unrelated.py", "def spare():\n    return 0\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the flow")
    brain.reindex()
    result = _boot(brain, "run_pipeline() loses the last record of a batch")
    files = result.files
    assert files[0] == "flow/entry.py"
    assert "flow/codec.py" in files  # three imports below what the report names, past the call graph's reach
    assert files.index("flow/storage.py") < files.index("flow/codec.py")
    # an unrelated file is never ranked nor followed; it is only named beside the top file, as a mate of its small
    # folder (search.beside), on its own line
    ranked = result.text.split("## Files for this task (ranked)", 1)[1].split("Beside the top files", 1)[0]
    assert "flow/unrelated.py" not in ranked
    assert "in the folder of `flow/entry.py`: " in result.text and "`flow/unrelated.py`" in result.text.split(
        "in the folder of `flow/entry.py`: ", 1)[1].split("\n", 1)[0]
    listed = next(s for s in result.to_dict()["sections"] if s["source"] == "ranked functions")
    assert listed and "`flow/codec.py`" in result.text


@pytest.fixture
def kinds(brain):
    """A project for the structural signals: callers, shared bases, sync/async twins."""
    repo = brain.repo
    _write(repo, "kit/__init__.py", "")
    _write(repo, "kit/text.py", "def squash_spaces(value):\n    return ' '.join(value.split())\n\n\n"
                                "def clean_label(label):\n    label = label.strip()\n    return squash_spaces(label)\n\n\n"
                                "def shout(value):\n    return value.upper()\n")
    _write(repo, "kit/enums.py", "class Choice:\n    def __str__(self):\n        return str(self.value)\n\n"
                                 "    def describe(self):\n        return repr(self)\n\n\n"
                                 "class TextChoice(Choice):\n    kind = 'text'\n\n\n"
                                 "class NumberChoice(Choice):\n    kind = 'number'\n\n\n"
                                 "class Palette:\n    def mix(self):\n        return 0\n")
    _write(repo, "kit/handlers.py", "class StaticMixin:\n    def fetch_page(self, request):\n        return self.serve(request)\n\n"
                                    "    async def fetch_page_async(self, request):\n        return self.serve(request)\n\n"
                                    "    def serve(self, request):\n        return request\n\n"
                                    "    def base_url(self):\n        return '/'\n")
    _write(repo, "kit/money.py", "class Amount:\n    def __init__(self, cents):\n        self.cents = cents\n\n"
                                 "    def __eq__(self, other):\n        return self.cents == other.cents\n\n"
                                 "    def __lt__(self, other):\n        return self.cents < other.cents\n\n"
                                 "    def __hash__(self):\n        return hash(self.cents)\n\n"
                                 "    def total(self, parts):\n        return sum(self._rounded(p) for p in parts)\n\n"
                                 "    def _rounded(self, part):\n        return round(part)\n\n"
                                 "    def label(self):\n        return 'amount'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the kit")
    brain.reindex()
    return brain


def _without(name: str):
    """The shipped weights with one function-ranking weight at zero."""
    from brain.search.weights import shipped_weights

    return shipped_weights().replace(functions={name: 0.0})


def _hits(brain, text: str, weights=None) -> dict:
    from brain.search.rank_functions import locate_functions

    _, hits = locate_functions(brain, text, limit=20, weights=weights)
    return {h.key: h for h in hits}


def test_the_caller_of_a_named_function_ranks(kinds):
    text = "squash_spaces() is applied twice to a label with tabs"
    hits = _hits(kinds, text)
    assert "calls `squash_spaces`" in hits["kit/text.py::clean_label"].reasons
    assert hits["kit/text.py::clean_label"].score > hits["kit/text.py::shout"].score
    without = _hits(kinds, text, _without("caller"))
    assert without["kit/text.py::clean_label"].score < hits["kit/text.py::clean_label"].score


def test_a_base_class_two_named_subclasses_share_ranks_with_its_methods(kinds):
    text = "TextChoice and NumberChoice members print as the enum name instead of the value"
    hits = _hits(kinds, text)
    assert hits["kit/enums.py::Choice.__str__"].score > hits["kit/enums.py::Palette.mix"].score
    without = _hits(kinds, text, _without("base"))
    assert without["kit/enums.py::Choice.__str__"].score < hits["kit/enums.py::Choice.__str__"].score


def test_the_sync_twin_of_a_named_async_method_ranks(kinds):
    text = "StaticMixin.fetch_page_async returns a coroutine where a response is expected"
    hits = _hits(kinds, text)
    twin = "kit/handlers.py::StaticMixin.fetch_page"
    assert hits[twin].score > hits["kit/handlers.py::StaticMixin.base_url"].score
    assert _hits(kinds, text, _without("twin"))[twin].score < hits[twin].score


def test_the_comparison_methods_of_a_top_ranked_one_rank_with_it(kinds):
    text = "Amount.__lt__ ordering is wrong for negative values"
    hits = _hits(kinds, text)
    assert hits["kit/money.py::Amount.__hash__"].score > hits["kit/money.py::Amount.label"].score
    assert _hits(kinds, text, _without("twin"))["kit/money.py::Amount.__hash__"].score < hits["kit/money.py::Amount.__hash__"].score


def test_a_method_calling_a_top_ranked_method_through_self_ranks(kinds):
    text = "Amount._rounded rounds half to even instead of up"
    hits = _hits(kinds, text)
    assert hits["kit/money.py::Amount.total"].score > hits["kit/money.py::Amount.label"].score
    assert hits["kit/money.py::Amount.total"].score < hits["kit/money.py::Amount._rounded"].score
    assert _hits(kinds, text, _without("self_caller"))["kit/money.py::Amount.total"].score < hits["kit/money.py::Amount.total"].score


def test_each_ranked_function_says_how_strong_its_evidence_is(shop):
    """A traceback frame, a written name, the call graph, or a text match only: the boot's line says which,
    so an agent reads on a frame and explores on a text match."""
    shop.map()
    frame = _boot(shop, "Checkout fails for Monaco\n"
                        '  File "/srv/venv/lib/site-packages/shop/tax.py", line 3, in vat_for\n'
                        "ValueError: unknown country code\n")
    assert frame.functions[0]["id"] == "shop/tax.py::vat_for" and frame.functions[0]["evidence"] == "frame"
    assert "Evidence: a traceback frame points into `shop/tax.py::vat_for`" in frame.text
    assert "1. [frame] `shop/tax.py::vat_for`" in frame.text
    named = _boot(shop, "Order.total ignores the VAT rate")
    assert named.functions[0]["id"] == "shop/orders.py::Order.total" and named.functions[0]["evidence"] == "named"
    assert "Evidence: the task names `shop/orders.py::Order.total`" in named.text
    # a definition the named one calls is reached through the call graph, not named itself
    assert {f["id"]: f["evidence"] for f in named.functions}.get("shop/tax.py::vat_for") == "call"
    words = _boot(shop, "the country rate is wrong when checking out")
    assert words.functions and all(f["evidence"] in ("text", "near") for f in words.functions)
    assert "Evidence: text match only" in words.text


def test_a_kind_of_evidence_counts_only_when_it_weighs(shop):
    from brain.search.rank_functions import strength_of

    assert strength_of({"frame_last": 6.0, "body": 4.0}) == "frame"
    assert strength_of({"name": 0.2, "body": 4.0, "file": 2.0}) == "text"  # a sliver of a shared name
    assert strength_of({"name": 0.2, "call": 3.0, "body": 4.0}) == "call"
    assert strength_of({}) == "text"
