"""Task localization: which files (and modules) a task text is about.

No model, only evidence a reader would use, each kind weighed by how specific it is:

1. paths the text names (``django/forms/fields.py``, ``src/app/x.ts:12``), traceback
   frames (``File ".../pkg/mod.py", line 3, in f``, and each other language's shape: Go
   panics, Rust panics and backtraces, Java ``at a.b.C.m(C.java:42)``, JavaScript stack
   frames, C/C++ compiler errors and sanitizer frames, see ``traces``): the deepest frame
   inside the repository weighs most;
2. dotted module paths (``pkg.sub.mod`` or ``pkg.sub.Name``, followed through a
   package's re-exports to the module that defines the name);
3. identifiers that match symbols the code defines (``Class.method`` pairs most, then
   classes and functions, then methods and attributes), weighted by how few files
   define them, how code-like the word looks, and whether the title names it;
   identifiers that equal a file's name (``makemigrations`` -> ``.../makemigrations.py``);
4. full-text BM25 over the files' identifier tokens, as the tie-breaker and the
   fallback when the text names no code at all; and text the report quotes (a pasted
   error message, an output line, a long option) found verbatim in a few files, looked
   up as phrases of three words (see ``quotes``);
5. the session's claims and the working tree's changed files, when present.
6. neighbours of the best few files: what they import or is imported by them, and their
   header/source twin, get a small share of their score (a fix often spans them).

Test files are never the answer: they are demoted below every other file. The
signal extraction is pure (``extract_signals``); scoring reads a ``CodeView``. The
ranking itself is ``ranking.gather`` (the evidence at unit weight) then
``ranking.combine`` (the weights of ``weights.json``); ``locate`` is the two in a row.
"""

from __future__ import annotations

import math
import posixpath
import re
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .code import CODE_EXTENSIONS, is_nonproduct_path
from .quotes import phrase_windows, quoted_candidates
from .tokenize import STOPWORDS, tokens
from .traces import trace_frames

__all__ = ["Signals", "extract_signals", "CodeView", "FileHit", "Localization", "locate", "MAX_TASK_CHARS",
           "is_text_evidence", "module_of", "files_named", "unnamed_modules", "quoted_evidence", "resolve_route",
           "resolve_module_path", "resolve_words", "follow_reexports", "GENERATED_NAME"]

MAX_TASK_CHARS = 60_000  # a huge task text is read at its head and tail (tracebacks end texts)

_EXT = "(?:" + "|".join(sorted((e[1:] for e in CODE_EXTENSIONS), key=lambda e: (-len(e), e))) + ")"
# path candidates are found in two linear steps (a run of path characters, then a check of its end),
# never by one nested pattern: those backtrack for minutes on inputs like "a/a/a/..."
_PATH_RUN = re.compile(r"[\w.\-~/\\:]+")
_PATH_END = re.compile(r"(?:^|[/\\])[\w\-.]*[\w\-]\." + _EXT + r"$")
_LINE_SUFFIX = re.compile(r"(?::\d+)+$")
_FRAME = re.compile(r"""File ["']([^"']+)["'], line (\d+)(?:, in ([\w<>.]+))?""")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w])")
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w{2,}(?![\w])|(?<=\.)[A-Za-z_]\w{2,}(?![\w])")
# a link to a file in a repository keeps its path (`.../blob/<ref>/src/x.go#L12` -> `src/x.go`); any other
# address (images, other sites, issue links) is not about this code and its words only add noise
_URL = re.compile(r"\bhttps?://[^\s()<>\[\]\"'`]{1,2000}")
_BLOB = re.compile(r"/(?:blob|tree|raw)/[^/\s]+/([^\s#?]+)")


def _url_path(match: re.Match) -> str:
    blob = _BLOB.search(match.group())
    return f" {blob.group(1)} " if blob else " "


_ROUTE_WORD = re.compile(r"[A-Za-z_][\w\-]{0,60}")


def url_routes(text: str) -> list[str]:
    """The paths of the links in ``text`` that read as routes (two to six plain words: `api/pin` of
    `https://app.example/api/pin/?user=1`); links to files of a repository are paths, not routes."""
    routes = []
    for match in _URL.finditer(text):
        if _BLOB.search(match.group()):
            continue
        rest = match.group().split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        words = [w for w in rest.split("/")[1:] if w]
        if 2 <= len(words) <= 6 and all(_ROUTE_WORD.fullmatch(w) for w in words):
            routes.append("/".join(words))
    return list(dict.fromkeys(routes))


# words of a report's prose that no code is named by: dropped from the full-text query (beside the stop words)
# so a file whose comments or strings happen to say "how", "what" or "thanks" does not win on them
PROSE_WORDS = frozenset(("what how why where who whom whose now some many much very been being here also just "
                         "about because than too us am again however thanks thank hope please want would like "
                         "currently seems").split())
