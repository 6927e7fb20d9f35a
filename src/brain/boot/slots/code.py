"""Code for this task: the ranked functions, and the source of the best ones, with line numbers.

A task boot spends its budget where the evidence is: after the ranked files, one short
list of the definitions the task is about (``path::Qualified.name``, line range, why),
then the source of the top ones, each its own part so the packer keeps what fits and
names the rest. A definition is shown whole when it is small; a large one shows its
signature and the lines the evidence points to (traceback lines, call sites followed,
lines naming the task's identifiers), gaps marked. Every line carries its number, so an
agent can edit without opening the file first.

The ranking (``brain.search.rank_functions``) is kept in the boot's memo: the cards slot
cuts cards to what it touches, and ``brain boot --json`` lists it as ``functions``.
"""

from __future__ import annotations

import math
import re

from ...lazyre import lazy
from ...tokens import estimate_tokens
from ..call import current_memo
from ..parts import Part

__all__ = ["collect", "ranked_for", "code_view_for", "functions_json", "render_code", "excerpt_lines", "evidence_line",
           "file_excerpt_lines",
           "STRENGTH_TAG", "LISTED", "MAX_SHOWN",
           "WHOLE_LINES", "BIG_CLASS_LINES"]

LISTED = 10          # definitions named in the list (the JSON has `search.boot_functions`)
MAX_SHOWN = 10        # definitions whose source is shown
NEXT_SEEDS = 3       # the files of this many top functions lead the "read next" files
NEXT_FILES = 10      # files their imports lead to, named after the ranked functions (breadth-first, two hops)
WHOLE_LINES = 120    # a definition up to this many lines is shown whole (when its tokens fit)
PART_TOKENS = 2000   # most one definition's source may cost; larger ones are excerpted
CONTEXT = 2          # lines kept around each line the evidence points to
EXCERPT_LINES = 45   # most lines of an excerpt (signature included)
BIG_CLASS_LINES = 200  # a class longer than this gets no source (its methods are ranked on their own)
MIN_RELATIVE = 0.2   # a definition scoring under this share of the best one gets no source
_FENCE = {".py": "python", ".pyi": "python", ".ts": "ts", ".tsx": "tsx", ".js": "js", ".jsx": "jsx", ".mjs": "js",
          ".cjs": "js", ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
          ".hpp": "cpp", ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".cs": "csharp", ".swift": "swift"}


def ranked_for(brain, request):
    """(file ranking, ranked definitions) for this boot, computed once and kept in the boot's memo."""
    memo = current_memo()
    if memo is not None and "ranking" in memo:
        return memo["ranking"]
    found = (None, [])
    if request.task and request.task.strip() and brain.settings.get("search.enabled"):
        from ...search.rank_functions import locate_functions

        try:
            module = None if request.module_inferred else request.module
            # the view comes after the file ranking's refresh of the index (shared with it: service.boot_code_view)
            found = locate_functions(brain, request.task, module=module, session=request.session,
                                     limit=brain.settings.get("search.boot_functions") or 20)
        except Exception as exc:  # derived help: a broken index must never cost the agent its boot
            from ...workspace import _debug

            _debug("function localization failed: %s", exc)
            found = (None, [])
    if memo is not None:
        memo["ranking"] = found
        memo["functions"] = found[1]
    return found


def code_view_for(brain):
    """One read-only view of the code tables per boot (loading it reads every file row)."""
    from ...search.service import boot_code_view

    return boot_code_view(brain.index)


def _task_words(task: str) -> list[str]:
    """Code-like identifiers of the task (the words an excerpt keeps the lines of)."""
    from ...search.locate import extract_signals

    sig = extract_signals(task)
    return sorted(w for w, weight in sig.idents.items() if weight >= 1.0 and len(w) > 3)


