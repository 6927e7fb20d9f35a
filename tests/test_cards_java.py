"""Java (and Kotlin) cards on a small Maven module the test builds: packages, Spring routes, a main class."""

from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter_java")

from card_helpers import card, write  # noqa: E402

from brain.cards.extract import extract_file  # noqa: E402
from brain.cards.languages.base import Symbol  # noqa: E402

POM = '''<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>shop</artifactId>
  <version>1.4.0</version>
  <dependencies>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-web</artifactId>
      <version>3.2.0</version>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build><plugins><plugin><configuration><mainClass>com.example.shop.App</mainClass></configuration></plugin></plugins></build>
</project>
'''

CONTROLLER = '''package com.example.shop.api;

import com.example.shop.model.Item;
import java.util.List;
import org.springframework.web.bind.annotation.*;

/**
 * HTTP endpoints for items.
 */
@RestController
@RequestMapping("/items")
public class ItemController {
    private final List<Item> items = null;

    /** Lists every item. */
    @GetMapping
    public List<Item> list() { return items; }

    /** One item by id. */
    @GetMapping("/{id}")
    public Item get(@PathVariable String id) { return null; }

    @PostMapping(value = "/new")
    public Item create(@RequestBody Item item) { return item; }

    private void audit() {}

    void packagePrivate() {}
}
'''

ITEM = '''package com.example.shop.model;

/** One thing for sale. */
public record Item(String id, long price) {
    /** Cents to display. */
    public String display() { return ""; }
}
'''

KIND = '''package com.example.shop.model;

/** Kinds of items. */
public enum Kind {
    BOOK, FOOD;

    public boolean taxed() { return this == FOOD; }
}

class Hidden {
    public void notApi() {}
}
'''

APP = '''package com.example.shop;

/** Starts the shop. */
public class App {
    public static void main(String[] args) {
        System.out.println("up");
    }
}
'''


@pytest.fixture
def maven(brain):
    repo = brain.repo
    base = "src/main/java/com/example/shop"
    write(repo, "pom.xml", POM)
    write(repo, f"{base}/App.java", APP)
    write(repo, f"{base}/api/ItemController.java", CONTROLLER)
    write(repo, f"{base}/model/Item.java", ITEM)
    write(repo, f"{base}/model/Kind.java", KIND)
    write(repo, "src/test/java/com/example/shop/AppTest.java", "package com.example.shop;\npublic class AppTest {}\n")
    brain.settings.values["cards.split_bytes"] = 1000
    brain.settings.values["cards.split_min_bytes"] = 200
    return brain


def test_maven_packages_cards(maven):
    report = maven.map()
    base = "src/main/java/com/example/shop"
    assert {".", base, f"{base}/api", f"{base}/model"} <= set(report.modules)
    root = card(maven, ".")
    assert "Maven module `com.example:shop` 1.4.0 in `./`." in root
    assert "- `com.example.shop.App` (main class (pom.xml))" in root
    assert "`org.springframework.boot:spring-boot-starter-web 3.2.0`" in root and "`org.junit.jupiter:junit-jupiter (test)`" in root
    api = card(maven, f"{base}/api")
    assert "Java package `com.example.shop.api` of Maven module `com.example:shop` 1.4.0" in api
    assert "### `ItemController.java` (`com.example.shop.api`)" in api
    assert "- `class ItemController` — HTTP endpoints for items." in api
    assert "  - `List<Item> list()` — Lists every item." in api and "  - `Item get(String id)` — One item by id." in api
    assert "audit" not in api and "packagePrivate" not in api and "items = null" not in api
    assert "- `GET /items` → `ItemController.list` (ItemController.java)" in api
    assert "- `GET /items/{id}` → `ItemController.get` (ItemController.java)" in api
    assert "- `POST /items/new` → `ItemController.create` (ItemController.java)" in api
    assert f"- `{base}/model` (1 file: `ItemController.java`; imports `com.example.shop.model.Item`)" in api
    assert "- `org.springframework.boot:spring-boot-starter-web` — declared (`org.springframework.boot:spring-boot-starter-web 3.2.0`)" in api
    model = card(maven, f"{base}/model")
    assert "- `record Item(String id, long price)` — One thing for sale." in model
    assert "- `enum Kind` — Kinds of items." in model and "  - `BOOK`" in model and "  - `boolean taxed()`" in model
    assert "Hidden" not in model.split("## Files")[0] and "notApi" not in model
    app = card(maven, base)
    assert "- `java com.example.shop.App` (`App.java`)" in app
    assert "AppTest" not in "".join(p.read_text() for p in (maven.dir / "modules").rglob("*.md"))


