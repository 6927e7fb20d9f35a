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
signal extraction is pure (``extract_signals``); scoring reads a ``CodeView``.
"""

from __future__ import annotations

import math
import posixpath
import re
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from . import traps
from .code import CODE_EXTENSIONS, is_nonproduct_path
from .history import COCHANGE_REASON, HISTORY_REASON, cochange_evidence, history_evidence
from .quotes import phrase_windows, quoted_candidates
from .tokenize import STOPWORDS, tokens
from .traces import trace_frames

__all__ = ["Signals", "extract_signals", "CodeView", "FileHit", "Localization", "locate", "MAX_TASK_CHARS",
           "is_text_evidence"]

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
STRIP_URLS = True


def _url_path(match: re.Match) -> str:
    blob = _BLOB.search(match.group())
    return f" {blob.group(1)} " if blob else " "


_ROUTE_WORD = re.compile(r"[A-Za-z_][\w\-]{0,60}")
W_ROUTE = 3.0  # a link's path that is a module of the repository: a serverless or file-routed handler


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

W_PATH = 8.0
W_FRAME = 4.0
W_FRAME_LAST = 7.0
W_MODULE = 5.0
W_QUAL = 5.0
W_SYMBOL = 1.5
W_STEM = 2.5
W_BM25 = 8.0
W_BM25_TITLE = 10.0
STEM_PREFIXES = True
W_BM25_TITLE_STEM = 5.0  # the title's inflected words that no file writes as they are, by their stems
W_CHANGED = 1.5
# a title about the program's command line (an option such as `-e` or `--jsonargs`, its exit code, an
# environment variable it reads) points at the program's entry point: the file whose `main` reads them
W_ENTRY = 4.0
MAX_ENTRY_FILES = 3
_TITLE_OPTION = re.compile(r"(?:^|(?<=[\s'\"`(\[]))(?:--?[A-Za-z][\w\-]*|--)(?=[\s'\"`)\],.:;!?]|$)")
_TITLE_CLI = re.compile(r"\b(?:exit (?:code|status)|return code|env|environment variables?|env vars?|command[\s-]line)\b",
                        re.I)
# text the report quotes found verbatim in a few files (a pasted message, a usage line): see ``quotes``
W_QUOTE = 6.0
# evidence (sum over matched phrases of 1 / files holding them) worth the full weight; the weight is linear
# below it: one three-word phrase in one file is a quarter (common phrases meet by chance), a whole message all
QUOTE_FULL = 4.0
QUOTE_OPTION = 2.0  # a long option (`--sort-keys`) found counts as this many phrases
QUOTE_MAX_FILES = 8  # a phrase in more files than this is common code, not evidence
QUOTE_MAX_QUERIES = 60  # phrase look-ups per task (each one FTS5 phrase query)
W_CLAIMED = 2.0
TEST_FACTOR = 0.02
GENERATED_FACTOR = 0.3
_GENERATED = re.compile(r"(?:^|/)\d{3,}_\w*\.\w+$")
SYMBOL_DECAY = 0.6
NAMES_WEIGHT = 2.0  # BM25 column weight of a file's path and defined names against its body
KIND_FACTOR = {"class": 1.0, "function": 1.0, "macro": 1.0, "var": 0.8, "method": 0.7, "decl": 0.6, "attr": 0.45,
               "inner": 0.3}
NONPRODUCT_FACTOR = 0.4
NESTED_FACTOR = 0.4  # a separate module inside the repository (its own go.mod) the text never names
# neighbours of the best-ranked files: a fix often also touches what the faulty file imports or is
# imported by (a Go import names a package folder: its files), and its header/source twin
NEIGHBOUR_SEEDS = 3  # how many of the best files lend their neighbours a share
W_IMPORT = 0.12  # share of a seed's score for each file it imports or that imports it
W_TWIN = 0.3  # share for `x.h` <-> `x.c`/`x.cc`/`x.cpp`
MAX_NEIGHBOURS = 12  # a seed imported by (or importing) more files than this lends nothing: a hub
# a fix that adds or changes a method the text names in a base class (or interface) changes it where a
# subclass, a delegate or an implementation linked to it by an import or `extends` defines it too
W_OVERRIDE = 0.3  # share of the seed's score
MAX_OVERRIDERS = 4  # a method defined in more other files than this is too common to follow
MIN_METHOD_CODENESS = 1.0  # only code-like names (`getNumberType`, `clear()`), not English words
_DECLARATION_EXTS = (".d.ts", ".d.mts", ".d.cts")  # TypeScript declarations of a JavaScript module
_DECLARED_EXTS = (".js", ".mjs", ".cjs", ".jsx")
_LENT_REASONS = ("imports or is imported by", "header/source twin of", "also defines", "declaration twin of",
                 "entry point importing", "like `", *traps.LENT_REASONS)
_WEAK_REASONS = ("full-text match", "changed in the working tree", HISTORY_REASON, COCHANGE_REASON, *_LENT_REASONS)
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


def extract_signals(text: str | None) -> Signals:
    """Paths, traceback frames, dotted names, identifiers and query words of a task text (pure)."""
    sig = Signals()
    if not text or not text.strip():
        return sig
    text = _HTML_COMMENT.sub(" ", _clip(text))  # issue templates' hidden instructions are not the report
    text = _TEMPLATE.sub(" ", text)  # nor their fixed questions
    text = _CJK_EDGE.sub(" ", text)
    if STRIP_URLS:
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
        return [r[0] for r in self.db.execute("SELECT target FROM code_imports WHERE path = ?", (path,))]

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
             stems: bool | str = False) -> list[tuple[str, float]]:
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
        weights = "0.0, 1.0" if body_only else f"{NAMES_WEIGHT}, 1.0"
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


def _files_named(view: CodeView, word: str, in_traces_only: set[str] = frozenset()) -> list[str]:
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


def _module_of(view: CodeView, path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def locate(view: CodeView, text: str | None, *, changed: list[str] = (), claimed: list[str] = (),
           module: str | None = None, limit: int = 20) -> Localization:
    """Rank the repository's files for a task text; most likely first."""
    sig = extract_signals(text)
    score: dict[str, float] = defaultdict(float)
    why: dict[str, list[tuple[float, str]]] = defaultdict(list)

    named: set[str] = set()  # files the text names outright (path, module, file name)

    def add(path: str, weight: float, reason: str, *, name: bool = False) -> None:
        if weight <= 0:
            return
        score[path] += weight
        why[path].append((weight, reason))
        if name:
            named.add(path)

    # 1. traceback frames and written paths
    inside = [(f, fn, view.resolve_path(f)) for f, fn in sig.frames]
    inside = [(f, fn, hits) for f, fn, hits in inside if hits]
    frame_best: dict[str, float] = {}
    for i, (_, fn, hits) in enumerate(inside):
        last = i == len(inside) - 1
        depth = (i + 1) / len(inside)  # later frames are closer to the fault
        weight = W_FRAME_LAST if last else W_FRAME * (0.5 + 0.5 * depth)
        for path in hits:
            # one file met in many frames counts once (plus a little), not once per frame
            extra = 0.15 * weight if path in frame_best else weight
            frame_best[path] = frame_best.get(path, 0.0) + extra
            why[path].append((extra, f"traceback frame{f' in {fn}' if fn else ''}"))
    for path, weight in frame_best.items():
        score[path] += weight
    for written, weight in sig.paths:
        hits = view.resolve_path(written)
        for path in hits:
            add(path, W_PATH * weight / 2 / len(hits), f"path `{written}` in the task", name=True)
    for written in dict.fromkeys(sig.module_paths):
        _resolve_module_path(view, written, add)
    for route in sig.routes:
        _resolve_route(view, route, add)

    # 2. dotted module paths and Class.member pairs
    names: set[str] = set(sig.idents)
    for dotted in sig.dotted:
        names.update(dotted.split("."))
    defs = view.definitions(sorted(names))
    class_files: dict[str, set[str]] = defaultdict(set)
    for name, rows in defs.items():
        for path, kind, _ in rows:
            if kind == "class":
                class_files[name].add(path)
    quals: dict[str, set[str]] = defaultdict(set)
    for rows in defs.values():
        for path, kind, qual in rows:
            quals[qual].add(path)
    seen_dotted: set[str] = set()
    for dotted in sig.dotted:
        if dotted in seen_dotted:
            continue
        seen_dotted.add(dotted)
        parts = dotted.split(".")
        resolved = False
        for k in range(len(parts), 1, -1):
            path = view.by_module.get(".".join(parts[:k]))
            if path is None:
                continue
            rest = parts[k:]
            resolved = True
            if not rest:
                add(path, W_MODULE * (0.5 if path.endswith("__init__.py") else 1.0), f"module `{dotted}` named", name=True)
            else:
                target = _follow(view, path, rest[0], defs)
                if target:
                    add(target, W_MODULE, f"`{dotted}` defined here")
                else:
                    add(path, W_MODULE * 0.4, f"module of `{dotted}`")
            break
        if resolved:
            continue
        _resolve_words(view, parts, defs, add, dotted)
        for a, b in zip(parts, parts[1:]):
            hits = quals.get(f"{a}.{b}", set()) - {p for p in quals.get(f"{a}.{b}", set()) if view.is_test(p)}
            if hits and len(hits) <= 5:
                for path in hits:
                    add(path, W_QUAL / len(hits) ** 0.5, f"`{a}.{b}` defined here")

    # 3. identifiers matching definitions, and file names
    symbol_hits: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for word, weight in sig.idents.items():
        rows = [r for r in defs.get(word, []) if not view.is_test(r[0])]
        per_file: dict[str, float] = {}
        for path, kind, _ in rows:
            per_file[path] = max(per_file.get(path, 0.0), KIND_FACTOR.get(kind, 0.5))
        if per_file and len(per_file) <= 40:
            idf = 1.0 / len(per_file) ** 0.8
            for path, kind_factor in per_file.items():
                symbol_hits[path].append((W_SYMBOL * weight * idf * kind_factor, f"defines `{word}`"))
        stems = _files_named(view, word, sig.in_traces_only)
        if stems and len(stems) <= 10:
            for path in stems:
                add(path, W_STEM * min(weight, 2.0) / len(stems) ** 0.8, f"file named `{word}`", name=len(stems) == 1)
    for path, found in symbol_hits.items():
        # each further matched symbol adds less: a big file defining many named things must not win by bulk
        for i, (weight, reason) in enumerate(sorted(found, key=lambda f: -f[0])):
            add(path, weight * SYMBOL_DECAY ** i, reason)

    # 4. full text: the whole text, and the title alone (the report's one-line summary)
    # (inflected words of the whole text reach their stems; the title's few words are taken as written, and those
    # the code never writes as they are reach their stems in a lighter pass of their own: `coloring` -> color*,
    # while `formatting`, written in a formatting library, stays itself)
    for words, weight, stems in ((sig.words, W_BM25, STEM_PREFIXES), (sig.title_words, W_BM25_TITLE, False),
                                 (sig.title_words, W_BM25_TITLE_STEM, "only-absent")):
        ranked = view.bm25(words, 60, stems=stems) if weight else []
        if ranked:
            top = ranked[0][1] or 1.0
            for path, s in ranked:
                add(path, weight * s / top, "full-text match")

    # 4b. quoted text (a pasted message, a usage line) found verbatim in a few files
    _quoted_evidence(view, sig.quoted, add)
    history_evidence(view, sig.words, add)  # 4c. files past commits like this task changed (search.history)

    # the command line: its options, exit codes and environment are read by the program's `main`
    if sig.cli:
        entries = view.entry_points()
        if 0 < len(entries) <= MAX_ENTRY_FILES:
            for path in entries:
                add(path, W_ENTRY / len(entries), "the program's entry point (the title is about its command line)")

    # 5. working state
    for path in changed:
        if path in view.files and not view.is_test(path):
            add(path, W_CHANGED, "changed in the working tree")
    for path in claimed:
        for hit in view.resolve_path(path) if path in view.files or "/" in path else []:
            add(hit, W_CLAIMED, "claimed by this session")
    if module:
        prefix = module.replace(".", "/").strip("/") + "/"
        for path in list(score):
            if path.startswith(prefix):
                add(path, 2.0, f"in module `{module}`")

    cochange_evidence(view, [(p, score[p]) for p in _seeds(view, score)], add)  # files changing with the best
    _lend_to_neighbours(view, score, add)
    code_named = {w: v for w, v in sig.idents.items() if w in sig.code_like}  # never a capitalised prose word
    _lend_to_overriders(view, score, code_named, defs, add)
    _lend_to_declarations(view, score, add)
    _lend_to_entry_points(view, score, add)
    _lend_to_siblings(view, score, code_named, add)

    aside = _unnamed_modules(view, sig)
    trap_factor = traps.demotions(view, sig, named)
    for path in list(score):
        if view.is_test(path):
            score[path] *= TEST_FACTOR
        elif (trapped := trap_factor(path)) < 1.0:
            # amalgamated copies, generated names, tool scripts in another language (and among examples or docs)
            score[path] *= trapped * (NONPRODUCT_FACTOR if is_nonproduct_path(path) else 1.0)
        elif (_GENERATED.search(path) or path in view.generated) and path not in named:
            score[path] *= GENERATED_FACTOR  # numbered migrations and the like: data, rarely the fix
        elif path not in named and is_nonproduct_path(path):
            score[path] *= NONPRODUCT_FACTOR  # examples, docs, benchmarks, build configuration
        elif aside and path not in named and any(path.startswith(folder + "/") for folder in aside):
            score[path] *= NESTED_FACTOR  # a tool or contrib module beside the product, and the text is not about it
    traps.lend(view, _seeds(view, score), score, add)  # to the copy, forward header, build script serving them
    order = sorted(score, key=lambda p: (-score[p], p))[:limit]
    hits = []
    for path in order:
        reasons = []
        for _, reason in sorted(why[path], key=lambda r: -r[0]):
            if reason not in reasons:
                reasons.append(reason)
        hits.append(FileHit(path, round(score[path], 4), reasons[:3]))
    modules: dict[str, float] = defaultdict(float)
    for hit in hits:
        modules[_module_of(view, hit.path)] += hit.score
    return Localization(hits, sorted(modules.items(), key=lambda kv: (-kv[1], kv[0])))


