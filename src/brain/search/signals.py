"""What a task text says about code, before looking at any repository (pure).

``extract_signals`` reads paths, traceback frames (every language's shape, see ``traces``),
dotted names, identifiers (with how code-like each looks and whether the title writes it),
full-text query words, links and quoted messages out of a task text; the evidence modules
(``evidence/``) look them up in the repository.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from ..records import field, record
from .code import CODE_EXTENSIONS
from .commit_text import member_refs, strip_boilerplate, title_scopes
from .quotes import quoted_candidates
from .tokenize import STOPWORDS, tokens
from .traces import trace_frames
from ..lazyre import lazy

__all__ = ["Signals", "extract_signals", "url_routes", "MAX_TASK_CHARS", "PROSE_WORDS", "TEMPLATE_SENTENCES"]

MAX_TASK_CHARS = 60_000  # a huge task text is read at its head and tail (tracebacks end texts)

_EXT = "(?:" + "|".join(sorted((e[1:] for e in CODE_EXTENSIONS), key=lambda e: (-len(e), e))) + ")"
# path candidates are found in two linear steps (a run of path characters, then a check of its end),
# never by one nested pattern: those backtrack for minutes on inputs like "a/a/a/..."
_PATH_RUN = lazy(r"[\w.\-~/\\:]+")
_PATH_END = lazy(r"(?:^|[/\\])[\w\-.]*[\w\-]\." + _EXT + r"$")
_LINE_SUFFIX = lazy(r"(?::\d+)+$")
_FRAME = lazy(r"""File ["']([^"']+)["'], line (\d+)(?:, in ([\w<>.]+))?""")
_DOTTED = lazy(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w])")
_IDENT = lazy(r"(?<![\w.])[A-Za-z_]\w{2,}(?![\w])|(?<=\.)[A-Za-z_]\w{2,}(?![\w])")
# a link to a file in a repository keeps its path (`.../blob/<ref>/src/x.go#L12` -> `src/x.go`); any other
# address (images, other sites, issue links) is not about this code and its words only add noise
_URL = lazy(r"\bhttps?://[^\s()<>\[\]\"'`]{1,2000}")
_BLOB = lazy(r"/(?:blob|tree|raw)/[^/\s]+/([^\s#?]+)")


def _url_path(match: re.Match) -> str:
    blob = _BLOB.search(match.group())
    return f" {blob.group(1)} " if blob else " "


_ROUTE_WORD = lazy(r"[A-Za-z_][\w\-]{0,60}")


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
_MODULE_WORD = lazy(r"[A-Za-z_][\w\-.]{0,80}")
_HTML_COMMENT = lazy(r"<!--.*?-->", re.S)


def _phrase(words: str) -> str:
    """A fixed sentence as a pattern: its words in order, any short run of spaces or punctuation between."""
    # the words as `\w+` finds them, without compiling a pattern at import (the sentences are fixed text)
    runs = "".join(c if c.isalnum() or c == "_" else " " for c in words).split()
    return r"\b" + r"\W{1,4}".join(runs) + r"\b"


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
_TEMPLATE = lazy(
    "|".join([_phrase(s) for s in TEMPLATE_SENTENCES]
             + [r"\ba clear and concise description of [^.\n]{0,120}", r"\[e\.g\.[^\]\n]{0,60}\]",
                r"\b(?:go to|click on|scroll down to) '\.{3,4}'"]),
    re.I,
)
# the words each alternative of _TEMPLATE writes as they are (a sentence's words; the fixed parts of the three
# patterns): an ASCII text lacking one of each alternative's, in any case, holds no template text, and the
# costly pattern (1.5 ms to compile) is not applied. A text with other characters is always searched: under
# re.I a few of them match ASCII letters (the Kelvin sign, a long s, a dotless i)
_TEMPLATE_WORDS = tuple(tuple("".join(c if c.isalnum() or c == "_" else " " for c in s).split()) for s in TEMPLATE_SENTENCES) + (
    ("clear", "concise", "description"), ("[e.g.",), ("'...",))


def _may_hold_template(text: str) -> bool:
    if not text.isascii():
        return True
    low = text.lower()
    return any(all(word in low for word in words) for words in _TEMPLATE_WORDS)


_BACKTICK = lazy(r"`([^`\n]{1,120})`")
# CJK letters are word characters to `\w`: `但discov.EtcdConf中没有user` would read as one word, so the
# boundaries between CJK (and full-width punctuation) and ASCII word characters become spaces
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_CJK_EDGE = lazy(f"(?<=[A-Za-z0-9_])(?=[{_CJK}])|(?<=[{_CJK}])(?=[A-Za-z0-9_])")

# a title about the program's command line (an option such as `-e` or `--jsonargs`, its exit code, an
# environment variable it reads) points at the program's entry point: the file whose `main` reads them
_TITLE_OPTION = lazy(r"(?:^|(?<=[\s'\"`(\[]))(?:--?[A-Za-z][\w\-]*|--)(?=[\s'\"`)\],.:;!?]|$)")
_TITLE_CLI = lazy(r"\b(?:exit (?:code|status)|return code|env|environment variables?|env vars?|command[\s-]line)\b",
                        re.I)
# the text's other fixed patterns (compiled at first use, as every pattern here)
_CAMEL = lazy(r"[a-z][A-Z]")
_DIGIT = lazy(r"\d")
_DRIVE = lazy(r"^[A-Za-z]:(?=[/\\])")
_WORD2 = lazy(r"[A-Za-z_]\w+")
_WORD3 = lazy(r"[A-Za-z_]\w{2,}")
_CALLED = lazy(r"(?<!\w)([A-Za-z_]\w*)\s*\(")
_FILE_EXT = lazy(r"\." + _EXT + r"$")
_NUMBERED = lazy(r"(?<![\w])\d+_\w+")

@record
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
    scopes: list[str] = field(default_factory=list)  # areas a commit-style title's prefix names (`fix(router): ...`)
    one_line: bool = False  # the text is one line, a title alone (`fix wrapping of wide characters`): no report body


def _codeness(word: str, marked: bool) -> float:
    if marked:
        return 1.0
    inner = word.strip("_")
    if "_" in inner or _CAMEL.search(inner) or _DIGIT.search(inner):
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

    ``strip_urls`` (default: the shipped ``strip_urls`` param) drops the text's addresses. Inside a
    boot the answer is kept in the boot's memo: module inference, the files slot, the function
    ranking and the code slot's excerpts all read the same text, and extracting costs 2-4 ms of
    patterns each time. The callers only read the ``Signals`` they get (it is shared)."""
    if not text or not text.strip():
        return Signals()
    if strip_urls is None:
        from .weights import shipped_weights

        strip_urls = shipped_weights().params["strip_urls"]
    from ..boot.call import current_memo

    memo = current_memo()
    if memo is None:
        return _extract(text, bool(strip_urls))
    key = ("signals", text, bool(strip_urls))
    sig = memo.get(key)
    if sig is None:
        sig = memo[key] = _extract(text, bool(strip_urls))
    return sig