_MODULE_WORD = re.compile(r"[A-Za-z_][\w\-.]{0,80}")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def _phrase(words: str) -> str:
    """A fixed sentence as a pattern: its words in order, any short run of spaces or punctuation between."""
    return r"\b" + r"\W{1,4}".join(re.findall(r"\w+", words)) + r"\b"


# the fixed sentences of the issue templates GitHub offers every repository (bug report, feature request)
# and their common variants: the reporter's answer is the report, the template's questions only add
# words such as "feature", "request", "problem", "context", "solution" that every report shares
TEMPLATE_SENTENCES = (
    "is your feature request related to a problem", "please describe", "describe the solution you'd like",
    "describe alternatives you've considered", "additional context", "describe the bug", "to reproduce",
    "steps to reproduce the behavior", "steps to reproduce the behaviour", "steps to reproduce", "expected behavior",
    "expected behaviour", "actual behavior", "actual behaviour", "please complete the following information",
    "if applicable add screenshots to help explain your problem", "i'm always frustrated when",
    "see error", "add any other context", "or screenshots", "about the feature request here",
    "about the problem here",
)
_TEMPLATE = re.compile(
    "|".join([_phrase(s) for s in TEMPLATE_SENTENCES]
             + [r"\ba clear and concise description of [^.\n]{0,120}", r"\[e\.g\.[^\]\n]{0,60}\]",
                r"\b(?:go to|click on|scroll down to) '\.{3,4}'"]),
    re.I,
)
_BACKTICK = re.compile(r"`([^`\n]{1,120})`")
# CJK letters are word characters to `\w`: `但discov.EtcdConf中没有user` would read as one word, so the
# boundaries between CJK (and full-width punctuation) and ASCII word characters become spaces
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_CJK_EDGE = re.compile(f"(?<=[A-Za-z0-9_])(?=[{_CJK}])|(?<=[{_CJK}])(?=[A-Za-z0-9_])")

# a title about the program's command line (an option such as `-e` or `--jsonargs`, its exit code, an
# environment variable it reads) points at the program's entry point: the file whose `main` reads them
_TITLE_OPTION = re.compile(r"(?:^|(?<=[\s'\"`(\[]))(?:--?[A-Za-z][\w\-]*|--)(?=[\s'\"`)\],.:;!?]|$)")
_TITLE_CLI = re.compile(r"\b(?:exit (?:code|status)|return code|env|environment variables?|env vars?|command[\s-]line)\b",
                        re.I)
GENERATED_NAME = re.compile(r"(?:^|/)\d{3,}_\w*\.\w+$")  # numbered migrations and the like
_GENERATED = GENERATED_NAME  # the name benchmarks import
_LENT_REASONS = ("imports or is imported by", "header/source twin of", "also defines", "declaration twin of",
                 "entry point importing", "like `")
_WEAK_REASONS = ("full-text match", "changed in the working tree", *_LENT_REASONS)
_JS_EXTS = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
_C_FAMILY = (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".hh")
# folders that hold sources without naming a module: `src/main/java/com/x/Y.java` is module com.x.Y,
# `tokio/src/sync/mpsc/mod.rs` is tokio::sync::mpsc, `include/fmt/core.h` is fmt/core
_SOURCE_ROOTS = frozenset({"src", "source", "sources", "lib", "main", "java", "kotlin", "scala", "include", "pkg"})
# file names that stand for their folder's module
_FOLDER_FILES = frozenset({"mod", "lib", "index", "__init__", "main", "package-info"})


@dataclass
class Signals:
    """What a task text says about code, before looking at any repository."""

    paths: list[tuple[str, float]] = field(default_factory=list)  # (path as written, weight)
    frames: list[tuple[str, str]] = field(default_factory=list)  # (path, function) of traceback frames in order
    dotted: list[str] = field(default_factory=list)
    idents: dict[str, float] = field(default_factory=dict)  # identifier -> code-likeness x title x mentions
    words: list[str] = field(default_factory=list)  # query tokens for full text
    title_words: list[str] = field(default_factory=list)  # query tokens of the first line
    module_paths: list[str] = field(default_factory=list)  # slashed names without extension: Go imports, JS requires
    cli: bool = False  # the title names a command-line option, an exit code or an environment variable
    in_traces_only: set[str] = field(default_factory=set)  # identifiers met only on traceback lines
    routes: list[str] = field(default_factory=list)  # the paths of links to a running service: `api/pin` of `https://x.app/api/pin/?u=1`
    code_like: set[str] = field(default_factory=set)  # identifiers shaped or marked as code (`getX`, `a_b`, `f()`)
    quoted: list[tuple[str, ...]] = field(default_factory=list)  # words of quoted messages, output lines, options


def _codeness(word: str, marked: bool) -> float:
    if marked:
        return 1.0
    inner = word.strip("_")
    if "_" in inner or re.search(r"[a-z][A-Z]", inner) or re.search(r"\d", inner):
        return 1.0
    if word.startswith("_") or word.endswith("_"):
        return 1.0
    if inner.isupper() and len(inner) > 3:
        return 0.6
    if inner[:1].isupper():
        return 0.5
    return 0.2


