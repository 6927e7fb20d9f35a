"""bench/corpus_functions.py: the corpus's function gold, from a real commit of a real repository and its index."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import corpus_functions as cf  # noqa: E402
from conftest import git  # noqa: E402

BASE = '''\
def helper(x):
    y = x + 1
    return y


class Cart:
    def add(self, item):
        self.items.append(item)

    def total(self):
        return sum(self.items)


def tail():
    return 0
'''

# total's body changed, a statement appended to helper's body, a method added between add and total,
# and a function appended after the file's last definition
AFTER = '''\
def helper(x):
    y = x + 1
    return y
    # unreachable note


class Cart:
    def add(self, item):
        self.items.append(item)

    def count(self):
        return len(self.items)

    def total(self):
        return sum(i.price for i in self.items)


def tail():
    return 0


def added():
    return 1
'''


def test_old_lines_are_the_changed_and_deleted_lines_of_the_old_side_whatever_the_context():
    diff = ("--- a/f.py\n+++ b/f.py\n@@ -3,4 +3,4 @@ def f():\n     keep\n-    gone\n+    new\n     keep\n"
            "-    also gone\n@@ -20,0 +21,2 @@\n+added\n+added\n")
    assert cf.old_lines(diff) == {4, 6}
    assert cf.insertions(diff) == {20: "added"}


def test_the_gold_is_the_definitions_a_commit_changed_read_at_its_base(repo):
    import brain as brainlib

    (repo / "shop.py").write_text(BASE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "shop.py").write_text(AFTER)
    git(repo, "commit", "-q", "-am", "change")
    commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "--detach", base)
    b = brainlib.init(repo)
    b.reindex()
    from brain.search.functions import FunctionView

    def run(*args, cwd):
        return git(cwd, *args)

    gold = cf.gold_functions(FunctionView(b.index.db), run, repo, base, commit, ["shop.py", "missing.py"])
    # the appended function changes nothing that existed; the added method changes its class
    assert gold == ["shop.py::Cart", "shop.py::Cart.total", "shop.py::helper"]
    ranks = cf.function_ranks(gold, ["shop.py::Cart.total", "shop.py::tail"], FunctionView(b.index.db), ["items"])
    assert ranks["fbrain"] == [None, 1, None]
    assert len(ranks["fbm25"]) == 3 and ranks["fbm25"][1] is not None
