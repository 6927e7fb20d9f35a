"""The code view's rows read on demand (``code_rows``): the same answers, in the same order, as maps
built from every ``code_files`` row, whether ``code_names`` is missing, kept, or stale after a change."""

from __future__ import annotations

from collections import defaultdict

import brain as brainlib


def every_row_maps(db):
    """What ``CodeView`` built from every row before (its reference answers)."""
    files, by_module, by_name, by_stem, generated = {}, {}, defaultdict(list), defaultdict(list), set()
    for path, module, is_test, gen in db.execute("SELECT path, module, is_test, generated FROM code_files"):
        files[path] = (module, bool(is_test))
        if gen:
            generated.add(path)
        if not is_test:
            by_module.setdefault(module, path)
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            if stem != "__init__":
                by_stem[stem.lower()].append(path)
        by_name[path.rsplit("/", 1)[-1]].append(path)
    return files, by_module, by_name, by_stem, generated


def same_answers(view) -> None:
    files, by_module, by_name, by_stem, generated = every_row_maps(view.db)
    for path in [*files, "nope.py", "pkg/nope.js"]:
        assert view.files.get(path) == files.get(path) and (path in view.files) == (path in files)
        assert (path in view.generated) == (path in generated)
    for module in [*by_module, "no.such"]:
        assert view.by_module.get(module) == by_module.get(module)
    for name in [*by_name, "missing.c"]:
        assert view.by_name.get(name, ()) == by_name.get(name, ())
    for stem in [*by_stem, "missing"]:
        assert view.by_stem.get(stem, []) == by_stem.get(stem, [])
    assert list(view.files) == list(files) and dict(view.files.items()) == files


def kept(b) -> bool:
    row = b.index.db.execute("SELECT value FROM meta WHERE key = 'code_names'").fetchone()
    return row is not None and row[0] == b.index.code_view().code_key()


def util_project(repo):
    """Files sharing the name `util` across folders and languages, indexed."""
    for folder in ("pkg", "pkg/sub", "web", "tests"):
        (repo / folder).mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "util.py").write_text("def f():\n    return 1\n")
    (repo / "pkg" / "sub" / "util.py").write_text("def g():\n    return 2\n")
    (repo / "pkg" / "Util.js").write_text("export const u = 1;\n")
    (repo / "web" / "util.js").write_text("export const w = 1;\n")
    (repo / "tests" / "test_util.py").write_text("def test_f():\n    pass\n")
    b = brainlib.init(repo)
    b.reindex()
    return b


def test_rows_on_demand_answer_as_the_maps_of_every_row(repo):
    b = util_project(repo)
    b.index.db.execute("DROP TABLE IF EXISTS code_names")  # an index.db from before the rows
    view = b.index.code_view()
    assert sorted(view.by_name.get("util.py")) == ["pkg/sub/util.py", "pkg/util.py"]
    assert sorted(view.by_stem.get("util")) == ["pkg/Util.js", "pkg/sub/util.py", "pkg/util.py", "web/util.js"]
    assert kept(b)  # the first name question stored the rows for the next view
    same_answers(view)
    second = b.index.code_view()
    second.files.every = None  # the kept rows answer: no view reads every row for a name or a stem
    assert second.by_name.get("util.js") == ["web/util.js"] and second.by_stem.get("test_util") is None
    same_answers(b.index.code_view())
    (repo / "web" / "util.py").write_text("X = 1\n")
    b.index.refresh_code()
    assert not kept(b)  # the code changed: the rows no longer hold until a view rebuilds them
    changed = b.index.code_view()
    assert sorted(changed.by_name.get("util.py")) == ["pkg/sub/util.py", "pkg/util.py", "web/util.py"]
    assert kept(b)
    same_answers(b.index.code_view())


def test_prefetched_rows_answer_as_rows_asked_one_by_one(repo):
    """``prefetch`` (one query for many paths, modules or stems) leaves the answers those of ``same_answers``."""
    b = util_project(repo)
    b.index.code_view().by_stem.get("util")  # the name rows kept: stems are then asked of code_names
    assert kept(b)
    files, by_module, _, by_stem, _ = every_row_maps(b.index.db)
    view = b.index.code_view()
    view.files.prefetch([*files, "nope.py", "pkg/nope.js", None])
    view.by_module.prefetch([*by_module, "no.such", "pkg.util.f"])
    view.by_stem.prefetch([*by_stem, "missing"])
    assert "nope.py" in view.files._memo and "no.such" in view.by_module._memo and "missing" in view.by_stem._memo
    view.db = None  # every answer below comes from what the prefetches read
    view.files.db = view.by_module.db = None
    for path in [*files, "nope.py", "pkg/nope.js"]:
        assert view.files.get(path) == files.get(path) and (path in view.files) == (path in files)
    for module in [*by_module, "no.such"]:
        assert view.by_module.get(module) == by_module.get(module)
    for stem in [*by_stem, "missing"]:
        assert view.by_stem.get(stem, []) == by_stem.get(stem, [])