def test_java_symbols_have_line_ranges():
    facts = extract_file("src/main/java/com/example/shop/api/ItemController.java", CONTROLLER.encode(), dotted=None,
                         max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["ItemController"].kind == "class" and (by["ItemController"].start, by["ItemController"].end) == (10, 29)
    assert by["ItemController.get"] == Symbol("ItemController.get", "method", 20, 21, True, "Item get(String id)")
    assert by["ItemController.audit"].exported is False and by["ItemController.packagePrivate"].exported is False
    assert by["ItemController.items"].kind == "var" and by["ItemController.items"].exported is False


KOTLIN = '''package com.example.shop.kt

import com.example.shop.model.Item

/** Prices items. */
class Pricer(val currency: String, private val rate: Double) {
    /** Price of one item. */
    fun price(item: Item): Long {
        return 0
    }

    private fun round(x: Double): Long = 0
}

/** Formats cents. */
fun format(cents: Long): String = ""

internal fun hidden() {}
'''


def test_kotlin_file_facts():
    pytest.importorskip("tree_sitter_kotlin")
    facts = extract_file("src/main/kotlin/com/example/shop/kt/Pricer.kt", KOTLIN.encode(), dotted=None, max_bytes=10**6)
    assert facts["status"] == "ok" and facts["unit"] == "com.example.shop.kt"
    by = {e["name"]: e for e in facts["exports"]}
    assert by["Pricer"]["doc"] == "Prices items." and by["Pricer"]["sig"] == "class Pricer(val currency: String, private val rate: Double)"
    assert [m["name"] for m in by["Pricer"]["members"]] == ["currency", "price"]
    assert by["format"]["sig"] == "fun format(cents: Long): String" and by["format"]["doc"] == "Formats cents."
    assert "hidden" not in by
    symbols = {s.qualname: s for s in facts["symbols"]}
    assert symbols["Pricer.price"] == Symbol("Pricer.price", "method", 8, 10, True, "fun price(item: Item): Long")
    assert symbols["Pricer.round"].exported is False and symbols["hidden"].exported is False
    assert facts["imports"] == ["com.example.shop.model.Item"]


ONE_LINE_KT = '''package com.example.shop.kt

/** A value in a box. */
class Box(val v: Int) { fun get() = v }

/** Shared settings. */
object Settings { val retries = 3 }

interface Named { fun name(): String }

/** Says hello. */
fun hello(who: String) { println("hello $who") }
'''


def test_kotlin_one_line_bodies_parse():
    """The Kotlin grammar wants a separator before a one-line body's `}`; such files are read whole, lines unchanged."""
    pytest.importorskip("tree_sitter_kotlin")
    facts = extract_file("src/main/kotlin/com/example/shop/kt/Box.kt", ONE_LINE_KT.encode(), dotted=None, max_bytes=10**6)
    assert facts["status"] == "ok" and not facts.get("partial")
    by = {e["name"]: e for e in facts["exports"]}
    assert set(by) == {"Box", "Settings", "Named", "hello"}
    assert [m["name"] for m in by["Box"]["members"]] == ["v", "get"] and [m["name"] for m in by["Settings"]["members"]] == ["retries"]
    assert by["Named"]["members"][0]["sig"] == "fun name(): String" and by["Box"]["doc"] == "A value in a box."
    symbols = {s.qualname: s for s in facts["symbols"]}
    assert (symbols["Settings.retries"].start, symbols["hello"].start) == (7, 12)


JACKSON_POM = '''<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>codec</artifactId>
  <version>0.1.0</version>
  <dependencies>
    <dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-annotations</artifactId><version>2.17.0</version></dependency>
    <dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-core</artifactId><version>2.17.0</version></dependency>
    <dependency><groupId>com.fasterxml.jackson.core</groupId><artifactId>jackson-databind</artifactId><version>2.17.0</version></dependency>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter-api</artifactId><version>5.10.0</version></dependency>
  </dependencies>
</project>
'''

CODEC_JAVA = '''package com.example.codec;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.core.JsonParser;
import org.junit.jupiter.api.Assertions;

/** Reads and writes JSON. */
public class Codec {
    public ObjectMapper mapper() { return new ObjectMapper(); }
}
'''


def test_imports_map_to_the_artifact_of_their_package(brain):
    """Artifacts of one groupId (jackson-core, jackson-databind…) are told apart by the package an import names."""
    write(brain.repo, "pom.xml", JACKSON_POM)
    write(brain.repo, "src/main/java/com/example/codec/Codec.java", CODEC_JAVA)
    brain.map()
    deps = card(brain, "src/main/java/com/example/codec").split("## Dependencies")[1].split("## Files")[0]
    assert "- `com.fasterxml.jackson.core:jackson-databind` — declared (`com.fasterxml.jackson.core:jackson-databind 2.17.0`)" in deps
    assert "- `com.fasterxml.jackson.core:jackson-core` — declared (`com.fasterxml.jackson.core:jackson-core 2.17.0`)" in deps
    assert "- `org.junit.jupiter:junit-jupiter-api` — declared" in deps
    assert "jackson-annotations" not in deps