def _seeds(view: CodeView, score: dict[str, float]) -> list[str]:
    """The best few files that lend their neighbours a share: product code only (tests, examples,
    scripts and docs are demoted after lending, so they must not lend on their raw score)."""
    ranked = sorted(score, key=lambda p: (-score[p], p))
    return [p for p in ranked if not view.is_test(p) and not is_nonproduct_path(p)][:NEIGHBOUR_SEEDS]


def _unnamed_modules(view: CodeView, sig: Signals) -> list[str]:
    """The folders of the repository's separate inner modules that the text does not name: a report
    about the product's code does not mention the tool shipped beside it (`goctl`), one about the tool does."""
    if not view.nested:
        return []
    words = set(sig.words) | {w.lower() for w in sig.idents}
    for path in (*(p for p, _ in sig.paths), *sig.module_paths, *(f for f, _ in sig.frames)):
        words.update(path.lower().split("/"))
    return [folder for folder, names in view.nested.items() if not words & set(names)]


def _quoted_evidence(view: CodeView, quoted: list[tuple[str, ...]], add) -> None:
    """Each window of a quoted text's words is looked up as a phrase; a file holding windows that
    few files hold gets evidence ``sum(1 / files)``, its weight growing linearly to ``W_QUOTE`` at ``QUOTE_FULL``.
    The reason shows the longest stretch of a quote the file holds (overlapping matched windows)."""
    if not W_QUOTE:
        return
    looked: dict[tuple[str, ...], list[str]] = {}
    evidence: dict[str, float] = defaultdict(float)
    held: dict[str, list[tuple[int, int, int]]] = defaultdict(list)  # file -> (quote, start, end) of its windows
    for q, words in enumerate(quoted):
        for start, window in phrase_windows(words):
            again = window in looked  # a window quoted twice counts once
            if not again:
                if len(looked) >= QUOTE_MAX_QUERIES:
                    break
                looked[window] = view.phrase_files(tokens(" ".join(window)), QUOTE_MAX_FILES + 1)
            files = looked[window]
            if not files or len(files) > QUOTE_MAX_FILES:
                continue
            strength = 0.0 if again else QUOTE_OPTION if window[0].startswith("--") else 1.0
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
        add(path, W_QUOTE * min(found, QUOTE_FULL) / QUOTE_FULL, f"quoted text `{shown}` found here")


