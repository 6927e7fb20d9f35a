"""Module discovery over file listings (pure) and over a real tree (scan)."""

from __future__ import annotations

from brain.cards.discovery import FileInfo, scan
from brain.cards.grouping import discover, glob_to_regex, python_names


def listing(spec: dict[str, int]) -> list[FileInfo]:
    return [FileInfo(path, size, 1) for path, size in sorted(spec.items())]


def names(mods):
    return [m.name for m in mods]


def test_top_level_packages_are_modules_and_tests_are_not():
    files = listing({"pkg/__init__.py": 10, "pkg/a.py": 100, "other/__init__.py": 5, "tests/test_a.py": 50,
                     "setup.py": 20, "README.md": 3})
    mods = discover(files)
    assert names(mods) == ["other", "pkg"]
    pkg = mods[1]
    assert pkg.kind == "python" and pkg.package == "pkg" and pkg.files == ("pkg/__init__.py", "pkg/a.py")


def test_large_package_is_split_into_subpackage_cards():
    files = listing({
        "big/__init__.py": 10, "big/core.py": 30_000,
        "big/db/__init__.py": 10, "big/db/models/__init__.py": 10, "big/db/models/base.py": 90_000,
        "big/db/backends/__init__.py": 10, "big/db/backends/x.py": 50_000,
        "big/db/utils.py": 5_000,
        "big/tiny/__init__.py": 10, "big/tiny/t.py": 500,
        "big/app/migrations/__init__.py": 1, "big/app/migrations/0001_initial.py": 30_000, "big/app/__init__.py": 1,
        "big/app/models.py": 1_000,
    })
    mods = {m.name: m for m in discover(files, split_bytes=100_000, split_min_bytes=20_000)}
    assert "big/db/models" in mods and "big/db/backends" in mods and "big" in mods
    assert "big/tiny" not in mods and "big/tiny/t.py" in mods["big"].files
    assert "big/app/migrations" not in mods  # migrations stay in their parent
    assert "big/db/utils.py" in mods["big/db"].files
    # every .py file belongs to exactly one module
    owned = [p for m in mods.values() for p in m.files]
    assert sorted(owned) == sorted(f.path for f in files if f.path.endswith(".py"))


def test_folder_of_modules_with_no_code_gives_each_subpackage_a_card():
    files = listing({"d/__init__.py": 10, "d/core.py": 50_000, "d/contrib/__init__.py": 0,
                     "d/contrib/admin/__init__.py": 10, "d/contrib/admin/a.py": 110_000,
                     "d/contrib/small/__init__.py": 10, "d/contrib/small/s.py": 2_000})
    mods = {m.name: m for m in discover(files, split_bytes=100_000, split_min_bytes=20_000)}
    assert "d/contrib" not in mods
    assert {"d/contrib/admin", "d/contrib/small"} <= set(mods)
    assert "d/contrib/__init__.py" in mods["d"].files


def test_node_workspaces_and_loose_python():
    files = listing({"package.json": 100, "packages/api/package.json": 100, "packages/api/src/index.ts": 500,
                     "packages/web/package.json": 90, "packages/web/src/app.tsx": 400, "scripts/tool.py": 300,
                     "node_modules/x/index.js": 1})
    mods = {m.name: m for m in discover(files)}
    assert mods["packages/api"].kind == "node" and "packages/api/src/index.ts" in mods["packages/api"].files
    assert "packages/api/package.json" in mods["packages/api"].files
    assert mods["scripts"].kind == "python"


def test_globs_override_discovery():
    files = listing({"services/a/main.py": 10, "services/b/main.go": 10, "lib/x/__init__.py": 10})
    mods = discover(files, ["services/*"])
    assert names(mods) == ["services/a", "services/b"]
    assert mods[1].kind == "go"  # read by the Go extractor since languages/ exists
    assert glob_to_regex("a/**/b").match("a/x/y/b") and not glob_to_regex("a/*").match("a/b/c")


def test_python_names():
    got = python_names(["src/pkg/__init__.py", "src/pkg/sub/__init__.py", "src/pkg/sub/m.py", "tool.py", "bad-name.py"])
    assert got == {"src/pkg/__init__.py": "pkg", "src/pkg/sub/__init__.py": "pkg.sub", "src/pkg/sub/m.py": "pkg.sub.m",
                   "tool.py": "tool"}


def test_scan_skips_hidden_vendored_and_test_folders(tmp_path):
    for rel in ("pkg/__init__.py", ".hidden/x.py", "node_modules/y/index.js", "tests/test_x.py", "pkg/tests/__init__.py",
                "data.bin"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x = 1\n")
    got = [f.path for f in scan(tmp_path)]
    assert got == ["data.bin", "pkg/__init__.py", "pkg/tests/__init__.py"]
    assert [f for f in scan(tmp_path) if f.path == "data.bin"][0].size == 0  # not stat'ed: never read


def test_large_ts_tree_without_package_json_is_split():
    files = listing({"src/index.ts": 5_000, "src/core/a.ts": 90_000, "src/ui/b.tsx": 80_000, "src/tiny/c.ts": 100})
    mods = {m.name: m for m in discover(files, split_bytes=100_000, split_min_bytes=20_000)}
    assert set(mods) == {"src", "src/core", "src/ui"} and mods["src/ui"].kind == "node"
    assert "src/tiny/c.ts" in mods["src"].files


def test_every_go_package_is_a_module_whatever_its_size():
    """A Go developer reads one card per package (one import path), so small packages do not fold into the root."""
    files = listing({"go.mod": 40, "zero.go": 300, "core/a/a.go": 120, "core/b/b.go": 90, "core/b/b_test.go": 500,
                     "core/onlytests/x_test.go": 200, "core/a/testdata/fixture.go": 50, "core/README.md": 0,
                     "tools/goctl/go.mod": 40, "tools/goctl/goctl.go": 80, "tools/goctl/api/gen.go": 70})
    mods = {m.name: m for m in discover(files)}
    assert set(mods) == {".", "core/a", "core/b", "tools/goctl", "tools/goctl/api"}
    assert all(m.kind == "go" for m in mods.values())
    assert "core/b/b_test.go" in mods["core/b"].files
    assert "core/onlytests/x_test.go" in mods["."].files  # a folder of tests only is no package to import
    assert "core/a/testdata/fixture.go" in mods["core/a"].files


def test_every_java_package_of_a_maven_module_is_a_module():
    base = "src/main/java/com/example"
    files = listing({"pom.xml": 300, f"{base}/App.java": 200, f"{base}/util/Strings.java": 90,
                     f"{base}/util/text/Words.java": 60, "src/test/java/com/example/AppTest.java": 80,
                     "lib/pom.xml": 200, "lib/src/main/java/org/lib/Lib.java": 100})
    mods = {m.name: m for m in discover(files)}
    assert set(mods) == {".", base, f"{base}/util", f"{base}/util/text", "lib", "lib/src/main/java/org/lib"}
    assert mods[f"{base}/util"].files == (f"{base}/util/Strings.java",)


def test_many_tiny_go_packages_stay_one_card_each_and_small():
    files = listing({"go.mod": 40, **{f"pkg/p{i:03d}/p.go": 60 for i in range(300)}})
    mods = discover(files)
    assert len(mods) == 301 and all(len(m.files) == 1 for m in mods if m.name != ".")