def excerpt_lines(lines: list[str], hit, words: list[str]) -> list[int]:
    """The line numbers an excerpt of a large definition keeps: its signature, then the evidence's lines."""
    start, end = hit.start, hit.end
    head_end = max(start, (hit.body_start or start + 1) - 1)
    keep = set(range(start, min(head_end, end) + 1))
    marks = [n for n in hit.lines if start <= n <= end]
    if words:
        pattern = re.compile(r"(?<![\w])(?:" + "|".join(re.escape(w) for w in words[:60]) + r")(?![\w])")
        for n in range(head_end + 1, end + 1):
            if n - 1 < len(lines) and pattern.search(lines[n - 1]):
                marks.append(n)
    budget = EXCERPT_LINES - len(keep)
    for n in sorted(set(marks), key=lambda n: (n not in hit.lines, n)):
        window = [m for m in range(n - CONTEXT, n + CONTEXT + 1) if start <= m <= end and m not in keep]
        if len(window) > budget:
            break
        keep.update(window)
        budget -= len(window)
    if len(keep) <= len(range(start, min(head_end, end) + 1)):
        # nothing pointed inside: the first lines of the body say what it does
        keep.update(range(head_end + 1, min(end, head_end + 12) + 1))
    return sorted(keep)


def render_code(path: str, lines: list[str], numbers: list[int]) -> str:
    """A fenced block of the given lines, each prefixed with its number; a gap is one `⋮` line."""
    fence = _FENCE.get(path[path.rfind("."):].lower() if "." in path else "", "")
    width = len(str(numbers[-1])) if numbers else 1
    out = [f"```{fence}"]
    previous = None
    for n in numbers:
        if previous is not None and n != previous + 1:
            out.append(" " * width + " ⋮")
        out.append(f"{n:>{width}} {lines[n - 1] if n - 1 < len(lines) else ''}".rstrip())
        previous = n
    out.append("```")
    return "\n".join(out)


def _read_lines(brain, path: str, cache: dict) -> list[str] | None:
    if path not in cache:
        cache[path] = None
        try:
            root = brain.repo.resolve()
            full = (root / path).resolve()
            if full.is_relative_to(root):  # a symlink leading out of the repository is not the task's code
                cache[path] = full.read_text(encoding="utf-8", errors="replace").splitlines()
        except (OSError, ValueError):
            pass
    return cache[path]


# how strong each listed definition's evidence is (``rank_functions.FN_STRENGTH``): the tag before it, and the
# line saying what the best one rests on, so an agent knows when to read and when to explore first
STRENGTH_TAG = {"frame": "frame", "named": "named", "call": "call graph", "near": "beside", "text": "text"}
STRENGTH_LINE = {
    "frame": "a traceback frame points into `{key}`: start there",
    "named": "the task names `{key}`",
    "call": "`{key}` calls or is called by a definition the task names",
    "near": "`{key}` sits beside definitions the task points to (their class, a twin, a caller)",
    "text": "text match only: no traceback frame or name of the task points at a definition; explore before "
            "trusting the order",
}


def evidence_line(hits) -> str:
    """The line on the best definition's evidence, and how many of the listed ones each kind holds."""
    listed = hits[:LISTED]
    if not listed:
        return ""
    counts = {kind: sum(h.evidence == kind for h in listed) for kind in STRENGTH_TAG}
    spread = ", ".join(f"{n} {STRENGTH_TAG[k]}" for k, n in counts.items() if n)
    return (f"Evidence: {STRENGTH_LINE.get(listed[0].evidence, STRENGTH_LINE['text']).format(key=listed[0].key)} "
            f"(the {len(listed)} listed: {spread}).")


def _list_text(hits) -> str:
    lines = [evidence_line(hits)]
    for i, hit in enumerate(hits[:LISTED], 1):
        why = "; ".join(hit.reasons)
        lines.append(f"{i}. [{STRENGTH_TAG.get(hit.evidence, 'text')}] `{hit.key}` ({hit.kind}, lines {hit.start}-{hit.end})"
                     + (f": {why}" if why else ""))
    return "\n".join(lines)


