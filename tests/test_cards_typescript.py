"""TypeScript/Node cards on a small workspace the test builds itself (tree-sitter)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("tree_sitter_typescript")

from brain.cards.languages.ts_reader import extract  # noqa: E402


def write(repo, rel, text):
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_extract_exports_imports_routes():
    f = extract('''/** Adds two numbers. */
export function add(a: number, b = 2): number { return a + b }
export const VERSION = "1", double = (n: number): number => n * 2;
export default class Store extends Base { constructor(url: string) { super() } get(k: string) {} private x() {} }
export interface Item { id: string }
export type Id = string | number;
export enum Color { Red }
export { helper as help } from "./helpers";
export * from "./all";
import express from "express";
const fs = require("node:fs");
app.get("/items/:id", getItem);
router.post("/items", (req, res) => res.send());
app.route("/books").get(listBooks);
''', path="src/index.ts")
    by = {e["name"]: e for e in f["exports"]}
    assert by["add"]["sig"] == "add(a: number, b = 2): number" and by["add"]["doc"] == "Adds two numbers."
    assert by["double"]["kind"] == "function" and by["VERSION"]["kind"] == "const"
    assert by["Store"]["kind"] == "default" and by["Store"]["members"] == ["constructor", "get"]
    assert by["Item"]["kind"] == "interface" and by["Id"]["sig"] == "Id = string | number" and by["Color"]["kind"] == "enum"
    assert by["help"]["from"] == "./helpers" and by["*"]["from"] == "./all"
    assert set(f["imports"]) == {"./helpers", "./all", "express", "node:fs"}
    assert sorted(f["routes"]) == [["GET", "/books", "listBooks"], ["GET", "/items/:id", "getItem"], ["POST", "/items", "(inline)"]]
    cjs = extract("module.exports = { start, stop: () => 1 };\nexports.version = '1';\n", path="lib.js")
    assert {e["name"] for e in cjs["exports"]} == {"start", "stop", "version"}
    broken = extract("export function (((\n", path="x.ts")
    assert broken["status"] == "ok" and broken.get("partial")


def test_workspace_cards(brain):
    repo = brain.repo
    write(repo, "package.json", json.dumps({"name": "mono", "private": True, "workspaces": ["packages/*"],
                                            "devDependencies": {"typescript": "^5"}}))
    write(repo, "packages/shared/package.json", json.dumps({"name": "@mono/shared", "version": "1.0.0", "main": "dist/index.js",
                                                            "types": "dist/index.d.ts"}))
    write(repo, "packages/shared/src/index.ts", "/** Formats money. */\nexport function money(cents: number): string { return '' }\n")
    write(repo, "packages/api/package.json", json.dumps({
        "name": "@mono/api", "version": "0.1.0", "exports": {".": "./dist/server.js", "./client": "./dist/client.js"},
        "scripts": {"start": "node dist/server.js", "test": "vitest"},
        "dependencies": {"express": "^4.18.0", "@mono/shared": "workspace:*"}}))
    write(repo, "packages/api/src/server.ts", 'import express from "express";\nimport { money } from "@mono/shared";\n'
                                              'import { db } from "./db";\nimport cors from "cors";\n'
                                              'export const app = express();\napp.get("/health", health);\n'
                                              'app.post("/orders", createOrder);\nexport function start(port: number): void {}\n')
    write(repo, "packages/api/src/db.ts", "export const db = {};\n")
    write(repo, "packages/api/src/client.ts", "export class ApiClient { constructor(base: string) {} fetchOrders() {} }\n")
    write(repo, "packages/api/src/server.test.ts", "export const t = 1;\n")
    write(repo, "packages/api/migrations/001_init.sql", "create table x();\n")
    write(brain.dir, "contracts/packages/api.yml", 'routes: ["GET /health", "DELETE /orders"]\n')
    report = brain.map()
    assert set(report.written) >= {"packages/api", "packages/shared"}
    card = (brain.dir / "modules/packages/api.md").read_text()
    assert "- package `@mono/api` 0.1.0" in card and "`exports`: `.`, `./client`" in card
    assert "### `src/server.ts` (entry point)" in card and "### `src/client.ts` (entry point)" in card
    assert "`function start(port: number): void`" in card and "`class ApiClient`" in card
    assert "server.test.ts" not in card.split("## Files")[0]
    assert "- `npm run start`: `node dist/server.js`" in card
    assert "- `packages/shared` (1 file: `src/server.ts`; imports `@mono/shared`)" in card
    assert "- `express` — declared (`express@^4.18.0`)" in card and "- `cors` — not declared in package.json" in card
    assert "- `GET /health` → `health` (src/server.ts)" in card
    assert "`migrations/`: 1 migration, latest `001_init.sql`" in card
    assert "**declared routes missing in code**: `DELETE /orders`" in card
    assert "**routes in code but undeclared**: `POST /orders`" in card
    shared = (brain.dir / "modules/packages/shared.md").read_text()
    assert "### `src/index.ts` (entry point)" in shared and "`function money(cents: number): string` — Formats money." in shared
    boot = brain.boot(module="packages/api", record=False)
    assert "## Dependency `packages/shared`" in boot.text and "packages/shared/src/index.ts" in boot.files


def test_tsconfig_path_aliases_resolve_to_modules(brain):
    repo = brain.repo
    write(repo, "package.json", json.dumps({"name": "app", "dependencies": {"react": "^18"}}))
    write(repo, "tsconfig.json", '{\n  // aliases\n  "compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["./src/*"],},},\n}\n')
    write(repo, "src/lib/money.ts", "export function cents(n: number): number { return n * 100 }\n" + "// pad\n" * 3000)
    write(repo, "src/ui/page.tsx", 'import { cents } from "@/lib/money";\nimport React from "react";\n'
                                   "export function Page(): JSX.Element { return null }\n" + "// pad\n" * 3000)
    write(repo, "src/index.ts", 'export * from "@/ui/page";\n')
    brain.settings.values["cards.split_bytes"] = 20_000
    brain.settings.values["cards.split_min_bytes"] = 5_000
    report = brain.map()
    assert {"src/lib", "src/ui"} <= set(report.modules)
    ui = (brain.dir / "modules/src/ui.md").read_text()
    assert "- `src/lib` (1 file: `page.tsx`; imports `@/lib/money`)" in ui
    assert "`react` — declared (`react@^18`)" in ui and "`@/lib`" not in ui.split("External")[-1]
