"""The resolved import graph kept in index.db (``CodeView.import_graph``, rows of ``graph_store``): the
same graph as resolving every import again, never a stale one after the code tables change, and an
old JSON-kept graph or a damaged key resolved again."""

from __future__ import annotations

import brain as brainlib
from brain.search.codeview import CodeView


def resolved(view: CodeView):
    """The graph resolved from the import lines, bypassing the cache."""
    view._cached_graph = lambda key: None
    view._store_graph = lambda key, forward: None
    forward, backward = view.import_graph()
    return ({k: v for k, v in forward.items() if v}, {k: v for k, v in backward.items() if v})


def graph(view: CodeView):
    forward, backward = view.import_graph()
    return ({k: v for k, v in forward.items() if v}, {k: v for k, v in backward.items() if v})


def stored(b) -> bool:
    return b.index.db.execute("SELECT 1 FROM meta WHERE key = 'code_graph'").fetchone() is not None


def test_the_kept_graph_is_the_resolved_one_and_follows_changes(repo):
    (repo / "shop").mkdir()
    (repo / "shop" / "__init__.py").write_text("")
    (repo / "shop" / "orders.py").write_text("from shop.tax import vat\n\ndef place():\n    return vat(1)\n")
    (repo / "shop" / "tax.py").write_text("def vat(x):\n    return x\n")
    (repo / "web").mkdir()
    (repo / "web" / "app.js").write_text("import { h } from './util';\nexport const a = h;\n")
    (repo / "web" / "util.js").write_text("export function h() {}\n")
    b = brainlib.init(repo)
    b.reindex()
    first = graph(b.index.code_view())
    assert stored(b)
    assert first == resolved(b.index.code_view())
    kept = b.index.code_view().import_graph()
    assert not isinstance(kept[0], dict)  # read back from index.db's rows, not resolved again
    assert graph(b.index.code_view()) == first
    assert first[0]["shop/orders.py"] == {"shop/tax.py"} and first[1]["web/util.js"] == {"web/app.js"}
    (repo / "shop" / "billing.py").write_text("def bill():\n    pass\n")
    (repo / "shop" / "orders.py").write_text("from shop.billing import bill\n\ndef place():\n    return bill()\n")
    b.index.refresh_code()
    after = graph(b.index.code_view())
    assert after == resolved(b.index.code_view())
    assert after[0]["shop/orders.py"] == {"shop/billing.py"}


def test_a_damaged_kept_graph_is_resolved_again(repo):
    (repo / "a.py").write_text("import b\n")
    (repo / "b.py").write_text("X = 1\n")
    b = brainlib.init(repo)
    b.reindex()
    graph(b.index.code_view())
    b.index.db.execute("UPDATE meta SET value = 'not json' WHERE key = 'code_graph'")
    assert isinstance(b.index.code_view().import_graph()[0], dict)  # the key does not hold: resolved again
    assert graph(b.index.code_view())[0] == {"a.py": {"b.py"}}
    b.index.db.execute("DROP TABLE code_graph")  # an index.db from before the rows: resolved, then kept
    assert graph(b.index.code_view())[0] == {"a.py": {"b.py"}}
    assert stored(b) and not isinstance(b.index.code_view().import_graph()[0], dict)
