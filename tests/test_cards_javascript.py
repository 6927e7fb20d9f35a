"""JavaScript cards on a small npm workspace the test builds: ESM, CommonJS, JSX in .js, bin and routes."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("tree_sitter_javascript")

from card_helpers import card, write  # noqa: E402

from brain.cards.extract import extract_file  # noqa: E402
from brain.cards.languages.base import Symbol  # noqa: E402

UTIL_ESM = '''/** Formats cents as money. */
export function money(cents, currency = "EUR") {
  return `${cents / 100} ${currency}`;
}

/** Rounds to a step. */
export const round = (n, step) => Math.round(n / step) * step;

export default class Ledger {
  add(entry) {}
  #secret() {}
}

function internalOnly() {}
'''

SERVER_CJS = '''const express = require("express");
const { money } = require("@shop/util");
const db = require("./db");

const app = express();
app.get("/health", health);
app.post("/orders", (req, res) => res.json({}));

function health(req, res) { res.send(money(100)); }

/** Starts listening. */
function start(port) { return app.listen(port); }

module.exports = { start, app };
exports.version = "1.0.0";
'''

VIEW_JSX_IN_JS = '''import React from "react";

/** The cart badge. */
export function Badge({ count }) {
  return <span className="badge">{count}</span>;
}
'''


def test_js_workspace_cards(brain):
    repo = brain.repo
    write(repo, "package.json", json.dumps({"name": "shop", "private": True, "workspaces": ["packages/*"]}))
    write(repo, "packages/util/package.json", json.dumps({"name": "@shop/util", "version": "2.0.0", "type": "module",
                                                          "exports": {".": "./index.js"}}))
    write(repo, "packages/util/index.js", UTIL_ESM)
    write(repo, "packages/util/index.test.js", "export const fixture = 1;\n")
    write(repo, "packages/server/package.json", json.dumps({
        "name": "@shop/server", "version": "0.4.0", "main": "server.js", "bin": {"shop-server": "bin/cli.js"},
        "dependencies": {"express": "^4.19.0", "@shop/util": "workspace:*"}}))
    write(repo, "packages/server/server.js", SERVER_CJS)
    write(repo, "packages/server/db.js", "exports.query = function query(sql) { return [] };\n")
    write(repo, "packages/server/bin/cli.js", '#!/usr/bin/env node\nrequire("../server").start(3000);\n')
    write(repo, "packages/server/views/badge.js", VIEW_JSX_IN_JS)
    report = brain.map()
    assert {"packages/util", "packages/server"} <= set(report.modules)
    util = card(brain, "packages/util")
    assert "### `index.js` (entry point)" in util
    assert "- `function money(cents, currency = \"EUR\")` — Formats cents as money." in util
    assert "- `function round(n, step)` — Rounds to a step." in util
    assert "- `export default Ledger`" in util and "`add`" in util
    assert "internalOnly" not in util and "#secret" not in util and "fixture" not in util
    server = card(brain, "packages/server")
    assert "### `server.js` (entry point)" in server
    assert "- `const start`" in server and "- `const app`" in server and "- `const version`" in server
    assert "- `function query(sql)`" in server
    assert "- `function Badge({ count })` — The cart badge." in server
    assert "- `shop-server` → `bin/cli.js` (bin)" in server
    assert "- `packages/util` (1 file: `server.js`; imports `@shop/util`)" in server
    assert "- `express` — declared (`express@^4.19.0`)" in server and "- `react` — not declared in package.json" in server
    assert "- `GET /health` → `health` (server.js)" in server and "- `POST /orders` → `(inline)` (server.js)" in server
    assert "not read" not in server.split("## Files")[1].split("<!--")[0].replace("0 not read", "")


def test_jsx_in_js_is_read_with_the_javascript_grammar():
    facts = extract_file("views/badge.js", VIEW_JSX_IN_JS.encode(), dotted=None, max_bytes=10**6)
    assert facts["status"] == "ok" and not facts.get("partial") and facts["lang"] == "javascript"
    assert [e["name"] for e in facts["exports"]] == ["Badge"]
    assert facts["symbols"] == [Symbol("Badge", "function", 4, 6, True, "function Badge({ count })")]


def test_commonjs_symbols_are_exported_by_module_exports():
    facts = extract_file("server.js", SERVER_CJS.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["start"] == Symbol("start", "function", 12, 12, True, "function start(port)")
    assert by["health"].exported is False and by["app"].exported is True
    assert {"express", "@shop/util", "./db"} <= set(facts["imports"])
