"""Training corpus from real history: fix and feature commits of public repositories as localization tasks.

A task is one commit on a repository's first-parent history whose message reads as a fix or a feature:
its message (subject and body, trailers stripped; the issue numbers it closes kept apart) is the task
text, the non-test, non-doc source files it changed that already existed at its parent are the gold, and
the parent is the base commit to run the task on. Fields follow multilang-dev.jsonl (`instance_id`, `repo`,
`language`, `base_commit`, `problem_statement`, `gold_files`) so the same loaders read both.

Skipped: merges, root commits, reverts, releases and version bumps, docs-only, tests-only and
formatting-only commits (a whitespace-only diff, or a subject saying format/lint/style), commits changing
more than `--max-files` files, commits that only add files, and messages that read as neither a fix nor a
feature. Per repository the newest `--per-repo` eligible commits committed before `--before` are kept, so
the same mirrors and options give the same bytes even after the mirrors gain commits.

The repositories are listed in bench/corpus/repositories.json (owner/name, language, why chosen). None
may be reserved for independent checks (../shared/bench/reserved-repositories.txt beside the project, or
`--reserved FILE`) or be a development-set repository: the builder refuses the whole run, before reading
any mirror, when the list holds one (compared case-insensitively), and fails when the reserved list is
missing. Mirrors are bare git directories (`<owner>+<name>/repo`, as the search tool's `fetch` gives
them) in the folder `--mirrors` names; a repository without a mirror is reported and skipped.

    PYTHONPATH=<checkout>/src python bench/build_corpus.py --mirrors DIR [--out bench/corpus/out/corpus.jsonl]
        [--repo owner/name ...] [--language Go ...] [--per-repo 60] [--before 2024-01-01T00:00:00Z]
        [--max-files 20] [--reserved FILE]

The corpus is derived from fetched code: it is never committed (bench/corpus/out/ is ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # locbench and bench_heldout beside this script

import locbench  # noqa: E402
import reserved  # noqa: E402
from bench_heldout import SKIP_SUBJECT, message_text  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY_LIST = ROOT / "bench" / "corpus" / "repositories.json"
DEFAULT_RESERVED = reserved.DEFAULT_RESERVED
DEFAULT_OUT = ROOT / "bench" / "corpus" / "out" / "corpus.jsonl"
LANGUAGES = ("Python", "TypeScript", "JavaScript", "Go", "Rust", "Java", "C", "C++", "Kotlin", "C#", "Ruby", "PHP")
_REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.][A-Za-z0-9_.-]*$")

# a subject (or the issue it closes) reads as a fix or a feature
_FIX_OR_FEATURE = re.compile(
    r"\b(?:fix(?:e[sd]|ing)?|bug(?:fix)?s?|hotfix|regression|crash(?:es|ing)?|panic|leak|overflow|incorrect(?:ly)?"
    r"|wrong|broken|correct(?:s|ed|ly)?|prevent(?:s|ed)?|avoid(?:s|ed)?|handle[sd]?|feat(?:ure)?s?|add(?:s|ed)?"
    r"|support(?:s|ed)?|implement(?:s|ed)?|allow(?:s|ed)?|introduce[sd]?|enable[sd]?|new)\b", re.I)
_CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b\s*:?\s*(?:[\w.-]+/[\w.-]+)?#(\d+)", re.I)
_PULL_REQUEST = re.compile(r"\(#(\d+)\)\s*$")
_REVERT = re.compile(r"^revert\b|this reverts commit [0-9a-f]{7,}", re.I | re.M)
_VERSION_BUMP = re.compile(r"^(?:prepar\w* (?:for )?(?:the )?(?:release|v?\d)|(?:set|update|increment) version"
                           r"|(?:\w+ )?v?\d+\.\d+(?:\.\d+)*(?:[-.]\w+)?$)", re.I)
# cosmetic changes: a typo or spelling fix in a comment is no localization task
_COSMETIC = re.compile(r"\b(?:typos?|spelling|misspell\w*|grammar|whitespace|wording|code style)\b", re.I)
DOC_EXTENSIONS = (".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ".html", ".textile", ".pod", ".man")
DOC_FOLDERS = {"doc", "docs", "documentation", "man", "website", "site"}
MIN_TEXT = 15
MAX_TEXT = 20_000  # longer messages are squashed logs or pasted output, not a task's text
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


CorpusError = reserved.BenchRefusal  # one base for every refusal, so main maps them to one exit code
ReservedListMissing, RefusedRepositories = reserved.ReservedListMissing, reserved.RefusedRepositories
read_reserved, refuse_reserved = reserved.read_reserved, reserved.refuse_reserved


class BadRepositoryList(CorpusError):
    def __init__(self, path: Path, problem: str):
        self.path, self.problem = path, problem
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class Options:
    """What decides a corpus: the same mirrors and the same options give the same bytes."""

    before: str = "2024-01-01T00:00:00Z"
    per_repo: int = 60
    max_files: int = 20
    scan: int = 6000  # first-parent commits read per repository at most


def read_repository_list(path: Path = REPOSITORY_LIST) -> list[dict]:
    """The versioned list of repositories to mine, checked: owner/name, a known language, a reason, no repeats."""
    path = Path(path)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["repositories"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadRepositoryList(path, f"not a JSON object with a 'repositories' list ({type(exc).__name__})") from None
    seen = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise BadRepositoryList(path, f"entry {i} is not an object")
        repo, language, why = entry.get("repo"), entry.get("language"), entry.get("why")
        if not isinstance(repo, str) or not _REPO_NAME.match(repo):
            raise BadRepositoryList(path, f"entry {i}: 'repo' must be owner/name, got {repo!r}")
        if language not in LANGUAGES:
            raise BadRepositoryList(path, f"entry {i} ({repo}): unknown language {language!r}")
        if not isinstance(why, str) or not why.strip():
            raise BadRepositoryList(path, f"entry {i} ({repo}): 'why' (the reason it was chosen) is empty")
        if repo.lower() in seen:
            raise BadRepositoryList(path, f"entry {i}: {repo} is listed twice")
        seen.add(repo.lower())
    return entries


def _git(gd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(gd), *args], capture_output=True, text=True, errors="replace")


def is_doc_path(path: str) -> bool:
    parts = path.split("/")
    return parts[-1].lower().endswith(DOC_EXTENSIONS) or any(p.lower() in DOC_FOLDERS for p in parts[:-1])


def is_source_path(path: str) -> bool:
    """A file brain indexes as code, neither a test nor documentation."""
    from brain.search.code import CODE_EXTENSIONS, is_test_path

    return (os.path.splitext(path)[1].lower() in CODE_EXTENSIONS and not is_test_path(path)
            and not is_doc_path(path))


def first_parent_log(gd: Path, options: Options) -> list[dict]:
    """The first-parent history before the cut-off, newest first: sha, parents, date, message, changes."""
    from brain.search.code import is_test_path  # noqa: F401  (fail early when brain is not importable)

    out = _git(gd, "-c", "core.quotePath=false", "log", "--first-parent", f"--before={options.before}",
               f"-n{options.scan}", "--no-renames", "--name-status", "--format=%x00%H%x01%P%x01%cI%x01%B%x02", "HEAD")
    if out.returncode != 0:
        raise CorpusError(f"git log failed in {gd}: exit {out.returncode}")
    commits = []
    for chunk in out.stdout.split("\x00")[1:]:
        # the last separator is git's: a message (untrusted) may hold one too, a path cannot (git quotes it)
        head, _, names = chunk.rpartition("\x02")
        sha, parents, date, message = head.split("\x01", 3)
        changes = []
        for line in names.splitlines():
            status, _, path = line.partition("\t")
            if path:
                changes.append((status[:1], path))
        commits.append({"sha": sha, "parents": parents.split(), "date": date, "message": message, "changes": changes})
    return commits


def skip_reason(gd: Path, commit: dict, options: Options) -> str | None:
    """Why a commit is not a task (None when it is one): the first rule it fails."""
    if len(commit["parents"]) > 1:
        return "merge"
    if not commit["parents"]:
        return "root"
    message = commit["message"].strip()
    subject = message.splitlines()[0].strip() if message else ""
    if _REVERT.search(message):
        return "revert"
    if not subject or _VERSION_BUMP.search(subject) or re.match(r"^(release|bump)\b", subject, re.I):
        return "version"
    if SKIP_SUBJECT.search(subject) or _COSMETIC.search(subject):
        return "chore"
    paths = [p for _, p in commit["changes"]]
    if not paths:
        return "empty"
    if len(paths) > options.max_files:
        return "huge"
    if any(p.startswith('"') for p in paths):
        return "quoted-path"
    if all(is_doc_path(p) for p in paths):
        return "docs-only"
    from brain.search.code import is_test_path

    if all(is_test_path(p) or is_doc_path(p) for p in paths):
        return "tests-only"
    if not (_FIX_OR_FEATURE.search(subject) or _CLOSES.search(message)):
        return "not-fix-or-feature"
    gold = gold_files(commit)
    if not gold:
        return "new-files-only" if added_files(commit) else "no-source"
    text = task_text(message)
    if len(text) < MIN_TEXT:
        return "short-text"
    if len(text) > MAX_TEXT:
        return "long-text"
    # every source change is whitespace: formatting, whatever the subject says
    if _git(gd, "diff", "--quiet", "-w", "--ignore-blank-lines", commit["parents"][0], commit["sha"], "--",
            *gold).returncode == 0:
        return "formatting-only"
    return None


def gold_files(commit: dict) -> list[str]:
    """The changed source files the parent holds (modified or deleted), sorted."""
    return sorted({p for s, p in commit["changes"] if s in "MDT" and is_source_path(p)})


def added_files(commit: dict) -> list[str]:
    return sorted({p for s, p in commit["changes"] if s == "A" and is_source_path(p)})


def task_text(message: str) -> str:
    """The message without trailers and control characters (a cloned repository's message is untrusted)."""
    return message_text(_CONTROL.sub("", message))


def to_task(repo: str, language: str, commit: dict) -> dict:
    message = commit["message"].strip()
    subject = message.splitlines()[0]
    pull = _PULL_REQUEST.search(subject)
    return {"instance_id": f"{repo}@{commit['sha'][:12]}", "repo": repo, "language": language,
            "commit": commit["sha"], "base_commit": commit["parents"][0], "date": commit["date"],
            "problem_statement": task_text(message),
            "issues": sorted({int(n) for n in _CLOSES.findall(message)}),
            "pull_request": int(pull.group(1)) if pull else None,
            "gold_files": gold_files(commit), "added_files": added_files(commit)}


def select_tasks(gd: Path, repo: str, language: str, options: Options) -> tuple[list[dict], Counter]:
    """The newest ``options.per_repo`` eligible commits before the cut-off, and how many were skipped why."""
    tasks, skipped = [], Counter()
    for commit in first_parent_log(gd, options):
        reason = skip_reason(gd, commit, options)
        if reason:
            skipped[reason] += 1
            continue
        tasks.append(to_task(repo, language, commit))
        if len(tasks) >= options.per_repo:
            break
    return tasks, skipped


def find_mirror(mirrors: Path, repo: str) -> Path | None:
    try:
        return locbench.git_dir(mirrors, repo, "build_corpus")
    except SystemExit:  # locbench's way of saying there is none
        return None


def build(entries: list[dict], mirrors: Path, out: Path, options: Options, reserved_names: set[str],
          progress=print) -> dict:
    """Mine every listed repository with a mirror and write the corpus (JSONL, one task a line) atomically."""
    refuse_reserved([e["repo"] for e in entries], reserved_names)
    rows, per_repo, missing = [], {}, []
    for entry in sorted(entries, key=lambda e: e["repo"].lower()):
        repo, language = entry["repo"], entry["language"]
        gd = find_mirror(mirrors, repo)
        if gd is None:
            missing.append(repo)
            progress(f"  {repo:40} no mirror: skipped")
            continue
        tasks, skipped = select_tasks(gd, repo, language, options)
        notes = {"shallow": (gd / "shallow").is_file(), "no_history_before_cutoff": not tasks and not skipped}
        notes = {k: True for k, v in notes.items() if v}
        rows.extend(tasks)
        per_repo[repo] = {"language": language, "tasks": len(tasks), "skipped": dict(sorted(skipped.items())), **notes}
        progress(f"  {repo:40} {language:10} {len(tasks):4} tasks" + "".join(f"  ({k.replace('_', ' ')})" for k in notes))
    per_language = Counter()
    for info in per_repo.values():
        per_language[info["language"]] += info["tasks"]
    summary = {"options": asdict(options), "tasks": len(rows), "repositories": len(per_repo), "missing": missing,
               "per_language": {lang: per_language[lang] for lang in LANGUAGES if lang in per_language},
               "per_repo": per_repo}
    out.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(out, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
    _write_atomically(out.with_suffix(".summary.json"), json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def summary_table(summary: dict) -> str:
    lines = ["| repository | language | tasks |", "|---|---|---:|"]
    lines += [f"| {repo} | {info['language']} | {info['tasks']} |" for repo, info in summary["per_repo"].items()]
    lines += ["", "| language | repositories | tasks |", "|---|---:|---:|"]
    repos = Counter(info["language"] for info in summary["per_repo"].values())
    lines += [f"| {lang} | {repos[lang]} | {n} |" for lang, n in summary["per_language"].items()]
    lines.append(f"| all | {summary['repositories']} | {summary['tasks']} |")
    if summary["missing"]:
        lines.append(f"\nno mirror ({len(summary['missing'])}): {', '.join(summary['missing'])}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="folder of bare mirrors, <owner>+<name>/repo")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the corpus JSONL (a .summary.json beside it)")
    ap.add_argument("--repositories", type=Path, default=REPOSITORY_LIST, help="the repository list (JSON)")
    ap.add_argument("--reserved", type=Path, default=DEFAULT_RESERVED, help="reserved owner/name list to refuse")
    ap.add_argument("--repo", action="append", help="only these listed repositories (repeatable)")
    ap.add_argument("--language", action="append", choices=LANGUAGES, help="only these languages (repeatable)")
    ap.add_argument("--per-repo", type=int, default=Options.per_repo)
    ap.add_argument("--before", default=Options.before, help="commits committed before this date only")
    ap.add_argument("--max-files", type=int, default=Options.max_files, help="skip commits changing more files")
    args = ap.parse_args(argv)
    try:
        reserved_names = read_reserved(args.reserved)
        entries = read_repository_list(args.repositories)
        refuse_reserved([e["repo"] for e in entries] + (args.repo or []), reserved_names)
        if args.repo:
            listed = {e["repo"].lower(): e for e in entries}
            unknown = [r for r in args.repo if r.lower() not in listed]
            if unknown:
                raise BadRepositoryList(args.repositories, f"not listed (add it with its language): {', '.join(unknown)}")
            entries = [listed[r.lower()] for r in args.repo]
        if args.language:
            entries = [e for e in entries if e["language"] in args.language]
        if args.out.is_dir():
            raise CorpusError(f"--out {args.out} is a folder: give the corpus file's path (e.g. {args.out}/corpus.jsonl)")
        if args.per_repo < 1 or args.max_files < 1:
            raise CorpusError("--per-repo and --max-files must be at least 1")
        try:
            datetime.fromisoformat(args.before.replace("Z", "+00:00"))
        except ValueError:
            raise CorpusError(f"--before must be an ISO date (2024-01-01T00:00:00Z), got {args.before!r}") from None
        options = Options(before=args.before, per_repo=args.per_repo, max_files=args.max_files)
        print(f"build_corpus: {len(entries)} repositories, mirrors in {args.mirrors}", file=sys.stderr)
        summary = build(entries, args.mirrors, args.out, options, reserved_names,
                        progress=lambda line: print(line, file=sys.stderr, flush=True))
    except CorpusError as exc:
        print(f"build_corpus: {exc}", file=sys.stderr)
        return exc.exit_code
    print(summary_table(summary))
    print(f"\nwrote {summary['tasks']} tasks to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