def _extract(text: str, strip_urls: bool) -> Signals:
    sig = Signals()
    text = _HTML_COMMENT.sub(" ", _clip(text))  # issue templates' hidden instructions are not the report
    if _may_hold_template(text):
        text = _TEMPLATE.sub(" ", text)  # nor their fixed questions
    if not text.isascii():  # (an ASCII text has no CJK edge: its pattern is costly to compile, 3 ms)
        text = _CJK_EDGE.sub(" ", text)
    text = strip_boilerplate(text)  # a commit message's trailers, merge line and pull-request numbers say nothing
    if not text.strip():
        return sig
    if strip_urls:
        sig.routes = url_routes(text)
        text = _URL.sub(_url_path, text)
    title = text.strip().split("\n", 1)[0]
    sig.one_line = "\n" not in text.strip()
    sig.scopes = title_scopes(title)
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
        path = _DRIVE.sub("", run).replace("\\", "/")
        if "/" not in path and path.count(".") > 1:
            continue  # a dotted name such as `pkg.mod.c`, handled as a dotted path
        sig.paths.append((path, 2.0 if match.start() < len(title) else 1.0))
    marked: set[str] = set()
    for match in _BACKTICK.finditer(text):
        marked.update(_WORD2.findall(match.group(1)))
    for match in _CALLED.finditer(text):
        marked.add(match.group(1))
    for match in _DOTTED.finditer(text.replace("::", ".")):  # Rust and C++ paths read as dotted names
        dotted = match.group(1)
        if not _FILE_EXT.search(dotted) and dotted.count(".") < 12:
            sig.dotted.append(dotted)
    for dotted in member_refs(text):  # `Chain#withConnectTimeout` is `Chain.withConnectTimeout`
        if dotted not in sig.dotted:
            sig.dotted.append(dotted)
    counts = Counter(m.group() for m in _IDENT.finditer(text))
    if unframed is not text:
        sig.in_traces_only = set(counts) - {m.group() for m in _IDENT.finditer(unframed)}
    in_title = set(_IDENT.findall(title)) | {m.group() for m in _WORD3.finditer(title)}
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
    for word in set(_NUMBERED.findall(text)):
        sig.idents.setdefault(word, 2.0 if word in title else 1.0)
    sig.cli = bool(_TITLE_OPTION.search(title) or _TITLE_CLI.search(title))
    sig.words = [w for w in tokens(text, stop=True) if w not in PROSE_WORDS]
    sig.title_words = [w for w in tokens(title, stop=True) if w not in PROSE_WORDS]
    sig.quoted = quoted_candidates(text)
    return sig