def _lend_to_neighbours(view: CodeView, score: dict[str, float], add) -> None:
    """The best few files lend a share of their score to their neighbours: files they import or
    that import them (a Go import reaches every file of the package), and their header/source twin.

    A fix that changes a function often changes its caller, its declaration or a sibling in the
    same package; the share stays well below the seed's own score, so a neighbour ranks just under
    the files the text really points to, ahead of files that only share words with it.
    """
    seeds = _seeds(view, score)
    if not seeds:
        return
    forward, backward = view.import_graph()
    lent: dict[str, tuple[float, str]] = {}

    def lend(path: str, weight: float, reason: str) -> None:
        if path != seed and path in view.files and not view.is_test(path) and weight > lent.get(path, (0.0, ""))[0]:
            lent[path] = (weight, reason)

    for seed in seeds:
        base = score[seed]
        near = (forward.get(seed, set()) | backward.get(seed, set())) - {seed}
        if len(near) <= MAX_NEIGHBOURS:
            for path in near:
                lend(path, W_IMPORT * base, f"imports or is imported by `{seed}`")
        stem, ext = posixpath.splitext(seed)
        if ext in _C_FAMILY:
            name = posixpath.basename(stem)
            twins = [p for p in view.by_stem.get(name.lower(), []) if p != seed and p.endswith(_C_FAMILY)
                     and (p.endswith(".h") or p.endswith(".hpp")) != (ext in (".h", ".hpp", ".hh"))]
            if 0 < len(twins) <= 2:
                for path in twins:
                    lend(path, W_TWIN * base, f"header/source twin of `{seed}`")
    for path, (weight, reason) in lent.items():
        add(path, weight, reason)