def _clip(text: str) -> str:
    if len(text) <= MAX_TASK_CHARS:
        return text
    half = MAX_TASK_CHARS // 2
    return text[:half] + "\n" + text[-half:]


def extract_signals(text: str | None, *, strip_urls: bool | None = None) -> Signals:
    """Paths, traceback frames, dotted names, identifiers and query words of a task text (pure).

    ``strip_urls`` (default: the shipped ``strip_urls`` param) drops the text's addresses."""
    sig = Signals()
    if not text or not text.strip():
        return sig
    text = _HTML_COMMENT.sub(" ", _clip(text))  # issue templates' hidden instructions are not the report
    text = _TEMPLATE.sub(" ", text)  # nor their fixed questions
    text = _CJK_EDGE.sub(" ", text)
    if strip_urls is None:
        from .weights import shipped_weights

        strip_urls = shipped_weights().params["strip_urls"]
    if strip_urls:
        sig.routes = url_routes(text)
        text = _URL.sub(_url_path, text)
    title = text.strip().split("\n", 1)[0]
    for match in _FRAME.finditer(text):
        sig.frames.append((match.group(1).replace("\\", "/"), match.group(3) or ""))
    others, used = trace_frames(text)  # Go, Rust, Java, JavaScript, C/C++ traces and compiler errors
    sig.frames.extend(others)
    if used:
        text_lines = text.split("\n")
        unframed = "\n".join(" " if i in used else line for i, line in enumerate(text_lines))
    else:
        unframed = text
    unframed = _FRAME.sub(" ", unframed)
    for match in _PATH_RUN.finditer(unframed):
        run = _LINE_SUFFIX.sub("", match.group().rstrip(".:-"))
        if len(run) > 400:
            continue
        if not _PATH_END.search(run):
            words = [w for w in run.split("/") if w not in ("", ".", "..")]
            if "/" in run and len(words) >= 2 and all(_MODULE_WORD.fullmatch(w) for w in words):
                sig.module_paths.append("/".join(words))  # `core/logx`, `./lib/router`: a package or module
            continue
        path = re.sub(r"^[A-Za-z]:(?=[/\\])", "", run).replace("\\", "/")
        if "/" not in path and path.count(".") > 1:
            continue  # a dotted name such as `pkg.mod.c`, handled as a dotted path
        sig.paths.append((path, 2.0 if match.start() < len(title) else 1.0))
    marked: set[str] = set()
    for match in _BACKTICK.finditer(text):
        marked.update(re.findall(r"[A-Za-z_]\w+", match.group(1)))
    for match in re.finditer(r"(?<!\w)([A-Za-z_]\w*)\s*\(", text):
        marked.add(match.group(1))
    for match in _DOTTED.finditer(text.replace("::", ".")):  # Rust and C++ paths read as dotted names
        dotted = match.group(1)
        if not re.search(r"\." + _EXT + r"$", dotted) and dotted.count(".") < 12:
            sig.dotted.append(dotted)
    counts = Counter(m.group() for m in _IDENT.finditer(text))
    if unframed is not text:
        sig.in_traces_only = set(counts) - {m.group() for m in _IDENT.finditer(unframed)}
    in_title = set(_IDENT.findall(title)) | {m.group() for m in re.finditer(r"[A-Za-z_]\w{2,}", title)}
    for word, count in counts.items():
        if word.lower() in STOPWORDS:
            continue
        codeness = _codeness(word, word in marked)
        if codeness >= 1.0:
            sig.code_like.add(word)
        weight = codeness * (1.0 + 0.4 * math.log(count))
        if word in in_title:
            weight *= 2.0
        sig.idents[word] = weight
    for word in set(re.findall(r"(?<![\w])\d+_\w+", text)):
        sig.idents.setdefault(word, 2.0 if word in title else 1.0)
    sig.cli = bool(_TITLE_OPTION.search(title) or _TITLE_CLI.search(title))
    sig.words = [w for w in tokens(text, stop=True) if w not in PROSE_WORDS]
    sig.title_words = [w for w in tokens(title, stop=True) if w not in PROSE_WORDS]
    sig.quoted = quoted_candidates(text)
    return sig


# -- the repository side ----------------------------------------------------------


