"""Go cards on a small module the test builds: two packages and a main, checked field by field."""

from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter_go")

from card_helpers import card, write  # noqa: E402

from brain.cards.extract import extract_file  # noqa: E402
from brain.cards.languages.base import Symbol  # noqa: E402

SERVER_GO = '''// Package api serves the shop over HTTP.
package api

import (
	"net/http"

	"example.com/shop/store"
	"github.com/gin-gonic/gin"
)

// Server answers shop requests.
type Server struct {
	// Addr is where it listens.
	Addr  string
	store *store.Store
}

// NewServer makes a Server on addr.
func NewServer(addr string, s *store.Store) *Server {
	return &Server{Addr: addr, store: s}
}

// Start listens and serves.
func (s *Server) Start() error {
	http.HandleFunc("/health", health)
	r := gin.Default()
	r.GET("/items/:id", s.getItem)
	http.HandleFunc("POST /orders", placeOrder)
	return nil
}

func (s *Server) getItem(c *gin.Context) {}

func health(w http.ResponseWriter, r *http.Request) {}

func placeOrder(w http.ResponseWriter, r *http.Request) {}

// MaxItems bounds a page.
const MaxItems = 50

var defaultAddr = ":8080"
'''

STORE_GO = '''package store

import "sync"

// Store keeps items in memory.
type Store struct {
	mu    sync.Mutex
	items map[string]Item
}

// Item is one thing for sale.
type Item struct {
	ID    string
	Price int
}

// Getter reads items.
type Getter interface {
	// Get returns one item.
	Get(id string) (Item, bool)
	reset()
}

// Get returns the item with id.
func (s *Store) Get(id string) (Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[id]
	return it, ok
}

func newID() string { return "" }
'''

MAIN_GO = '''package main

import (
	"log"

	"example.com/shop/api"
	"example.com/shop/store"
)

func main() {
	s := api.NewServer(":8080", &store.Store{})
	log.Fatal(s.Start())
}
'''

GO_MOD = '''module example.com/shop

go 1.22

require (
	github.com/gin-gonic/gin v1.9.1
	golang.org/x/sync v0.5.0 // indirect
)
'''


@pytest.fixture
def shop(brain):
    repo = brain.repo
    write(repo, "go.mod", GO_MOD)
    write(repo, "api/server.go", SERVER_GO)
    write(repo, "api/server_test.go", 'package api\n\nimport "testing"\n\nfunc TestX(t *testing.T) {}\n'
                                      'func Exported() {}\nfunc init() { http.HandleFunc("/test-only", nil) }\n')
    write(repo, "store/store.go", STORE_GO)
    write(repo, "cmd/shopd/main.go", MAIN_GO)
    brain.settings.values["cards.split_bytes"] = 800
    brain.settings.values["cards.split_min_bytes"] = 150
    return brain


def test_go_packages_cards(shop):
    report = shop.map()
    assert {"api", "store", "cmd/shopd"} <= set(report.modules) and "." in report.modules
    api = card(shop, "api")
    assert "Go package `example.com/shop/api` of Go module `example.com/shop` (go 1.22), in `api/`." in api
    assert "### `./` (package api) — Package api serves the shop over HTTP." in api
    assert "- `type Server struct` — Server answers shop requests." in api
    assert "  - `Addr string` — Addr is where it listens." in api
    assert "  - `Start() error` — Start listens and serves." in api
    assert "- `func NewServer(addr string, s *store.Store) *Server` — NewServer makes a Server on addr." in api
    assert "- `const MaxItems` — MaxItems bounds a page." in api
    exposes = api.split("## Exposes")[1].split("## ")[0]
    for private in ("getItem", "health", "placeOrder", "defaultAddr", "store *store.Store", "TestX", "Exported"):
        assert private not in exposes
    assert "- `store` (1 file: `server.go`; imports `example.com/shop/store`)" in api
    assert "- `github.com/gin-gonic/gin` — declared (`github.com/gin-gonic/gin v1.9.1`)" in api
    assert "net/http" not in api.split("## Dependencies")[1].split("## Routes")[0]
    assert "- `ANY /health` → `health` (server.go)" in api
    assert "- `GET /items/:id` → `s.getItem` (server.go)" in api
    assert "- `POST /orders` → `placeOrder` (server.go)" in api
    assert "/test-only" not in api
    store = card(shop, "store")
    assert "  - `Get(id string) (Item, bool)` — Get returns the item with id." in store
    assert "- `type Getter interface` — Getter reads items." in store and "  - `Get(id string) (Item, bool)` — Get returns one item." in store
    assert "reset" not in store.split("## Dependencies")[0] and "newID" not in store and "items map" not in store
    assert "  - `ID string`" in store and "  - `Price int`" in store
    main = card(shop, "cmd/shopd")
    assert "## Entry points\n\n- `go run ./cmd/shopd` (`main.go`)" in main
    assert "- `api` (1 file: `main.go`; imports `example.com/shop/api`)" in main and "- `store` (1 file: `main.go`; imports `example.com/shop/store`)" in main
    root = card(shop, ".")
    assert "Go module `example.com/shop` (go 1.22) in `./`." in root
    assert "`github.com/gin-gonic/gin v1.9.1`" in root and "`golang.org/x/sync v0.5.0 (indirect)`" in root


