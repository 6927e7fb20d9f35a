"""Rust `use` trees as import edges (so a top-ranked Rust file lends its neighbours a share, as in the
other languages); a module file (`mod.rs`, `lib.rs`) and the files below it are not linked."""

from __future__ import annotations

import time

from brain.search.definitions import rust_use_paths, scan_definitions
from card_helpers import commit_files


def test_use_trees_expand_to_one_path_each():
    assert rust_use_paths("crate::io::{self, AsyncRead, util::{a, b as c}, *};") == [
        "crate::io", "crate::io::AsyncRead", "crate::io::util::a", "crate::io::util::b"]
    assert rust_use_paths("crate::runtime::{blocking, driver::{self, Driver},};") == [
        "crate::runtime::blocking", "crate::runtime::driver", "crate::runtime::driver::Driver"]
    assert rust_use_paths("::std::fmt;") == ["std::fmt"]
    assert rust_use_paths("$crate::io::Read;") == ["crate::io::Read"]
    assert rust_use_paths("a::{{{{") == [] and rust_use_paths("}}}a,,b") == []


def test_use_statements_over_several_lines_are_imports():
    text = ("use crate::future::poll_fn;\npub(crate) use crate::runtime::{\n    blocking,\n    // a comment\n"
            "    driver::{self, Driver},\n};\nmod split;\npub use split::ReadHalf;\n"
            "impl Thing {\n    fn f(&self) {}\n}\n"
            "#[cfg(test)]\nmod tests {\n    use super::*;\n}\n")
    scan = scan_definitions(text, "rust")
    assert scan.imports == ["crate::future::poll_fn", "crate::runtime::blocking", "crate::runtime::driver",
                            "crate::runtime::driver::Driver", "split::ReadHalf"]
    assert ("f", "method", "Thing.f", 10) in scan.symbols  # the `};` closing the use did not close `impl` early


def test_an_unfinished_use_statement_comes_back_at_once():
    text = "use crate::{\n" + "    a::b,\n" * 50_000
    started = time.perf_counter()
    scan_definitions(text, "rust")
    assert time.perf_counter() - started < 5.0


_CRATE = {
    "Cargo.toml": "[workspace]\nmembers = [\"netlib\", \"netlib-util\"]\n",
    "netlib/src/lib.rs": "pub mod net;\nmod util;\npub use net::Stream;\n",
    "netlib/src/util.rs": "pub(crate) fn checked_len(n: usize) -> usize {\n    n\n}\n",
    "netlib/src/net/mod.rs": "mod stream;\npub use stream::Stream;\nmod listener;\npub use listener::Listener;\n",
    "netlib/src/net/stream.rs": "use crate::util::checked_len;\nuse super::listener::Listener;\n\n"
                                "pub struct Stream {\n    fd: i32,\n}\n\nimpl Stream {\n"
                                "    pub fn connect(path: &str) -> Stream {\n        Stream { fd: 0 }\n    }\n"
                                "    pub fn peer_addr(&self) -> i32 {\n        self.fd\n    }\n}\n",
    "netlib/src/net/listener.rs": "use crate::net::Stream;\n\npub struct Listener {\n    fd: i32,\n}\n\n"
                                  "impl Listener {\n    pub fn accept(&self) -> Stream {\n        todo!()\n    }\n}\n",
    "netlib-util/src/lib.rs": "use netlib::net::Stream;\n\npub fn wrap(s: Stream) -> Stream {\n    s\n}\n",
    "netlib/src/other.rs": "use std::io::Read;\nuse external_crate::Thing;\n",
    "netlib/src/sys/bind.rs": "pub fn bind(path: &str) -> i32 {\n    0\n}\n",
    "netlib/src/sys/create.rs": "/// create a socket to bind\npub fn create() -> i32 {\n    0\n}\n",
}


def test_rust_use_paths_resolve_to_the_files_they_name(brain):
    commit_files(brain, _CRATE)
    brain.reindex()
    view = brain.index.code_view()
    assert view.resolve_import("netlib/src/net/stream.rs", "crate::util::checked_len") == ["netlib/src/util.rs"]
    assert view.resolve_import("netlib/src/net/stream.rs", "super::listener::Listener") == ["netlib/src/net/listener.rs"]
    # a re-exported item is followed to the file under the module defining it
    assert view.resolve_import("netlib/src/net/listener.rs", "crate::net::Stream") == ["netlib/src/net/stream.rs"]
    # a module file and the files below it (what it declares and re-exports) are not linked either way
    assert view.resolve_import("netlib/src/lib.rs", "net::Stream") == []
    assert view.resolve_import("netlib/src/net/mod.rs", "self::stream::Stream") == []
    assert view.resolve_import("netlib/src/net/stream.rs", "crate::Stream") == []
    assert view.resolve_import("netlib/src/lib.rs", "crate::util::checked_len") == []
    # another crate of the workspace by its folder's name; outside crates resolve to nothing
    assert view.resolve_import("netlib-util/src/lib.rs", "netlib::net::Stream") == ["netlib/src/net/stream.rs"]
    assert view.resolve_import("netlib/src/other.rs", "std::io::Read") == []
    assert view.resolve_import("netlib/src/other.rs", "external_crate::Thing") == []
    # a 2015-edition path starts at the crate root; `$crate` in a macro is this crate
    assert view.resolve_import("netlib/src/net/listener.rs", "util::checked_len") == ["netlib/src/util.rs"]
    assert view.resolve_import("netlib/src/net/listener.rs", "$crate::util::checked_len") == ["netlib/src/util.rs"]
    forward, backward = view.import_graph()
    assert "netlib/src/net/stream.rs" in forward["netlib/src/net/listener.rs"]
    assert "netlib-util/src/lib.rs" in backward["netlib/src/net/stream.rs"]


def test_a_top_ranked_rust_file_lends_a_share_to_the_files_it_uses(brain):
    commit_files(brain, _CRATE)
    hits = brain.locate("Expose a `bind` method on `Stream`: `Stream::connect` is the only way to create one").files
    reasons = {h.path: h.reasons for h in hits}
    assert hits[0].path == "netlib/src/net/stream.rs"
    assert any("imports or is imported by `netlib/src/net/stream.rs`" in r for r in reasons["netlib/src/util.rs"])
    assert not any("imports or is imported by" in r for r in reasons.get("netlib/src/other.rs", []))


def test_read_next_follows_rust_imports(brain):
    from brain.search.rank_functions import imported_files

    commit_files(brain, _CRATE)
    brain.reindex()
    view = brain.index.code_view()
    assert imported_files(view, ["netlib/src/net/stream.rs"], hops=1) == ["netlib/src/util.rs",
                                                                          "netlib/src/net/listener.rs"]


def test_a_module_file_declares_the_files_below_its_folder():
    from brain.search.codeview import _rust_declares

    assert _rust_declares("src/net/mod.rs", "src/net/unix/stream.rs")
    assert _rust_declares("src/lib.rs", "src/util.rs")
    assert _rust_declares("src/net.rs", "src/net/tcp.rs")  # the 2018 layout: `net.rs` beside `net/`
    assert not _rust_declares("src/net/mod.rs", "src/io/mod.rs")
    assert not _rust_declares("src/net/stream.rs", "src/net/listener.rs")  # siblings use each other
    assert not _rust_declares("src/net/mod.rs", "src/network/x.rs")
    assert not _rust_declares("lib/index.js", "lib/x.js")
