"""A small generated repository in six languages and the task texts the ranking tests run on it.

Every kind of evidence the file ranking reads has a case here: traceback frames (Python, Go,
Java, JavaScript), written paths, dotted module paths and ``Class.member`` pairs, identifiers
and file names, quoted messages, imports (so the neighbour, override, sibling, declaration
and entry-point shares all lend), a numbered migration, an inner Go module, examples and tests.

``tests/data/ranking_golden.json`` holds the ranking of each text as the file ranking gave it
before its weights became data and it was split into ``gather`` and ``combine``; the tests
check the ranking still gives exactly that. Regenerate it (only when a ranking change is
meant) with ``python tests/ranking_repo.py tests/data/ranking_golden.json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["FILES", "TASKS", "build", "rankings"]

FILES = {
    # Python: a package with re-exports, a traceback's frames, a numbered migration
    "app/__init__.py": "",
    "app/models/__init__.py": "from app.models.fields import CharField, IntegerField\n",
    "app/models/fields.py": "class Field:\n    def clean(self, value):\n        return value\n\n\n"
                            "class CharField(Field):\n    max_length = 10\n\n    def clean(self, value):\n"
                            "        raise ValueError('value too long for the field')\n\n\n"
                            "class IntegerField(Field):\n    def to_python(self, value):\n        return int(value)\n",
    "app/forms/forms.py": "from app.models.fields import CharField\n\n\nclass Form:\n    def full_clean(self):\n"
                          "        return CharField().clean(self.data)\n\n    def is_valid(self):\n"
                          "        return self.full_clean()\n",
    "app/forms/widgets.py": "class Widget:\n    template_name = 'input.html'\n\n    def render(self, name, value):\n"
                            "        return name\n",
    "app/core/management/commands/makemigrations.py": "from app.forms.forms import Form\n\n\n"
                                                      "def handle(*args, **options):\n    return Form().is_valid()\n",
    "app/migrations/0002_auto_fields.py": "class Migration:\n    operations = ['CharField max_length']\n",
    "app/utils/text.py": "def slugify(value):\n    return value.lower().replace(' ', '-')\n\n\n"
                         "def wrap(text, width):\n    return text[:width]\n",
    "tests/test_fields.py": "from app.models.fields import CharField\n\n\ndef test_clean():\n"
                            "    CharField().clean('x')\n",
    "docs/examples/fields_example.py": "from app.models.fields import CharField\n\nCharField().clean('example')\n",
    # Go: a package of two files, a test, an inner module beside the product
    "go.mod": "module example.com/app\n\ngo 1.19\n",
    "core/mapping/unmarshaler.go": "package mapping\n\ntype Unmarshaler struct{}\n\n"
                                   "func (u *Unmarshaler) fillValue(v any) error {\n\treturn nil\n}\n",
    "core/mapping/utils.go": "package mapping\n\nfunc parseKey(s string) string {\n\treturn s\n}\n",
    "core/mapping/unmarshaler_test.go": "package mapping\n\nfunc fillValue() {}\nfunc TestUnmarshal(t *testing.T) {}\n",
    "core/discov/config.go": "package discov\n\ntype EtcdConf struct {\n\tHosts []string\n}\n",
    "tools/ctl/go.mod": "module example.com/app/tools/apictl/v2\n\ngo 1.19\n",
    "tools/ctl/route/show.go": "package route\n\n// print each route of the spec\nfunc printRoutes(routes []string) {\n"
                               "\tfor _, route := range routes {\n\t\tprintln(route)\n\t}\n}\n",
    "rest/server.go": "package rest\n\nimport \"example.com/app/core/mapping\"\n\ntype Server struct{ routes []string }\n\n"
                      "func (s *Server) AddRoute(route string) {\n\ts.routes = append(s.routes, route)\n}\n",
    "cmd/app/main.go": "package main\n\nimport \"example.com/app/rest\"\n\nfunc main() {\n\t// reads --verbose and APP_ENV\n}\n",
    # Java: a base class, a delegate overriding it, sibling parsers writing the same method
    "src/main/java/com/acme/core/JsonParser.java":
        "package com.acme.core;\n\npublic abstract class JsonParser {\n"
        "    public abstract NumberType getNumberType();\n    public int nextToken() {\n        return 0;\n    }\n}\n",
    "src/main/java/com/acme/util/JsonParserDelegate.java":
        "package com.acme.util;\n\nimport com.acme.core.JsonParser;\n\n"
        "public class JsonParserDelegate extends JsonParser {\n"
        "    public NumberType getNumberType() {\n        return null;\n    }\n}\n",
    "src/main/java/com/acme/base/ParserBase.java":
        "package com.acme.base;\n\npublic abstract class ParserBase {\n    protected boolean usesPadding() {\n"
        "        return true;\n    }\n}\n",
    "src/main/java/com/acme/base/ReaderParser.java":
        "package com.acme.base;\n\npublic class ReaderParser extends ParserBase {\n    public int read() {\n"
        "        return usesPadding() ? 1 : 0;\n    }\n}\n",
    "src/main/java/com/acme/base/StreamParser.java":
        "package com.acme.base;\n\npublic class StreamParser extends ParserBase {\n    public int stream() {\n"
        "        return usesPadding() ? 2 : 0;\n    }\n}\n",
    "src/test/java/com/acme/core/JsonParserTest.java":
        "package com.acme.core;\n\npublic class JsonParserTest {\n    public void nextToken() {}\n}\n",
    # JavaScript: a route handler nothing imports, a module with a declaration twin, a test, a config
    "api/pin.js": "const { renderRepoCard } = require(\"../src/cards/repo-card\");\n"
                  "module.exports = async (req, res) => {\n  res.send(renderRepoCard(req.query));\n};\n",
    "src/cards/repo-card.js": "function renderRepoCard(repo) {\n  return repo.name;\n}\nmodule.exports = { renderRepoCard };\n",
    "lib/headers.js": "class AxiosHeaders {\n  normalize(format) {\n    return this;\n  }\n}\nmodule.exports = AxiosHeaders;\n",
    "lib/headers.d.ts": "export class AxiosHeaders {\n  normalize(format: boolean): AxiosHeaders;\n}\n",
    "lib/router/layer.js": "function Layer(path) {}\nLayer.prototype.match = function match(path) {\n  return true;\n};\n"
                           "module.exports = Layer;\n",
    "lib/router/index.js": "const Layer = require('./layer');\nfunction route(path) {}\nmodule.exports.route = route;\n",
    "test/router.test.js": "const Layer = require('../lib/router/layer');\nfunction match() {}\n",
    "webpack.config.js": "const match = 1;\nmodule.exports = { match };\n",
    # C: a source and its header, a quoted message, a test
    "src/jv_print.c": '#include "jv.h"\nstatic void put_color(int c) {\n}\nvoid jv_dumpf(jv x, int flags) {\n'
                      '  put_color(1);\n}\n',
    "src/jv.h": "#ifndef JV_H\n#define JV_H\ntypedef struct jv_s { int kind; } jv;\nvoid jv_dumpf(jv x, int flags);\n#endif\n",
    "src/jv.c": '#include "jv.h"\njv jv_null(void) {\n  jv x;\n  return x;\n}\n',
    "src/jv_alloc.c": '#include "jv.h"\nvoid *jv_mem_alloc(int n) {\n  if (!n) memory_exhausted("cannot allocate memory");\n'
                      "  return 0;\n}\n",
    "tests/jv_test.c": "void put_color(int c) {}\nvoid jv_dumpf(void) {}\n",
    # Rust: a crate with modules and a re-export
    "tokio/src/lib.rs": "pub mod sync;\npub mod runtime;\n",
    "tokio/src/sync/mpsc/bounded.rs": "pub struct Sender<T> {\n    x: T,\n}\nimpl<T> Sender<T> {\n    pub fn send(&self) {}\n}\n",
    "tokio/src/sync/mpsc/mod.rs": "mod bounded;\npub use bounded::Sender;\n",
    "tokio/src/runtime/park.rs": "use crate::sync::mpsc::Sender;\n\npub(crate) fn park_timeout() {\n    unreachable!();\n}\n",
    "tokio/tests/sync_mpsc.rs": "fn send() {}\nfn park_timeout() {}\n",
}

TASKS = [
    "CharField.clean raises on short values\n\nTraceback (most recent call last):\n"
    '  File "/srv/app/forms/forms.py", line 9, in is_valid\n    return self.full_clean()\n'
    '  File "/srv/app/forms/forms.py", line 6, in full_clean\n    return CharField().clean(self.data)\n'
    '  File "/srv/app/models/fields.py", line 10, in clean\n    raise ValueError(\'value too long for the field\')\n'
    "ValueError: value too long for the field",
    "makemigrations crashes when a model has an IntegerField\n\nRunning `makemigrations` fails.",
    "`app.models.IntegerField` should accept strings\n\nSee app/models/fields.py:14, `to_python` converts.",
    "Widget.render ignores the template_name\n\nThe `render()` method of widgets drops it.",
    "slugify() keeps trailing dashes\n\nfrom app.utils.text import slugify",
    "Unmarshaler fillValue fails on nested maps\n\npanic: runtime error\n\ngoroutine 1 [running]:\n"
    "example.com/app/core/mapping.(*Unmarshaler).fillValue(...)\n\t/home/u/app/core/mapping/unmarshaler.go:7 +0x1d\n",
    'Since v1.3 `import "example.com/app/core/discov"` fails to build',
    "Print each route when the server starts\nprint routes of the server",
    "apictl: print each route\nprint routes of the spec",
    "The `--verbose` option is ignored\n\nexit code 2 with APP_ENV set",
    "`JsonParser.getNumberType()` returns the wrong type for big numbers",
    "`usesPadding()` is wrong in ReaderParser\n\nReaderParser.read pads twice.",
    "Exception in thread main java.lang.IllegalStateException\n"
    "\tat com.acme.core.JsonParser.nextToken(JsonParser.java:5)\n",
    "Long names overflow\n\n![](https://stats.example.app/api/pin/?username=a&repo=b)",
    "`AxiosHeaders.normalize()` drops the header case",
    "`require('./lib/router')` returns undefined under Node 20",
    "match is wrong\n\nTypeError: x is not a function\n    at Layer.match (/app/lib/router/layer.js:2:10)\n",
    "Values are colorized in a dark foreground\n\nThe colorizing makes jv_dumpf invisible on dark terminals.",
    "Out of memory on big inputs\n\n```\n$ jq . big.json\nerror: cannot allocate memory\n```\n",
    "tokio::sync::mpsc::Sender::send hangs\n\nthread 'main' panicked at tokio/src/runtime/park.rs:4:5:\n"
    "internal error: entered unreachable code",
    "The CharField max_length migration is generated twice",
    "Something is slow somewhere, please help",
    "test_clean fails on CharField\n\ntests/test_fields.py calls `CharField().clean('x')` and src/jv_test.c too",
]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                   check=True, capture_output=True)


def build(root: Path):
    """An initialised, indexed brain over the generated repository at ``root`` (all files committed)."""
    import brain as brainlib

    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found = brainlib.init(root)
    found.write("now.md", "# Now\n\nFix the bugs.\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "files")
    found.reindex()
    return found


def rankings(view) -> list[dict]:
    """Each task's ranking (paths, scores, reasons, modules) as plain data, the way the golden file keeps it."""
    from brain.search.locate import locate

    out = []
    for text in TASKS:
        found = locate(view, text, limit=40)
        out.append({"files": [[h.path, h.score, h.reasons] for h in found.files],
                    "modules": [[m, round(s, 4)] for m, s in found.modules]})
    return out


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        made = build(Path(tmp) / "project")
        data = rankings(made.index.code_view())
    Path(sys.argv[1]).parent.mkdir(parents=True, exist_ok=True)
    Path(sys.argv[1]).write_text(json.dumps(data, indent=1) + "\n")