def test_go_symbols_have_line_ranges():
    facts = extract_file("api/server.go", SERVER_GO.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["Server"] == Symbol("Server", "struct", 12, 16, True, "type Server struct")
    assert by["NewServer"] == Symbol("NewServer", "function", 19, 21, True, "func NewServer(addr string, s *store.Store) *Server")
    assert by["Server.Start"].kind == "method" and (by["Server.Start"].start, by["Server.Start"].end) == (24, 30)
    assert by["Server.getItem"].exported is False and by["health"].exported is False
    assert by["MaxItems"].kind == "const" and by["MaxItems"].start == 39
    assert by["defaultAddr"] == Symbol("defaultAddr", "var", 41, 41, False, "var defaultAddr")


def test_go_card_goes_stale_and_follows_go_mod(shop):
    shop.map()
    assert shop.map(check=True).ok
    path = shop.repo / "store/store.go"
    path.write_text(path.read_text() + "\n// Put stores an item.\nfunc (s *Store) Put(it Item) {}\n")
    check = shop.map(check=True)
    assert check.stale == ["store"]
    shop.map()
    assert "  - `Put(it Item)` — Put stores an item." in card(shop, "store")
    write(shop.repo, "go.mod", GO_MOD.replace("v1.9.1", "v1.10.0"))
    check = shop.map(check=True)
    assert {"api", "."} <= set(check.stale)  # the module's go.mod is part of every package card's source
    shop.map()
    assert "`github.com/gin-gonic/gin v1.10.0`" in card(shop, "api")


def test_go_contract_divergence(shop):
    write(shop.dir, "contracts/api.yml", 'exposes: [NewServer, Server, Server.Start, Shutdown]\nroutes: ["ANY /health", "GET /metrics"]\n')
    shop.map()
    api = card(shop, "api")
    contract = api.split("## Contract")[1].split("## Files")[0]
    assert "**declared but missing in code**: `Shutdown`" in contract
    assert "**declared routes missing in code**: `GET /metrics`" in contract
    assert "**in code but undeclared**: `MaxItems`" in contract and "`NewServer`" not in contract.split("undeclared")[1]
    assert "**routes in code but undeclared**: `GET /items/:id`, `POST /orders`" in contract


def test_nested_go_module_runs_from_its_own_folder(brain):
    """A nested go.mod is a module of its own: its commands start in its folder, not at the repository root."""
    write(brain.repo, "go.mod", GO_MOD)
    write(brain.repo, "store/store.go", STORE_GO)
    write(brain.repo, "tools/goctl/go.mod", "module example.com/shop/tools/goctl\n\ngo 1.22\n")
    write(brain.repo, "tools/goctl/goctl.go", "package main\n\nfunc main() {}\n")
    write(brain.repo, "tools/goctl/cmd/gen/main.go", "package main\n\nfunc main() {}\n")
    write(brain.repo, "cmd/shopd/main.go", MAIN_GO)
    report = brain.map()
    assert {".", "store", "cmd/shopd", "tools/goctl", "tools/goctl/cmd/gen"} <= set(report.modules)
    assert "## Entry points\n\n- `cd tools/goctl && go run .` (`goctl.go`)" in card(brain, "tools/goctl")
    assert "- `cd tools/goctl && go run ./cmd/gen` (`main.go`)" in card(brain, "tools/goctl/cmd/gen")
    assert "- `go run ./cmd/shopd` (`main.go`)" in card(brain, "cmd/shopd")
    assert "Go module `example.com/shop/tools/goctl` (go 1.22)" in card(brain, "tools/goctl")
    assert "- 2 packages with their own card: `cmd/shopd`, `store`\n" in card(brain, ".")  # not the nested module's
    assert "- 1 package with its own card: `cmd/gen`\n" in card(brain, "tools/goctl")


def test_go_package_named_doc_is_a_module(brain):
    """A Go package in `doc/` (a generator of documentation, as in cobra) is code like any other package,
    while a `docs/` folder of prose and its test-only Go files stay out of the layout."""
    write(brain.repo, "go.mod", GO_MOD)
    write(brain.repo, "store/store.go", STORE_GO)
    write(brain.repo, "doc/md_docs.go", "package doc\n\n// GenMarkdown writes the markdown docs.\nfunc GenMarkdown() error { return nil }\n")
    write(brain.repo, "docs/guide.md", "# Guide\n")
    write(brain.repo, "docs/example_test.go", "package docs\n\nfunc TestX() {}\n")
    report = brain.map()
    assert "doc" in report.modules and "docs" not in report.modules
    assert "- `func GenMarkdown() error` — GenMarkdown writes the markdown docs." in card(brain, "doc")


def test_task_boot_cuts_a_go_card_to_the_ranked_package(shop):
    """A Go card groups entries by package folder (`./`), not by file: the task boot's cut keeps that block."""
    shop.map()
    shop.reindex()
    text = shop.boot("NewServer in api/server.go ignores the store when Start is called", budget=8000, record=False).text
    assert "cut to the ranked files' entries" in text
    cut = text.split("cut to the ranked files' entries", 1)[1].split("\n## ", 1)[0]
    assert "#### `./` (package api)" in cut and "`func NewServer(addr string, s *store.Store) *Server`" in cut


def test_a_go_task_boot_shows_the_ranked_functions_and_their_code(shop):
    """The function index reads Go (and every card language) through the card extractor's symbols: a task
    boot lists the functions and shows the best one's code with its line numbers."""
    shop.reindex()
    result = shop.boot("Server.Start registers /health twice when Start is called again", budget=8000, record=False)
    data = result.to_dict()
    assert data["functions"] and data["functions"][0]["id"] == "api/server.go::Server.Start", data["functions"][:3]
    assert "## `api/server.go::Server.Start` (lines 24-30, whole)" in result.text
    assert "24 func (s *Server) Start() error {" in result.text