def _lend_to_overriders(view: CodeView, score: dict[str, float], idents: dict[str, float], defs: dict, add) -> None:
    """Files whose class extends (or implements) the class of one of the best few files, or that it
    extends, and that define a method the text names which that file defines too, get a share of its
    score: the subclass, delegate or implementation that must change with it
    (`JsonParser.getNumberType()` -> `JsonParserDelegate extends JsonParser`). The best files lend
    nothing to each other."""
    seeds = _seeds(view, score)
    if not seeds:
        return
    forward, backward = view.import_graph()
    callable_kinds = ("function", "method", "decl")
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        near = (forward.get(seed, set()) | backward.get(seed, set())) - {seed} - set(seeds)
        for word, weight in idents.items():
            if weight < MIN_METHOD_CODENESS:
                continue
            definers = {p for p, kind, _ in defs.get(word, ()) if kind in callable_kinds and not view.is_test(p)}
            if seed not in definers or len(definers) > MAX_OVERRIDERS + 1:
                continue  # `size`, `print`: defined all over, no sign of one method and its overrides
            for path in sorted(definers & near):
                share = W_OVERRIDE * score[seed]
                if share > lent.get(path, (0.0, ""))[0] and _extends(view, path, seed):
                    lent[path] = (share, f"also defines `{word}` of `{seed}`")
    for path, (weight, reason) in lent.items():
        add(path, weight, reason)