def collect(brain, request) -> list[Part]:
    if not (request.task and request.task.strip()):
        return []
    found, hits = ranked_for(brain, request)
    if not hits:
        return []
    listed = _list_text(hits)
    nearby = _read_next(brain, found, hits)
    if nearby:
        listed += "\n\nRead next (files the top functions' files import): " + ", ".join(f"`{p}`" for p in nearby)
    parts = [Part("code", "ranked functions", "Functions for this task (ranked)", listed,
                  "brain boot --task-file TASK --json (functions)",
                  files=tuple(dict.fromkeys([h.path for h in hits[:LISTED]] + nearby)))]
    words = _task_words(request.task)
    cache: dict = {}
    spend = brain.settings.get("boot.code_tokens")
    best = _best_file_part(brain, found, hits, request.task, cache, spend)
    if best is not None:
        parts.append(best)
        spend -= estimate_tokens(best.text) + 30
    top = hits[0].score or 1.0
    shown: list = []
    within: dict[str, str] = {}
    for hit in hits[:LISTED]:
        if len(shown) >= MAX_SHOWN or spend <= 0:
            break
        if hit.score < MIN_RELATIVE * top:
            break
        outer = next((s for s in shown if s.path == hit.path and s.start <= hit.start and hit.end <= s.end and s.whole), None)
        if outer is not None:
            within[hit.key] = outer.key  # already shown whole inside an enclosing definition
            continue
        if hit.kind == "class" and hit.end - hit.start + 1 > BIG_CLASS_LINES:
            continue  # a big class's excerpt says little a card does not: its ranked methods get the room
        lines = _read_lines(brain, hit.path, cache)
        if not lines or hit.start > len(lines):
            continue
        end = min(hit.end, len(lines))
        numbers = list(range(hit.start, end + 1))
        whole = len(numbers) <= WHOLE_LINES
        text = render_code(hit.path, lines, numbers) if whole else ""
        tokens = estimate_tokens(text) if whole else 0
        if not whole or tokens > min(PART_TOKENS, spend):
            whole = False
            text = render_code(hit.path, lines, excerpt_lines(lines, hit, words))
            tokens = estimate_tokens(text)
        cost = tokens + 30
        if cost > spend:
            continue
        spend -= cost
        how = "whole" if whole else "excerpt: the signature and the lines the evidence points to"
        title = f"`{hit.key}` (lines {hit.start}-{hit.end}, {how})"
        parts.append(Part("code", hit.key, title, text, f"{hit.path}:{hit.start}-{hit.end}", files=(hit.path,)))
        shown.append(_Shown(hit.key, hit.path, hit.start, hit.end, whole))
    memo = current_memo()
    if memo is not None:
        memo["code_shown"] = {s.key: ("whole" if s.whole else "excerpt") for s in shown}
        memo["code_within"] = within
    return parts


