"""The folder evidence (evidence.folder): a best file lends a share to the files beside it that the text also
points at, and to the files of its name in sibling folders (one `platform.c` per system)."""

from __future__ import annotations

from brain.search.evidence.folder import folder_mates, namesakes
from brain.search.ranking import Evidence, Links, combine
from brain.search.weights import shipped_weights
from card_helpers import commit_files

NOW = "# Now\n\nFix the bugs.\n"
ON = {"folder": 0.15, "namesake": 0.15}  # the shares these tests lend with, whatever value the package ships


def _reasons(brain, text: str, monkeypatch) -> dict[str, list[str]]:
    from brain.search import ranking

    weights = shipped_weights().replace(ON)
    monkeypatch.setattr(ranking, "shipped_weights", lambda: weights)
    return {hit.path: hit.reasons for hit in brain.locate(text).files}


def test_a_best_file_lifts_the_file_beside_it_that_the_text_also_matches(brain, monkeypatch):
    commit_files(brain, {
        "net/http/conn.c": "int conn_flush_buffer(int fd) {\n  return fd; /* flush the pending buffer */\n}\n",
        "net/http/encode.c": "int encode_chunk(int n) {\n  return n; /* the buffer of one chunk */\n}\n",
        "net/http/route.c": "int route_find(int n) {\n  return n; /* last route */\n}\n",
        "core/pool.c": "int pool_grow(int n) {\n  return n; /* grow the chunk buffer pool: the last chunk */\n}\n",
        "core/arena.c": "int arena_grow(int n) {\n  return n; /* the last chunk of the buffer arena */\n}\n",
    }, now=NOW)
    reasons = _reasons(brain, "conn_flush_buffer() loses the last chunk of the buffer", monkeypatch)
    order = list(reasons)
    assert order[0] == "net/http/conn.c"
    assert any("beside `net/http/conn.c`" in r for r in reasons["net/http/encode.c"])
    assert order.index("net/http/encode.c") < order.index("core/arena.c")
    assert not any("beside" in r for r in reasons["core/pool.c"])


def test_a_platform_file_lends_to_its_namesakes_in_sibling_folders(brain, monkeypatch):
    commit_files(brain, {
        "linux/platform.c": "int platform_read_meminfo(void) {\n  return 1;\n}\n",
        "freebsd/platform.c": "int freebsd_sysctl(void) {\n  return 2;\n}\n",
        "darwin/platform.c": "int darwin_host_stats(void) {\n  return 3;\n}\n",
        "meter.c": "int meter_draw(void) {\n  return 4; /* memory used, cached */\n}\n",
        "swap.c": "int swap_draw(void) {\n  return 5; /* memory used */\n}\n",
        "cpu.c": "int cpu_draw(void) {\n  return 6; /* cached, used */\n}\n",
    }, now=NOW)
    reasons = _reasons(brain, "platform_read_meminfo() counts cached memory as used", monkeypatch)
    assert list(reasons)[0] == "linux/platform.c"
    for other in ("freebsd/platform.c", "darwin/platform.c"):
        assert any("named as `linux/platform.c`" in r for r in reasons[other])
    assert "meter.c" not in reasons or not any("named as" in r for r in reasons["meter.c"])


class _View:
    """The two lookups the folder evidence reads, over a plain list of paths (tests are `*_test.go`)."""

    def __init__(self, paths):
        self.files = {p: ("", p.endswith("_test.go")) for p in paths}
        self.by_name: dict[str, list[str]] = {}
        for p in paths:
            self.by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)

    def is_test(self, path):
        return self.files[path][1]


def test_a_big_folder_and_a_generic_name_lend_nothing():
    view = _View([f"pkg/f{i}.go" for i in range(40)] + ["a/x/mod.rs", "a/y/mod.rs", "a/x/conn.rs", "a/y/conn.rs",
                                                       "small/a.go", "small/b.go", "small/b_test.go", "small/c.rs",
                                                       "small/docs/d.go"])
    assert folder_mates(view, "pkg/f1.go", 30) == []  # 39 mates: not one unit
    assert folder_mates(view, "small/a.go", 30) == ["small/b.go"]  # no test, no other language, no subfolder
    assert namesakes(view, "a/x/mod.rs", 8) == []  # every Rust folder has one
    assert namesakes(view, "a/x/conn.rs", 8) == ["a/y/conn.rs"]


def test_the_folder_shares_follow_the_weights_and_stay_off_at_zero():
    evidence = Evidence()
    for path, value in (("a/best.go", 1.0), ("a/mate.go", 0.1), ("b/other.go", 0.15)):
        evidence.add(path, "bm25", value, "full-text match")
    evidence.file("a/best.go").links = Links(folder=["a/mate.go", "a/silent.go"])
    for path in ("a/mate.go", "b/other.go"):
        evidence.file(path).links = Links()
    weights = shipped_weights().replace(ON)
    order = [h.path for h in combine(evidence, weights).files]
    assert order[:2] == ["a/best.go", "a/mate.go"]
    assert "a/silent.go" not in order  # a folder-mate without evidence of its own is not lifted
    off = weights.replace({"folder": 0.0})
    assert [h.path for h in combine(evidence, off).files][:2] == ["a/best.go", "b/other.go"]