def _type_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


def _extends(view: CodeView, a: str, b: str) -> bool:
    """Whether a class header of one file names the other's type (`extends B`, `implements B`):
    the bare type names a file's headers record among its imports."""
    return _type_name(b) in view.imports_of(a) or _type_name(a) in view.imports_of(b)


W_SIBLING = 0.3  # share of the seed's score for a sibling subclass using the same named method
MAX_SIBLINGS = 8  # a base class with more subclasses than this has too many to follow
MAX_USERS = 8  # a named identifier written in more files than this is too common to follow
MAX_BASE_IMPORTERS = 100  # a base imported by more files than this is not followed (and not read through)


def _lend_to_siblings(view: CodeView, score: dict[str, float], idents: dict[str, float], add) -> None:
    """Subclasses of the same base as one of the best files (`extends ParserBase` both) whose code also
    writes a code-like name the text names and that file writes (`usesPadding()`) get a share of its
    score: a fix to how one parser calls a method is repeated in its sibling parsers."""
    seeds = _seeds(view, score)
    if not seeds:
        return
    forward, backward = view.import_graph()
    names = [w for w, weight in idents.items() if weight >= MIN_METHOD_CODENESS]
    users: dict[str, set[str]] = {}
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        own = view.imports_of(seed)
        for base in sorted(forward.get(seed, ())):
            if _type_name(base) not in own or len(backward.get(base, ())) > MAX_BASE_IMPORTERS:
                continue  # imported, not extended; or a base imported all over
            siblings = [p for p in sorted(backward.get(base, ())) if p != seed and p not in seeds
                        and not view.is_test(p) and _type_name(base) in view.imports_of(p)]
            if not siblings or len(siblings) > MAX_SIBLINGS:
                continue
            for word in names:
                if word not in users:
                    users[word] = set(view.files_writing(word, MAX_USERS + 1))
                found = users[word]
                if seed not in found or len(found) > MAX_USERS:
                    continue
                for path in siblings:
                    share = W_SIBLING * score[seed]
                    if path in found and share > lent.get(path, (0.0, ""))[0]:
                        lent[path] = (share, f"like `{seed}` extends `{_type_name(base)}` and writes `{word}`")
    for path, (weight, reason) in lent.items():
        add(path, weight, reason)


W_ENTRY_SHARE = 0.12  # share of each best file it imports for a JavaScript entry point (a file nothing imports)