def _best_file_part(brain, found, hits, task: str, cache: dict, spend: int) -> Part | None:
    """The best-ranked file's lines the task's words are on, when the code slot would show none of its code.

    The file ranking's first file is most often the fix's (Acc@1 is the ranking's best figure), yet the
    function ranking can leave it out: a file with no definitions the index parses (a `builtin.jq`, a
    file of `macro_rules!`, methods assigned to an object), or definitions that match the text less than
    other files' do. Then the agent reads the best file's code first here: the lines naming the task's
    identifiers (the more and the rarer, the earlier), with their neighbours, gaps marked."""
    if found is None or not found.paths or spend <= 0:
        return None
    path = found.paths[0]
    shown = [h for h in hits[:MAX_SHOWN] if h.score >= MIN_RELATIVE * (hits[0].score or 1.0)]
    if any(h.path == path for h in shown):
        return None
    lines = _read_lines(brain, path, cache)
    if not lines:
        return None
    numbers = file_excerpt_lines(lines, _weighted_words(task))
    if not numbers:
        return None
    text = render_code(path, lines, numbers)
    while numbers and estimate_tokens(text) + 30 > min(PART_TOKENS, spend):
        numbers = numbers[: len(numbers) * 3 // 4]
        text = render_code(path, lines, numbers) if numbers else ""
    if not numbers:
        return None
    title = f"`{path}` (the best-ranked file, no ranked definition of it shown: the lines naming the task's words)"
    return Part("code", f"{path}::(lines)", title, text, f"{path}:{numbers[0]}-{numbers[-1]}", files=(path,))


def _weighted_words(task: str) -> dict[str, float]:
    """The task's identifiers worth finding in code (``extract_signals``: code-like, titled, repeated weigh more)."""
    from ...search.locate import extract_signals

    return {w: weight for w, weight in extract_signals(task).idents.items() if weight >= 1.0 and len(w) >= 3}


_COMMENT = lazy(r"^\s*(?://|/\*|\*|#(?!\[)|--|;)")


def file_excerpt_lines(lines: list[str], words: dict[str, float], most: int = EXCERPT_LINES) -> list[int]:
    """Line numbers of a whole file's excerpt: the lines holding the most of ``words`` (each word counted once
    a line, by its weight and by how few of the file's lines hold it; a comment line counts half), best first,
    each with ``CONTEXT`` lines around it, until ``most`` lines; none when no line holds one."""
    if not words:
        return []
    pattern = re.compile(r"(?<![\w])(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)[:60])
                         + r")(?![\w])")
    held = {n: set(pattern.findall(line)) for n, line in enumerate(lines, 1)}
    held = {n: found for n, found in held.items() if found}
    if not held:
        return []
    spread: dict[str, int] = {}
    for found in held.values():
        for w in found:
            spread[w] = spread.get(w, 0) + 1
    rare = {w: words.get(w, 0.0) * math.log(1 + len(lines) / n) for w, n in spread.items()}
    scored = sorted((-sum(rare[w] for w in found) * (0.5 if _COMMENT.match(lines[n - 1]) else 1.0), n)
                    for n, found in held.items())
    keep: set[int] = set()
    for _, n in scored:
        window = [m for m in range(n - CONTEXT, n + CONTEXT + 1) if 1 <= m <= len(lines) and m not in keep]
        if len(keep) + len(window) > most:
            break
        keep.update(window)
    return sorted(keep)


def _read_next(brain, found, hits) -> list[str]:
    """Files past the ranked ones where the code leads: what the top functions' files import, nearest first."""
    from ...search.rank_functions import imported_files

    seeds = list(dict.fromkeys(h.path for h in hits))[:NEXT_SEEDS]
    known = [h.path for h in hits] + (list(found.paths) if found is not None else [])
    try:
        return imported_files(code_view_for(brain), seeds, hops=2, limit=NEXT_FILES, exclude=known)
    except Exception as exc:  # derived help: a broken index must never cost the agent its boot
        from ...workspace import _debug

        _debug("read-next files failed: %s", exc)
        return []


class _Shown:
    __slots__ = ("key", "path", "start", "end", "whole")

    def __init__(self, key: str, path: str, start: int, end: int, whole: bool) -> None:
        self.key, self.path, self.start, self.end, self.whole = key, path, start, end, whole


def functions_json(memo: dict, result) -> list[dict]:
    """The `functions` field of `brain boot --json`: each ranked definition, and how its code is in the text
    (``"whole"``, ``"excerpt"``, or None when it is not)."""
    included = {s["source"] for s in result.sections if s.get("slot") == "code"}
    shown = memo.get("code_shown", {})
    within = memo.get("code_within", {})
    out = []
    for hit in memo.get("functions") or []:
        entry = hit.to_dict()
        part = within.get(hit.key, hit.key)  # a nested definition is in the text with its enclosing one
        entry["code"] = ("whole" if part != hit.key else shown.get(hit.key)) if part in included else None
        out.append(entry)
    return out
