"""Rust cards on a small Cargo workspace the test builds: a library crate and a binary crate."""

from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter_rust")

from card_helpers import card, write  # noqa: E402

from brain.cards.extract import extract_file  # noqa: E402
from brain.cards.languages.base import Symbol  # noqa: E402

LIB_RS = '''//! Shop core: items and prices.
use std::collections::HashMap;
use serde::Serialize;

pub mod money;
mod cache;

pub use money::Cents;

/// One thing for sale.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// Its id.
    pub id: String,
    price: u64,
}

impl Item {
    /// Makes an item.
    pub fn new(id: &str, price: u64) -> Self {
        Item { id: id.to_string(), price }
    }

    fn secret(&self) -> u64 {
        self.price
    }

    pub(crate) fn crate_only(&self) {}
}

/// What can go wrong.
pub enum Error {
    NotFound,
    Invalid(String),
}

/// Reads the catalog.
pub fn parse(text: &str) -> Result<HashMap<String, Item>, Error> {
    Ok(HashMap::new())
}

fn helper() {}

/// Items per page.
pub const PAGE: usize = 20;

#[macro_export]
macro_rules! item {
    ($id:expr) => { $crate::Item::new($id, 0) };
}
'''

MONEY_RS = '''/// Money in cents.
pub struct Cents(pub u64);

/// Something that has a price.
pub trait Priced {
    /// The price.
    fn price(&self) -> Cents;
}
'''

CACHE_RS = '''pub struct Cache;
pub fn warm() {}
'''

MAIN_RS = '''use axum::{routing::get, routing::post, Router};
use shop_core::{parse, Item};

async fn show_item() {}
async fn create_item() {}

#[tokio::main]
async fn main() {
    let app = Router::new()
        .route("/items/:id", get(show_item))
        .route("/items", post(create_item));
}
'''


@pytest.fixture
def workspace(brain):
    repo = brain.repo
    write(repo, "Cargo.toml", '[workspace]\nmembers = ["core", "cli"]\n\n[workspace.dependencies]\nserde = "1.0"\n')
    write(repo, "core/Cargo.toml", '[package]\nname = "shop-core"\nversion = "0.3.1"\n\n[dependencies]\n'
                                   'serde = { workspace = true }\n\n[dev-dependencies]\nproptest = "1"\n')
    write(repo, "core/src/lib.rs", LIB_RS)
    write(repo, "core/src/money.rs", MONEY_RS)
    write(repo, "core/src/cache.rs", CACHE_RS)
    write(repo, "core/tests/it.rs", "pub fn integration_only() {}\n")
    write(repo, "cli/Cargo.toml", '[package]\nname = "shop-cli"\nversion = "0.1.0"\n\n[dependencies]\n'
                                  'axum = "0.7"\nshop-core = { path = "../core" }\n\n[[bin]]\nname = "shopctl"\npath = "src/main.rs"\n')
    write(repo, "cli/src/main.rs", MAIN_RS)
    return brain


def test_cargo_workspace_cards(workspace):
    report = workspace.map()
    assert {".", "core", "cli"} <= set(report.modules)
    root = card(workspace, ".")
    assert "Cargo workspace in `./`." in root and "- members in `Cargo.toml`: `core`, `cli`" in root
    core = card(workspace, "core")
    assert "Rust crate `shop-core` 0.3.1 in `core/`." in core
    assert "### `src/lib.rs` (`crate`) — Shop core: items and prices." in core
    assert "- `struct Item` — One thing for sale." in core and "  - `id: String` — Its id." in core
    assert "  - `fn new(id: &str, price: u64) -> Self` — Makes an item." in core
    assert "- `fn parse(text: &str) -> Result<HashMap<String, Item>, Error>` — Reads the catalog." in core
    assert "- `enum Error` — What can go wrong." in core and "  - `Invalid(String)`" in core
    assert "- `const PAGE: usize` — Items per page." in core
    assert "- `macro_rules! item`" in core and "- `pub mod money`" in core and "- `pub use money::Cents`" in core
    assert "### `src/money.rs` (`crate::money`)" in core and "- `trait Priced` — Something that has a price." in core
    exposes = core.split("## Exposes")[1].split("## Dependencies")[0]
    for private in ("secret", "crate_only", "helper", "- `price: u64`", "Cache", "warm", "integration_only"):
        assert private not in exposes  # cache is a private module: its pub items are not the crate's API
    assert "- `serde` — declared (`serde (workspace)`)" in core
    assert "`proptest 1 (dev)`" in core
    cli = card(workspace, "cli")
    assert "## Entry points" in cli and "- `cargo run` (`src/main.rs`)" in cli
    assert "- `shopctl` → `src/main.rs` (cargo run --bin shopctl)" in cli
    assert "- `core` (1 file: `src/main.rs`; imports `shop_core::Item`, `shop_core::parse`)" in cli
    assert "- `axum` — declared (`axum 0.7`)" in cli
    assert "- `GET /items/:id` → `show_item` (src/main.rs)" in cli and "- `POST /items` → `create_item` (src/main.rs)" in cli


def test_rust_symbols_have_line_ranges():
    facts = extract_file("core/src/lib.rs", LIB_RS.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["Item"] == Symbol("Item", "struct", 12, 16, True, "struct Item")
    assert by["Item.new"] == Symbol("Item.new", "method", 20, 22, True, "fn new(id: &str, price: u64) -> Self")
    assert by["Item.secret"].exported is False and by["Item.crate_only"].exported is False
    assert by["parse"].kind == "function" and (by["parse"].start, by["parse"].end) == (38, 40)
    assert by["helper"] == Symbol("helper", "function", 42, 42, False, "fn helper()")
    assert by["item"].kind == "macro" and by["Error"].kind == "enum" and by["PAGE"].kind == "const"
