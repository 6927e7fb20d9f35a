"""The extractor interface itself: the registry, robustness on any bytes, a missing grammar, the human section."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.cards import discovery
from brain.cards.extract import extract_file
from brain.cards.languages import _treesitter
from brain.cards.languages.base import SYMBOL_KINDS, LANGUAGE_MODULES, Symbol, language_for, languages

GRAMMARS = ["tree_sitter_go", "tree_sitter_rust", "tree_sitter_java", "tree_sitter_kotlin", "tree_sitter_javascript",
            "tree_sitter_c", "tree_sitter_cpp", "tree_sitter_typescript"]


def test_registry_matches_discovery_and_every_language_is_data():
    langs = {lang.name: lang for lang in languages()}
    assert set(langs) == set(LANGUAGE_MODULES)
    for ext, name in discovery.LANG_EXT.items():
        owner = language_for("x" + ext)
        # discovery's table names the family; .h is claimed by C and re-routed to C++ by content
        assert owner is not None and owner.name == name, ext
    for lang in langs.values():
        assert lang.label and all(e.startswith(".") and e == e.lower() for e in lang.extensions)
        assert lang.extra == "" or lang.grammar, lang.name
    for manifest, name in discovery.MANIFESTS.items():
        assert manifest in langs[name].manifests
    assert langs["go"].is_test("api/server_test.go") and not langs["go"].is_test("api/server.go")
    assert langs["java"].is_test("src/test/java/a/BTest.java") and not langs["java"].is_test("src/main/java/a/B.java")


SAMPLES = ["x.go", "x.rs", "X.java", "x.kt", "x.js", "x.mjs", "x.cjs", "x.jsx", "x.ts", "x.c", "x.h", "x.cpp", "x.hpp",
           "go.mod", "go.work", "Cargo.toml", "pom.xml", "build.gradle", "build.gradle.kts", "CMakeLists.txt",
           "vcpkg.json", "conanfile.txt", "src/main.rs", "include/a/b.h", "cmd/x/main.go", "x.cs", "x.rb", "x.php",
           "Gemfile", "composer.json", "x.scala", "x.swift", "build.sbt", "Package.swift"]
CODE_BITS = ["package main\n", "func main() {", "pub fn f(", "impl X {", "public class A {", "#include <a.h>\n",
             "#ifdef X\n", "namespace n {", "template <typename T>", "module.exports = ", "export default ", "}", "<?php ",
             "class A\n", "def f\n", "end\n", "private\n", "public class C {",
             "{", "(", "\"", "'", "/**", "*/", "///", "//", "\n", "\x00", "é", "[workspace]\n", "<project>", "require (\n"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(SAMPLES),
       raw=st.one_of(st.binary(max_size=400),
                     st.lists(st.sampled_from(CODE_BITS) | st.text(max_size=12), max_size=30).map(
                         lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))))
def test_no_extractor_crashes_on_arbitrary_input(path, raw):
    facts = extract_file(path, raw, dotted=None, max_bytes=10**6)
    assert facts["status"] in ("ok", "unread")
    if facts["status"] == "unread":
        assert isinstance(facts["reason"], str) and facts["reason"]
    for symbol in facts.get("symbols") or []:
        assert isinstance(symbol, Symbol) and symbol.kind in SYMBOL_KINDS
        assert 1 <= symbol.start <= symbol.end
    for entry in facts.get("exports") or []:
        assert isinstance(entry["name"], str) and isinstance(entry["sig"], str)


def test_a_missing_grammar_is_a_file_not_read_naming_the_extra(brain, monkeypatch):
    monkeypatch.setitem(sys.modules, "tree_sitter_go", None)  # what `import tree_sitter_go` meets when it is not installed
    monkeypatch.setattr(_treesitter, "_LANGS", {})
    monkeypatch.setattr(_treesitter, "_PARSERS", {})
    facts = extract_file("api/a.go", b"package api\n\nfunc A() {}\n", dotted=None, max_bytes=10**6)
    assert facts == {"status": "unread", "reason": "Go grammar not installed (pip install 'agent-brain[go]')"}
    (brain.repo / "api").mkdir()
    (brain.repo / "api/a.go").write_text("package api\n\nfunc A() {}\n")
    brain.settings.values["cards.workers"] = 1
    report = brain.map()
    text = (brain.dir / "modules/api.md").read_text()
    assert "not read: `a.go` (Go grammar not installed (pip install 'agent-brain[go]'))" in text
    assert report.unread == {"api": [["api/a.go", "Go grammar not installed (pip install 'agent-brain[go]')"]]}


def test_how_to_use_survives_regeneration_of_a_go_card(brain):
    pytest.importorskip("tree_sitter_go")
    (brain.repo / "go.mod").write_text("module example.com/m\n\ngo 1.22\n")
    (brain.repo / "m.go").write_text("package m\n\n// Hello greets.\nfunc Hello() string { return \"hi\" }\n")
    brain.map()
    brain.report_done(".", how_to_use="Call Hello.\n")
    (brain.repo / "m.go").write_text("package m\n\n// Hello greets.\nfunc Hello() string { return \"hi\" }\n\n"
                                     "// Bye leaves.\nfunc Bye() {}\n")
    assert brain.map(check=True).stale == ["."]
    brain.map()
    text = (brain.dir / "modules/_root.md").read_text()
    assert text.endswith("## How to use\n\nCall Hello.\n")
    assert "- `func Bye()` — Bye leaves." in text and "- `func Hello() string` — Hello greets." in text


def test_extras_are_declared_for_every_grammar():
    import tomllib
    from pathlib import Path

    data = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    extras = data["project"]["optional-dependencies"]
    for lang in languages():
        if lang.extra:
            wheel = lang.grammar.replace("_", "-")
            assert any(req.startswith(wheel) for req in extras[lang.extra]), lang.name
            assert lang.extra in extras["languages"][0]
    assert "languages" in extras["all"][0] and "agent-brain[all]" in extras["dev"]
    assert not any("language-pack" in req for reqs in extras.values() for req in reqs)


def test_pre_commit_hook_stages_the_card_of_a_rust_crate(brain):
    pytest.importorskip("tree_sitter_rust")
    import os
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}

    def git(*args):
        return subprocess.run(["git", *args], cwd=brain.repo, capture_output=True, text=True, env=env)

    for crate in ("pay", "ship"):
        (brain.repo / crate / "src").mkdir(parents=True)
        (brain.repo / crate / "Cargo.toml").write_text(f'[package]\nname = "{crate}"\nversion = "0.1.0"\n')
        (brain.repo / crate / "src/lib.rs").write_text("/// Does it.\npub fn run() {}\n")
    brain.map()
    git("add", "-A")
    git("commit", "-q", "-m", "crates and cards")
    hook = subprocess.run([sys.executable, "-m", "brain", "install", "git-hook"], cwd=brain.repo, capture_output=True,
                          text=True, env=env)
    assert hook.returncode == 0, hook.stderr
    (brain.repo / "pay/src/lib.rs").write_text("/// Does it.\npub fn run() {}\n\n/// Pays.\npub fn pay(cents: u64) -> bool { true }\n")
    (brain.repo / "ship/src/lib.rs").write_text("pub fn run(fast: bool) {}\n")  # changed, not staged
    git("add", "pay/src/lib.rs")
    commit = git("commit", "-q", "-m", "pay")
    assert commit.returncode == 0, commit.stderr
    files = git("show", "--name-only", "--format=", "HEAD").stdout.split()
    assert sorted(files) == [".brain/modules/pay.md", "pay/src/lib.rs"]
    assert "- `fn pay(cents: u64) -> bool` — Pays." in git("show", "HEAD:.brain/modules/pay.md").stdout
    assert brain.map(check=True).stale == ["ship"]


def test_python_and_typescript_files_return_symbols_too():
    py = b'"""Doc."""\nLIMIT = 3\n\n\nclass Cart:\n    def add(self, item):\n        return item\n\n    def _hidden(self):\n        pass\n\n\nasync def fetch(url: str) -> bytes:\n    return b""\n'
    facts = extract_file("shop/cart.py", py, dotted="shop.cart", max_bytes=10**6)
    assert facts["symbols"] == [
        Symbol("LIMIT", "const", 2, 2, True, "LIMIT"),
        Symbol("Cart", "class", 5, 10, True, "class Cart"),
        Symbol("Cart.add", "method", 6, 7, True, "def add(self, item)"),
        Symbol("Cart._hidden", "method", 9, 10, False, "def _hidden(self)"),
        Symbol("fetch", "function", 13, 14, True, "async def fetch(url: str) -> bytes"),
    ]
    pytest.importorskip("tree_sitter_typescript")
    ts_src = b"export interface Item { id: string }\nfunction local(): void {}\nexport class Cart {\n  add(i: Item): void {}\n  private drop(): void {}\n}\n"
    facts = extract_file("src/cart.ts", ts_src, dotted=None, max_bytes=10**6)
    assert facts["symbols"] == [
        Symbol("Item", "interface", 1, 1, True, "interface Item"),
        Symbol("local", "function", 2, 2, False, "function local(): void"),
        Symbol("Cart", "class", 3, 6, True, "class Cart"),
        Symbol("Cart.add", "method", 4, 4, True, "add(i: Item): void"),
        Symbol("Cart.drop", "method", 5, 5, False, "private drop(): void"),
    ]


def test_grammars_are_imported_only_for_languages_the_repository_has(brain):
    import subprocess

    (brain.repo / "svc").mkdir()
    (brain.repo / "svc/main.go").write_text("package main\n\nfunc main() {}\n")
    (brain.repo / "lib").mkdir()
    (brain.repo / "lib/__init__.py").write_text("def f():\n    return 1\n")
    code = ("import sys, brain; b = brain.open(sys.argv[1]); b.settings.values['cards.workers'] = 1; b.map(); "
            "print(sorted(m for m in sys.modules if m.startswith('tree_sitter_') and '.' not in m))")
    out = subprocess.run([sys.executable, "-c", code, str(brain.repo)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['tree_sitter_go']"