def _lend_to_entry_points(view: CodeView, score: dict[str, float], add) -> None:
    """A JavaScript file that nothing imports is an entry point (a request handler, a command, a page):
    the best files it imports lend it a further share each, as a feature in a module reaches the
    user through the entry point that parses the option and passes it on."""
    seeds = [p for p in _seeds(view, score) if p.endswith(_JS_EXTS)]
    if not seeds:
        return
    forward, backward = view.import_graph()
    shares: dict[str, float] = defaultdict(float)
    for seed in seeds:
        importers = backward.get(seed, set())
        if len(importers) > MAX_NEIGHBOURS:
            continue
        for path in importers:
            if path.endswith(_JS_EXTS) and not backward.get(path) and not view.is_test(path) \
                    and not is_nonproduct_path(path) and path not in seeds:
                shares[path] += W_ENTRY_SHARE * score[seed]
    for path, weight in shares.items():
        add(path, weight, "entry point importing the best files")


def declaration_twins(files, path: str) -> list[str]:
    """The files of ``files`` that declare or are declared by ``path``, beside it: `x.js` <-> `x.d.ts`,
    and one declaration in its other module flavours (`index.d.ts` <-> `index.d.cts`, `index.d.mts`)."""
    for ext in _DECLARATION_EXTS:
        if path.endswith(ext):
            base = path[: -len(ext)]
            return [base + e for e in (*_DECLARATION_EXTS, *_DECLARED_EXTS) if base + e != path and base + e in files]
    base, ext = posixpath.splitext(path)
    if ext in _DECLARED_EXTS:
        return [base + e for e in _DECLARATION_EXTS if base + e in files]
    return []


def _lend_to_declarations(view: CodeView, score: dict[str, float], add) -> None:
    """The best few files lend their declaration twins a share, as a C source its header: a change to
    what a JavaScript module exports changes the `.d.ts` beside it (its twin, or the one of its folder
    it imports types from), and each flavour of a declaration."""
    seeds = _seeds(view, score)
    forward, _ = view.import_graph()
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        folder = posixpath.dirname(seed)
        # and the declarations beside it that it takes its types from (`@param {import("./types").Options}`)
        beside = [p for p in sorted(forward.get(seed, ()))
                  if p.endswith(_DECLARATION_EXTS) and posixpath.dirname(p) == folder]
        for path in declaration_twins(view.files, seed) + beside:
            share = W_TWIN * score[seed]
            if not view.is_test(path) and share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, f"declaration twin of `{seed}`")
    for path, (weight, reason) in lent.items():
        add(path, weight, reason)


def _resolve_route(view: CodeView, route: str, add) -> None:
    """A link's path that ends in the words of one or two modules names them (`api/pin` -> `api/pin.js`,
    `api/user/index.ts`): how file-routed services (serverless functions, page routers) map a URL to code."""
    modules, _ = view.module_keys()
    words = route.lower().split("/")
    for i in range(len(words) - 1):  # at least two words
        files = [p for p in modules.get("/".join(words[i:]), []) if not view.is_test(p)]
        if files and len(files) <= 2:
            for path in files:
                add(path, W_ROUTE / len(files), f"route `/{route}` of a link in the task")
            return


def _resolve_module_path(view: CodeView, written: str, add) -> None:
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
                add(path, W_MODULE * 0.8 / len(files), f"module `{written}` named", name=len(files) == 1)
            return
        folder = folders.get(key)
        if folder and len(folder) <= 40:
            for path in folder:
                add(path, W_MODULE * 0.5 / len(folder) ** 0.5, f"package `{written}` named")
            return


def _resolve_words(view: CodeView, parts: list[str], defs: dict, add, written: str) -> bool:
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
                    add(path, W_MODULE / len(definers) ** 0.5, f"`{written}` defined here")
                return True
        if rest and k >= 2:
            # the name lives elsewhere and is re-exported here (`pub use`, `export * from`): its few definers
            last = [p for p, kind, _ in defs.get(parts[-1], ()) if kind in ("class", "function", "macro")
                    and not view.is_test(p) and not p.endswith((".py", ".pyi"))]
            if 0 < len(set(last)) <= 2:
                for path in sorted(set(last)):
                    add(path, W_MODULE * 0.8 / len(set(last)), f"`{written}` defined here")
        if k >= 2 and files and len(files) <= 3:
            for path in files:
                add(path, W_MODULE * (0.4 if rest else 0.8) / len(files), f"module `{written}` named", name=not rest)
            return True
        if rest and k >= 2:
            return True
    return False


def _follow(view: CodeView, path: str, name: str, defs: dict) -> str | None:
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