class CodeView:
    """Read-only lookups over the code tables of index.db, loaded once per use."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.files: dict[str, tuple[str, bool]] = {}
        self.generated: set[str] = set()  # written by a tool or copied from another project
        self.by_module: dict[str, str] = {}
        self.by_suffix: dict[str, list[str]] = defaultdict(list)
        self.by_stem: dict[str, list[str]] = defaultdict(list)
        for path, module, is_test, generated in db.execute("SELECT path, module, is_test, generated FROM code_files"):
            self.files[path] = (module, bool(is_test))
            if generated:
                self.generated.add(path)
            if not is_test:
                self.by_module.setdefault(module, path)
                stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
                if stem != "__init__":
                    self.by_stem[stem.lower()].append(path)
            parts = path.split("/")
            for i in range(len(parts)):
                self.by_suffix["/".join(parts[i:])].append(path)
        # separate modules inside the repository's own (a Go folder with its own go.mod): folder -> names
        try:
            self.nested: dict[str, list[str]] = {folder: names.split() for folder, names in
                                                 db.execute("SELECT folder, names FROM code_modules") if folder}
        except sqlite3.OperationalError:
            self.nested = {}
        self._segments: tuple[dict, dict] | None = None
        self._imports: tuple[dict, dict] | None = None
        self._entries: list[str] | None = None
        self._rust_crates: dict[str, str] | None = None  # crate name -> its source folder
        self._rust_definers: dict[str, list[str]] = {}
        self._rust_roots: dict[str, str | None] = {}  # folder -> source folder of its crate
        self._imports_of: dict[str, list[str]] = {}

    def entry_points(self) -> list[str]:
        """The program's entry files: product files (not tests, examples, generated or copied-in code)
        that define a top-level `main` (C, C++, Go, Rust). Python's entry points take other shapes."""
        if self._entries is None:
            self._entries = sorted({
                path for (path,) in self.db.execute(
                    "SELECT path FROM code_symbols WHERE lname = 'main' AND kind = 'function'")
                if path in self.files and not self.is_test(path) and path not in self.generated
                and not path.endswith((".py", ".pyi")) and not is_nonproduct_path(path)})
        return self._entries

    def module_keys(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """(module -> files, folder -> files) keyed by every lower-case tail of the path's module words.

        A module's words are its folders without source roots plus its file stem (a folder file
        such as ``mod.rs`` or ``index.js`` stands for its folder): what ``a.b.C``, ``a::b::C`` and
        ``a/b`` name in Java, Rust, Go, C++ and JavaScript texts. Built on first use.
        """
        if self._segments is None:
            modules: dict[str, list[str]] = defaultdict(list)
            folders: dict[str, list[str]] = defaultdict(list)
            for path, (_, test) in self.files.items():
                if test or path.endswith((".py", ".pyi")):
                    continue  # Python modules resolve exactly through `by_module`
                parts = path.lower().split("/")
                dirs = [d for d in parts[:-1] if d not in _SOURCE_ROOTS]
                stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1] else parts[-1]
                # a Go qualifier names a package, the folder: `json.Unmarshal` is not `jsonx/json.go`
                words = dirs if stem in _FOLDER_FILES or path.endswith(".go") else [*dirs, stem]
                for i in range(len(words)):
                    modules["/".join(words[i:])].append(path)
                for i in range(len(dirs)):
                    folders["/".join(dirs[i:])].append(path)
            self._segments = (modules, folders)
        return self._segments

    def is_test(self, path: str) -> bool:
        return self.files.get(path, ("", False))[1]

    def resolve_path(self, written: str) -> list[str]:
        """Repository files a written path (absolute, relative, or a tail) points to."""
        parts = [p for p in written.split("/") if p not in ("", ".")]
        for i in range(len(parts)):
            hits = self.by_suffix.get("/".join(parts[i:]))
            if hits:
                if len(parts) - i > 1:
                    return hits
                # only the file name matches: trust it when the text wrote a bare name, not someone else's path
                return hits if len(parts) == 1 and len(hits) <= 3 else []
        return []

    def definitions(self, names: list[str]) -> dict[str, list[tuple[str, str, str]]]:
        """name -> [(path, kind, qualname)] for exact (case-sensitive) names, test files excluded."""
        found: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        names = list(dict.fromkeys(names))
        for i in range(0, len(names), 500):
            chunk = names[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for path, name, kind, qual in self.db.execute(
                f"SELECT path, name, kind, qual FROM code_symbols WHERE lname IN ({marks})", [n.lower() for n in chunk]
            ):
                found[name].append((path, kind, qual))
        return found

    def imports_of(self, path: str) -> list[str]:
        """The import targets ``path`` writes (memoized: the lending passes ask for the same files again)."""
        found = self._imports_of.get(path)
        if found is None:
            found = self._imports_of[path] = [r[0] for r in self.db.execute(
                "SELECT target FROM code_imports WHERE path = ?", (path,))]
        return list(found)

    def resolve_import(self, path: str, target: str) -> list[str]:
        """Repository files an import line of ``path`` points to (none for outside packages).

        Python ``pkg.mod`` (or ``pkg.mod.Name``) by module; JavaScript relative specifiers
        (``../lib/x`` -> ``lib/x.js`` or ``lib/x/index.js``); C/C++ ``"x.h"`` next to the file or
        by its tail; Java ``com.x.Y`` and Go ``github.com/org/app/pkg`` by their path words
        (a Go import names a folder: its files).
        """
        target = target.strip()
        if not target:
            return []
        if path.endswith((".py", ".pyi")):
            found = self.by_module.get(target) or self.by_module.get(target.rsplit(".", 1)[0])
            return [found] if found and found != path else []
        if target.startswith("."):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            for candidate in (base, *(base + e for e in _JS_EXTS), *(base + "/index" + e for e in _JS_EXTS),
                              base + ".d.ts", base + "/index.d.ts"):  # a type import of a declaration file
                if candidate in self.files and candidate != path:
                    return [candidate]
            return []
        if path.endswith(_C_FAMILY):
            near = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if near in self.files:
                return [near]
            hits = self.by_suffix.get(target, [])
            return list(hits) if len(hits) <= 2 and ("/" in target or len(hits) == 1) else []
        if path.endswith(".rs"):
            return self._resolve_rust(path, target)
        modules, folders = self.module_keys()
        words = [w for w in re.split(r"[./]", target.lower()) if w]
        if path.endswith(".go"):
            for i in range(max(0, len(words) - 4), len(words) - 1):  # at least two words of the import path
                files = folders.get("/".join(words[i:]))
                if files:
                    return [f for f in files if posixpath.dirname(f) == posixpath.dirname(files[0])
                            and f.endswith(".go")]
            return []
        if path.endswith((".java", ".kt")) and len(words) >= 3:
            return list(modules.get("/".join(words), []))[:1]
        if path.endswith(".java") and re.fullmatch(r"[A-Z]\w*", target):
            return self._type_file(path, target)
        return []

    def _type_file(self, path: str, name: str) -> list[str]:
        """The file of type ``name`` as a class header of ``path`` names it (``extends JsonParser``):
        the same package's ``JsonParser.java``, else the one file of that name in the repository."""
        ext = posixpath.splitext(path)[1]
        near = posixpath.join(posixpath.dirname(path), name + ext)
        if near in self.files:
            return [near] if near != path else []
        hits = [p for p in self.by_stem.get(name.lower(), []) if p.endswith("/" + name + ext) or p == name + ext]
        return hits if len(hits) == 1 and hits[0] != path else []

    # -- Rust modules: `crate::a::b::Item`, `self::x`, `super::x`, `other_crate::x` --------------------

    def _rust_root(self, path: str) -> str | None:
        """The source folder of the crate ``path`` belongs to: the deepest folder above it holding a
        ``lib.rs`` or ``main.rs``."""
        start = folder = posixpath.dirname(path)
        if start in self._rust_roots:
            return self._rust_roots[start]
        found = None
        for _ in range(64):
            if f"{folder}/lib.rs" in self.files or f"{folder}/main.rs" in self.files or (
                    not folder and ("lib.rs" in self.files or "main.rs" in self.files)):
                found = folder
                break
            if not folder:
                break
            folder = posixpath.dirname(folder)
        self._rust_roots[start] = found
        return found

    def rust_crates(self) -> dict[str, str]:
        """Crate name (``tokio_util``) -> source folder (``tokio-util/src``) for each library crate of the
        repository, named after the folder holding its ``src`` (a crate at the top is not named)."""
        if self._rust_crates is None:
            crates: dict[str, str] = {}
            for path in self.files:
                if path.endswith("/lib.rs") and not self.is_test(path):
                    root = posixpath.dirname(path)
                    base = posixpath.dirname(root) if posixpath.basename(root) == "src" else root
                    if base:
                        crates.setdefault(posixpath.basename(base).replace("-", "_"), root)
            self._rust_crates = crates
        return self._rust_crates

    def _rust_module_file(self, folder: str, root: str | None) -> str | None:
        """The file of the module at ``folder`` (``x.rs`` or ``x/mod.rs``; a crate root's ``lib.rs``)."""
        if folder == root:
            for name in ("lib.rs", "main.rs"):
                candidate = f"{folder}/{name}" if folder else name
                if candidate in self.files:
                    return candidate
            return None
        for candidate in (folder + ".rs", folder + "/mod.rs"):
            if candidate in self.files:
                return candidate
        return None

    def _rust_walk(self, start: str, words: list[str], root: str | None) -> tuple[str, int]:
        """(module folder reached, words used) walking ``words`` down the modules from ``start``."""
        cur, walked = start, 0
        for word in words:
            folder = f"{cur}/{word}" if cur else word
            if self._rust_module_file(folder, root) is None:
                break
            cur, walked = folder, walked + 1
        return cur, walked

    def _rust_item_files(self, folder: str, name: str) -> list[str]:
        """Files under ``folder`` defining the type, function or macro ``name`` (a re-exported item)."""
        if name not in self._rust_definers:
            rows = self.db.execute("SELECT DISTINCT path, name FROM code_symbols WHERE lname = ? AND kind IN "
                                   "('class', 'function', 'macro')", (name.lower(),)).fetchall()
            self._rust_definers[name] = [p for p, n in rows if n == name and p.endswith(".rs")]
        prefix = folder + "/" if folder else ""
        return [p for p in self._rust_definers[name] if p.startswith(prefix) and not self.is_test(p)]

    def _resolve_rust(self, path: str, target: str) -> list[str]:
        """The file a Rust `use` path of ``path`` points to: the module the path walks to, or the file
        under it defining the item it ends with (a re-exported item is where the module keeps it).
        A module file and the files below it are not linked (see ``_rust_declares``)."""
        words = [w for w in target.replace("$crate", "crate").split("::") if w]
        root = self._rust_root(path)
        if not words:
            return []
        stem = posixpath.splitext(posixpath.basename(path))[0]
        here = posixpath.dirname(path)
        if not (root is not None and here == root and stem in ("lib", "main")) and stem != "mod":
            here = posixpath.splitext(path)[0]  # `a/b.rs` is module a::b, its children live in `a/b/`
        head, rest = words[0], words[1:]
        if head == "crate":
            if root is None:
                return []
            start = root
        elif head == "self":
            start = here
        elif head == "super":
            start = here
            while True:
                if start == root or not start:
                    return []
                start = posixpath.dirname(start)
                if not rest or rest[0] != "super":
                    break
                rest = rest[1:]
        elif head in self.rust_crates():
            start = self.rust_crates()[head]
            root = start
        else:  # a path relative to this module (`pub use child::Item`), or another crate's
            start, rest = here, words
        cur, walked = self._rust_walk(start, rest, root)
        if head not in ("crate", "self", "super") and head not in self.rust_crates() and not walked:
            if root is None or here == root:
                return []  # an outside crate (`std`, `bytes`)
            cur, walked = self._rust_walk(root, rest, root)  # 2015 edition: `use a::b` from the crate root
            if not walked:
                return []
        left = rest[walked:]
        found: list[str] = []
        if left and left[0] not in ("self", "*"):
            found = self._rust_item_files(cur, left[0])
            found = found if len(found) <= 2 else []
        if not found:
            own = self._rust_module_file(cur, root)
            found = [own] if own else []
        return [f for f in found if f != path and not _rust_declares(path, f) and not _rust_declares(f, path)]

    def import_graph(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """(file -> files it imports, file -> files importing it) within the repository, built on first use."""
        if self._imports is None:
            forward: dict[str, set[str]] = defaultdict(set)
            backward: dict[str, set[str]] = defaultdict(set)
            for path, target in self.db.execute("SELECT path, target FROM code_imports"):
                if self.is_test(path):
                    continue
                for hit in self.resolve_import(path, target):
                    if hit != path and not self.is_test(hit):
                        forward[path].add(hit)
                        backward[hit].add(path)
            self._imports = (forward, backward)
        return self._imports

    def _has_term(self, term: str) -> bool:
        """Whether any indexed file has the word as written."""
        try:
            return self.db.execute("SELECT 1 FROM code_fts WHERE code_fts MATCH ? LIMIT 1",
                                   ('"' + term.replace('"', '""') + '"',)).fetchone() is not None
        except sqlite3.OperationalError:
            return False
    def files_writing(self, word: str, limit: int) -> list[str]:
        """Up to ``limit`` files whose code writes the identifier ``word`` (test files are not indexed)."""
        try:
            rows = self.db.execute("SELECT code_files.path FROM code_fts JOIN code_files ON code_files.id = code_fts.rowid "
                                   "WHERE code_fts MATCH ? LIMIT ?", ('body:"' + word.lower().replace('"', '') + '"', limit))
            return [r[0] for r in rows]
        except sqlite3.OperationalError:
            return []

    def bm25(self, words: list[str], limit: int = 50, *, body_only: bool = False,
             stems: bool | str = False, names_weight: float | None = None) -> list[tuple[str, float]]:
        """Files ranked by BM25 over their identifier tokens (``tokenize.tokens``; test files are not in the table).

        ``stems`` also matches each inflected query word's stem as a prefix (`colorized` finds `color`);
        ``stems="absent"`` only for the words that no file writes as they are, ``"only-absent"`` queries
        those stems alone (no word as written)."""
        terms = [w for w in dict.fromkeys(words) if len(w) > 1][:200]
        if not terms:
            return []
        quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
        stems_only = stems == "only-absent"
        if stems:
            # English inflections reach their stem: `colorized`, `coloring` -> color*, `panics` -> panic*
            inflected = [t for t in terms if stems not in ("absent", "only-absent") or not self._has_term(t)]
            stems = {_stem(t) for t in inflected} - set(terms) - {None}
            if stems_only:
                quoted = []
            quoted += ['"' + s.replace('"', '""') + '"*' for s in sorted(stems)]
            if not quoted:
                return []
        query = " OR ".join(quoted)
        if names_weight is None:
            from .weights import shipped_weights

            names_weight = shipped_weights().params["names_weight"]
        weights = "0.0, 1.0" if body_only else f"{float(names_weight)}, 1.0"
        try:
            rows = self.db.execute(f"SELECT code_files.path, bm25(code_fts, {weights}) AS s FROM code_fts "
                                   f"JOIN code_files ON code_files.id = code_fts.rowid WHERE code_fts MATCH ? "
                                   f"ORDER BY s LIMIT ?", (query, limit)).fetchall()
        except sqlite3.OperationalError:
            return []
        return [(path, -score) for path, score in rows]

    def phrase_files(self, phrase: list[str], limit: int) -> list[str]:
        """Files whose body holds these tokens in this order (an FTS5 phrase), at most ``limit``."""
        if not phrase:
            return []
        query = 'body: "' + " ".join(phrase).replace('"', '""') + '"'
        try:
            rows = self.db.execute("SELECT code_files.path FROM code_fts JOIN code_files "
                                   "ON code_files.id = code_fts.rowid WHERE code_fts MATCH ? LIMIT ?",
                                   (query, limit)).fetchall()
        except sqlite3.OperationalError:
            return []
        return [r[0] for r in rows]


@dataclass
class FileHit:
    path: str
    score: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class Localization:
    files: list[FileHit]
    modules: list[tuple[str, float]]

    @property
    def paths(self) -> list[str]:
        return [h.path for h in self.files]


_SUFFIXES = ("izations", "ization", "ations", "ation", "izing", "ized", "izes", "ize", "ings", "ing", "ed", "es", "s")


def _stem(word: str) -> str | None:
    """A crude English stem for prefix search, or None: only plain words of 5+ letters."""
    if not word.isalpha() or len(word) < 5:
        return None
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return None


def files_named(view: CodeView, word: str, in_traces_only: set[str] = frozenset()) -> list[str]:
    """Files whose name (without extension) is ``word``: a lower-case word matches any case of the
    name, a word with capitals only the name spelled the same (`RecyclerPool` -> `RecyclerPool.java`,
    `renderRepoCard` -> `renderRepoCard.js`; a capitalised English word does not reach `card.js`),
    when one file only is so named, and only where the text's own words write it (a traceback's
    files are weighed as its frames)."""
    files = view.by_stem.get(word.lower(), [])
    if word.islower() or not files:
        return files if word.islower() else []
    if word in in_traces_only:
        return []
    same = [p for p in files if p.rsplit("/", 1)[-1].split(".", 1)[0] == word]
    return same if len(same) == 1 else []  # a type's name names its one file, not a family (`x.c`, `x.h`)


def is_text_evidence(reason: str) -> bool:
    """Whether a ranking reason is something the text itself points at (a path, a frame, a
    definition, a module or file name), not loose word overlap, the working tree, or a share
    lent by a neighbouring file."""
    return not reason.startswith(_WEAK_REASONS)


_RUST_MODULE_FILES = ("mod.rs", "lib.rs", "main.rs")


def _rust_declares(module_file: str, path: str) -> bool:
    """Whether Rust file ``module_file`` is the module file of a folder holding ``path`` (``a/mod.rs``,
    ``a/lib.rs`` or ``a.rs`` above ``a/...``): it declares (``mod x;``) and re-exports (``pub use
    x::Y``) the files below it. That is structure, not use: a link along it would lend every
    top-ranked file's score to its ``mod.rs`` and to the crate's ``lib.rs``."""
    if not module_file.endswith(".rs"):
        return False
    name = posixpath.basename(module_file)
    folder = posixpath.dirname(module_file) if name in _RUST_MODULE_FILES else module_file[:-3]
    return not folder or path.startswith(folder + "/")


def module_of(path: str) -> str:
    """The folder a file's score counts toward in the ranking's modules (``.`` at the top)."""
    return path.rsplit("/", 1)[0] if "/" in path else "."


def _module_of(view, path: str) -> str:  # the name benchmarks import
    return module_of(path)


def locate(view: CodeView, text: str | None, *, changed: list[str] = (), claimed: list[str] = (),
           module: str | None = None, limit: int = 20) -> Localization:
    """Rank the repository's files for a task text; most likely first (``ranking.gather`` then ``combine``)."""
    from .ranking import combine, gather

    return combine(gather(view, text, changed=changed, claimed=claimed, module=module, links="best"), limit=limit)


def unnamed_modules(view: CodeView, sig: Signals) -> list[str]:
    """The folders of the repository's separate inner modules that the text does not name: a report
    about the product's code does not mention the tool shipped beside it (`goctl`), one about the tool does."""
    if not view.nested:
        return []
    words = set(sig.words) | {w.lower() for w in sig.idents}
    for path in (*(p for p, _ in sig.paths), *sig.module_paths, *(f for f, _ in sig.frames)):
        words.update(path.lower().split("/"))
    return [folder for folder, names in view.nested.items() if not words & set(names)]


def quoted_evidence(view: CodeView, quoted: list[tuple[str, ...]], add, params: dict) -> None:
    """Each window of a quoted text's words is looked up as a phrase; a file holding windows that
    few files hold gets evidence ``sum(1 / files)``, its value growing linearly to 1 at ``quote_full``.
    The reason shows the longest stretch of a quote the file holds (overlapping matched windows)."""
    most, queries = params["quote_max_files"], params["quote_max_queries"]
    looked: dict[tuple[str, ...], list[str]] = {}
    evidence: dict[str, float] = defaultdict(float)
    held: dict[str, list[tuple[int, int, int]]] = defaultdict(list)  # file -> (quote, start, end) of its windows
    for q, words in enumerate(quoted):
        for start, window in phrase_windows(words):
            again = window in looked  # a window quoted twice counts once
            if not again:
                if len(looked) >= queries:
                    break
                looked[window] = view.phrase_files(tokens(" ".join(window)), most + 1)
            files = looked[window]
            if not files or len(files) > most:
                continue
            strength = 0.0 if again else params["quote_option"] if window[0].startswith("--") else 1.0
            for path in files:
                evidence[path] += strength / len(files)
                held[path].append((q, start, start + len(window)))
    for path, found in evidence.items():
        best, run = (0, 0, 0), None
        for q, lo, hi in sorted(held[path]):
            run = (q, run[1], max(run[2], hi)) if run and run[0] == q and lo <= run[2] else (q, lo, hi)
            if run[2] - run[1] > best[2] - best[1]:
                best = run
        shown = " ".join(quoted[best[0]][best[1] : best[2]])[:80]
        add(path, "quote", min(found, params["quote_full"]) / params["quote_full"], f"quoted text `{shown}` found here")


def resolve_route(view: CodeView, route: str, add) -> None:
    """A link's path that ends in the words of one or two modules names them (`api/pin` -> `api/pin.js`,
    `api/user/index.ts`): how file-routed services (serverless functions, page routers) map a URL to code."""
    modules, _ = view.module_keys()
    words = route.lower().split("/")
    for i in range(len(words) - 1):  # at least two words
        files = [p for p in modules.get("/".join(words[i:]), []) if not view.is_test(p)]
        if files and len(files) <= 2:
            for path in files:
                add(path, "route", 1.0 / len(files), f"route `/{route}` of a link in the task")
            return


def resolve_module_path(view: CodeView, written: str, add) -> None:
    """A slashed module name without extension: Go's ``github.com/org/app/core/logx`` (a package folder),
    JavaScript's ``./lib/router`` (``lib/router.js`` or ``lib/router/index.js``). The longest tail that
    is a module names that file; else the longest tail that is a folder lends its files a share."""
    modules, folders = view.module_keys()
    words = written.lower().split("/")
    for i in range(len(words) - 1):  # at least two words: one word alone is too common to trust
        key = "/".join(words[i:])
        files = modules.get(key)
        if files and len(files) <= 3:
            for path in files:
                add(path, "module", 0.8 / len(files), f"module `{written}` named", name=len(files) == 1)
            return
        folder = folders.get(key)
        if folder and len(folder) <= 40:
            for path in folder:
                add(path, "module", 0.5 / len(folder) ** 0.5, f"package `{written}` named")
            return


def resolve_words(view: CodeView, parts: list[str], defs: dict, add, written: str) -> bool:
    """A qualified name by its path words: ``com.x.Y``, ``tokio::sync::mpsc::Sender``, Go's ``pkg.Name``.

    The longest head of ``parts`` that is a module (file) or folder of the repository wins;
    the first word after it, when a file there defines it, points at that file. One word of
    head (a Go package, a C++ namespace) counts only with a defined name after it. Python
    files are left out: their dotted names were resolved exactly through the module index.
    """
    modules, folders = view.module_keys()
    for k in range(len(parts), 0, -1):
        key = "/".join(parts[:k]).lower()
        files = modules.get(key, [])
        folder = folders.get(key, [])
        if not files and not folder:
            continue
        rest = parts[k:]
        if rest:
            defined = {p for p, _, _ in defs.get(rest[0], ())}
            definers = sorted(p for p in {*files, *folder} if p in defined)
            if definers and len(definers) <= 5:
                for path in definers:
                    add(path, "module", 1.0 / len(definers) ** 0.5, f"`{written}` defined here")
                return True
        if rest and k >= 2:
            # the name lives elsewhere and is re-exported here (`pub use`, `export * from`): its few definers
            last = [p for p, kind, _ in defs.get(parts[-1], ()) if kind in ("class", "function", "macro")
                    and not view.is_test(p) and not p.endswith((".py", ".pyi"))]
            if 0 < len(set(last)) <= 2:
                for path in sorted(set(last)):
                    add(path, "module", 0.8 / len(set(last)), f"`{written}` defined here")
        if k >= 2 and files and len(files) <= 3:
            for path in files:
                add(path, "module", (0.4 if rest else 0.8) / len(files), f"module `{written}` named", name=not rest)
            return True
        if rest and k >= 2:
            return True
    return False


def follow_reexports(view: CodeView, path: str, name: str, defs: dict) -> str | None:
    """The file defining ``name`` as seen from module file ``path`` (following re-exports)."""
    for _ in range(4):
        rows = defs.get(name)
        if rows and any(p == path for p, _, _ in rows):
            return path
        nxt = None
        for target in view.imports_of(path):
            if target.endswith("." + name):
                nxt = view.by_module.get(target[: -len(name) - 1])
                if nxt:
                    break
        if not nxt or nxt == path:
            return None
        path = nxt
    return None
