"""Ruby, PHP and C# cards on small projects the test builds (the languages after the first six)."""

from __future__ import annotations

import json

import pytest

from card_helpers import card, write

from brain.cards.extract import extract_file
from brain.cards.languages.base import Symbol


CART_RB = '''require "json"
require_relative "pricing"

module Shop
  # A customer's cart.
  class Cart < Base
    TAX = 0.2

    # Adds an item.
    def add(item, qty = 1)
    end

    # Builds an empty cart.
    def self.empty
    end

    private

    def recompute
    end
  end
end
'''

APP_RB = '''require "sinatra"

get "/carts/:id" do
end

post "/carts", to: "carts#create"
'''


def test_ruby_gem_card(brain):
    pytest.importorskip("tree_sitter_ruby")
    repo = brain.repo
    write(repo, "Gemfile", 'source "https://rubygems.org"\ngem "sinatra", "~> 4.0"\ngem "rake"\n')
    write(repo, "lib/shop/cart.rb", CART_RB)
    write(repo, "lib/shop/pricing.rb", "module Shop\n  # Prices things.\n  module Pricing\n    def self.of(item); end\n  end\nend\n")
    write(repo, "lib/app.rb", APP_RB)
    write(repo, "spec/cart_spec.rb", "describe Shop::Cart do\nend\n")
    brain.map()
    text = card(brain, ".")
    assert "Ruby project (Gemfile) in `./`." in text
    assert "- `class Shop::Cart < Base` — A customer's cart." in text
    assert "  - `def add(item, qty = 1)` — Adds an item." in text and "  - `def self.empty` — Builds an empty cart." in text
    assert "  - `TAX`" in text and "recompute" not in text.split("## Files")[0]
    assert "- `module Shop::Pricing` — Prices things." in text
    assert "- `GET /carts/:id` → `(block)` (lib/app.rb)" in text and "- `POST /carts` → `carts#create` (lib/app.rb)" in text
    assert "- `sinatra` — declared (`sinatra ~> 4.0`)" in text and "`json`" not in text.split("External packages:")[-1]
    facts = extract_file("lib/shop/cart.rb", CART_RB.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["Shop.Cart.add"] == Symbol("Shop.Cart.add", "method", 10, 11, True, "def add(item, qty = 1)")
    assert by["Shop.Cart.recompute"].exported is False and by["Shop.Cart"].kind == "class"


ORDER_PHP = '''<?php
namespace Acme\\Shop;

use Acme\\Shop\\Models\\Item;
use Psr\\Log\\LoggerInterface;

/** Places orders. */
final class OrderService
{
    public const LIMIT = 100;
    private array $cache = [];

    /** Places one order. */
    public function place(Item $item, int $qty = 1): Order
    {
        return new Order();
    }

    function legacy() {}

    private function audit(): void {}
}

/** Formats cents. */
function money(int $cents): string { return ""; }
'''


def test_php_composer_card(brain):
    pytest.importorskip("tree_sitter_php")
    repo = brain.repo
    write(repo, "composer.json", json.dumps({"name": "acme/shop", "require": {"php": ">=8.1", "psr/log": "^3.0"},
                                             "autoload": {"psr-4": {"Acme\\Shop\\": "src/"}}, "bin": ["bin/shop"]}))
    write(repo, "src/OrderService.php", ORDER_PHP)
    write(repo, "src/Models/Item.php", "<?php\nnamespace Acme\\Shop\\Models;\n\n/** An item. */\nclass Item {}\n" + "// pad\n" * 40)
    write(repo, "routes/web.php", "<?php\nRoute::get('/orders/{id}', [OrderController::class, 'show']);\n")
    brain.settings.values["cards.split_bytes"] = 300
    brain.settings.values["cards.split_min_bytes"] = 100
    report = brain.map()
    assert {".", "src/Models"} <= set(report.modules)
    text = card(brain, ".")
    assert "Composer package `acme/shop` in `./`." in text
    assert "- `final class OrderService` — Places orders." in text or "- `class OrderService` — Places orders." in text
    assert "  - `function place(Item $item, int $qty = 1): Order` — Places one order." in text
    assert "  - `function legacy()`" in text and "audit" not in text.split("## Files")[0] and "$cache" not in text
    assert "- `function money(int $cents): string` — Formats cents." in text
    assert "- `src/Models` (1 file: `src/OrderService.php`; imports `Acme\\Shop\\Models\\Item`)" in text
    assert "- `psr/log` — declared (`psr/log ^3.0`)" in text
    assert "- `shop` → `bin/shop` (composer bin)" in text
    assert "- `GET /orders/{id}` → `[OrderController::class, 'show']` (routes/web.php)" in text
    facts = extract_file("src/OrderService.php", ORDER_PHP.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["OrderService.place"] == Symbol("OrderService.place", "method", 14, 17, True,
                                              "function place(Item $item, int $qty = 1): Order")
    assert by["OrderService.audit"].exported is False


CONTROLLER_CS = '''using System;
using Shop.Models;

namespace Shop.Api;

/// <summary>Item endpoints.</summary>
[ApiController]
[Route("api/items")]
public class ItemsController : ControllerBase
{
    private readonly IRepo _repo;

    /// <summary>One item.</summary>
    [HttpGet("{id}")]
    public Item Get(int id) => _repo.Find(id);

    [HttpPost]
    public void Create(Item item) { }

    internal void Audit() { }
}
'''


def test_csharp_card(brain):
    pytest.importorskip("tree_sitter_c_sharp")
    repo = brain.repo
    write(repo, "Shop/Api/ItemsController.cs", CONTROLLER_CS)
    write(repo, "Shop/Models/Item.cs", "namespace Shop.Models;\n\n/// <summary>An item.</summary>\npublic record Item(int Id, string Name);\n"
                                       "public interface IRepo { Item Find(int id); }\n" + "// pad\n" * 40)
    write(repo, "Shop/Program.cs", "public static class Program { public static void Main(string[] args) { } }\n")
    brain.settings.values["cards.split_bytes"] = 300
    brain.settings.values["cards.split_min_bytes"] = 100
    report = brain.map()
    assert {"Shop", "Shop/Api", "Shop/Models"} <= set(report.modules)
    api = card(brain, "Shop/Api")
    assert "C# module in `Shop/Api/`" in api
    assert "- `class ItemsController : ControllerBase` — Item endpoints." in api
    assert "  - `Item Get(int id)` — One item." in api and "  - `void Create(Item item)`" in api
    assert "Audit" not in api.split("## Files")[0] and "_repo" not in api.split("## Files")[0]
    assert "- `GET /api/items/{id}` → `ItemsController.Get` (ItemsController.cs)" in api
    assert "- `POST /api/items` → `ItemsController.Create` (ItemsController.cs)" in api
    assert "- `Shop/Models` (1 file: `ItemsController.cs`; imports `Shop.Models`)" in api
    assert "- `dotnet run` (`Program.cs`)" in card(brain, "Shop")
    facts = extract_file("Shop/Api/ItemsController.cs", CONTROLLER_CS.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["ItemsController.Get"] == Symbol("ItemsController.Get", "method", 14, 15, True, "Item Get(int id)")
    assert by["ItemsController.Audit"].exported is False and facts["unit"] == "Shop.Api"


SERVICE_SCALA = '''package shop.api

import shop.model.Item
import cats.effect.IO

/** Finds items. */
class ItemService(repo: Repo) {
  /** One item by id. */
  def find(id: Long): Option[Item] = repo.get(id)

  private def audit(): Unit = ()
}

trait Repo {
  def get(id: Long): Option[Item]
}

object Main {
  def main(args: Array[String]): Unit = ()
}
'''


def test_scala_sbt_card(brain):
    pytest.importorskip("tree_sitter_scala")
    repo = brain.repo
    write(repo, "build.sbt", 'name := "shop"\nlibraryDependencies += "org.typelevel" %% "cats-effect" % "3.5.4"\n')
    write(repo, "src/main/scala/shop/api/ItemService.scala", SERVICE_SCALA)
    write(repo, "src/main/scala/shop/model/Item.scala", "package shop.model\n\n/** An item. */\ncase class Item(id: Long)\n")
    write(repo, "src/test/scala/shop/ItemServiceSpec.scala", "class ItemServiceSpec\n")
    brain.map()
    text = card(brain, ".")
    assert "sbt project `shop` in `./`." in text
    assert "- `class ItemService(repo: Repo)` — Finds items." in text
    assert "  - `def find(id: Long): Option[Item]` — One item by id." in text and "audit" not in text.split("## Files")[0]
    assert "- `trait Repo`" in text and "- `case class Item(id: Long)` — An item." in text
    assert "- `sbt \"runMain shop.api.Main\"` (`src/main/scala/shop/api/ItemService.scala`)" in text
    assert "- `org.typelevel:cats-effect` — declared (`org.typelevel:cats-effect 3.5.4`)" in text
    assert "ItemServiceSpec" not in text
    facts = extract_file("src/main/scala/shop/api/ItemService.scala", SERVICE_SCALA.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["ItemService.find"] == Symbol("ItemService.find", "method", 9, 9, True, "def find(id: Long): Option[Item]")
    assert by["ItemService.audit"].exported is False and by["ItemService"].start == 7 and by["ItemService"].end == 12


CART_SWIFT = '''import Foundation

/// A shopping cart.
public struct Cart {
    /// The items in it.
    public private(set) var items: [String] = []
    var cache = 0

    /// Adds an item.
    public mutating func add(_ item: String) {
        items.append(item)
    }

    func recount() {}
}

/// Totals a cart.
public func total(_ cart: Cart) -> Int { cart.items.count }

func helper() {}
'''


def test_swift_package_card(brain):
    pytest.importorskip("tree_sitter_swift")
    repo = brain.repo
    write(repo, "Package.swift", '// swift-tools-version:5.9\nimport PackageDescription\nlet package = Package(name: "Shop",\n'
                                 '  dependencies: [.package(url: "https://github.com/vapor/vapor.git", from: "4.0.0")])\n')
    write(repo, "Sources/Shop/Cart.swift", CART_SWIFT)
    write(repo, "Sources/App/main.swift", 'import Vapor\nimport Shop\nlet app = Application()\napp.get("carts", ":id") { req in "" }\n')
    brain.map()
    text = card(brain, ".")
    assert "Swift package `Shop` in `./`." in text
    assert "- `public struct Cart` — A shopping cart." in text
    assert "  - `public mutating func add(_ item: String)` — Adds an item." in text
    assert "recount" not in text.split("## Files")[0] and "helper" not in text.split("## Files")[0]
    assert "- `public func total(_ cart: Cart) -> Int` — Totals a cart." in text
    assert "- `swift run` (`Sources/App/main.swift`)" in text
    assert "- `GET /carts/:id` → `(closure)` (Sources/App/main.swift)" in text
    assert "- `vapor` — declared (`vapor (from: \"4.0.0\")`)" in text
    facts = extract_file("Sources/Shop/Cart.swift", CART_SWIFT.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["Cart"].kind == "struct" and (by["Cart"].start, by["Cart"].end) == (4, 15)
    assert by["Cart.add"].start == 10 and by["Cart.add"].end == 12 and by["Cart.recount"].exported is False
