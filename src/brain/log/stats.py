"""`brain stats`: does the memory work? Figures measured from real client transcripts.

Per session and per task (a task runs from one prompt of the person to the next):
file-read tool calls, context tokens per model call (p50/p95/max), compactions; and
their trend over time, split at the moment brain was installed in the project.
Transcripts are streamed one line at a time and per-call figures go into bounded
quantile sketches, so memory stays flat however large the files are.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..gitsafe import project_repo
from ..trees import walk as walk_tree
from .quantiles import Sketch
from .transcripts import Counters, head_objects, read_transcript

__all__ = ["TaskStats", "SessionStats", "Report", "discover", "installed_at", "compute", "claude_slug",
           "render_text", "render_svg"]


@dataclass
class TaskStats:
    client: str
    session: str
    index: int
    prompt: str
    start: float | None = None
    reads: int = 0
    compact: int = 0
    compact_events: int = 0
    sketch: Sketch | None = field(default_factory=Sketch, repr=False)
    context: dict = field(default_factory=dict)

    @property
    def compactions(self) -> int:
        return max(self.compact, self.compact_events)

    def finish(self) -> None:
        if self.sketch is not None:
            self.context = self.sketch.summary()
            self.sketch = None

    def to_dict(self) -> dict:
        return {"client": self.client, "session": self.session, "task": self.index, "prompt": self.prompt,
                "start": self.start, "reads": self.reads, "compactions": self.compactions, "context": self.context}


@dataclass
class SessionStats:
    client: str
    session: str
    file: str
    cwd: str = ""
    start: float | None = None
    end: float | None = None
    tasks: int = 0
    reads: int = 0
    compactions: int = 0
    lines: int = 0
    skipped: int = 0
    context: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"client": self.client, "session": self.session, "file": self.file, "start": self.start,
                "end": self.end, "tasks": self.tasks, "reads": self.reads, "compactions": self.compactions,
                "context": self.context, "lines": self.lines, "skipped": self.skipped}


class _Bucket:
    """Running totals of a period or a day (bounded: one sketch)."""

    def __init__(self) -> None:
        self.sessions = 0
        self.tasks = 0
        self.reads = 0
        self.compactions = 0
        self.sketch = Sketch()

    def add(self, session: SessionStats, sketch: Sketch) -> None:
        self.sessions += 1
        self.tasks += session.tasks
        self.reads += session.reads
        self.compactions += session.compactions
        self.sketch.merge(sketch)

    def to_dict(self) -> dict:
        per = max(self.tasks, 1)
        return {"sessions": self.sessions, "tasks": self.tasks, "reads": self.reads,
                "reads_per_task": round(self.reads / per, 2), "compactions": self.compactions,
                "compactions_per_task": round(self.compactions / per, 3), "context": self.sketch.summary()}


@dataclass
class Report:
    sessions: list[SessionStats]
    tasks: list[TaskStats]
    installed_at: float | None
    installed_source: str | None
    files: int
    lines: int
    skipped: int
    periods: dict
    days: list[dict]

    def to_dict(self) -> dict:
        return {"installed_at": self.installed_at, "installed_source": self.installed_source, "files": self.files,
                "lines": self.lines, "skipped": self.skipped, "periods": self.periods, "days": self.days,
                "sessions": [s.to_dict() for s in self.sessions], "tasks": [t.to_dict() for t in self.tasks]}


def claude_slug(path: Path) -> str:
    """Claude Code's project folder name: the absolute path with every other character a dash."""
    return re.sub(r"[^A-Za-z0-9-]", "-", str(path))


def _home(env: dict) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def discover(repo: Path, env: dict | None = None) -> list[tuple[Path, str]]:
    """This project's transcripts: Claude Code's project folder, and Codex sessions whose cwd is in the repo."""
    env = dict(os.environ) if env is None else env
    repo = Path(repo)
    found: list[tuple[Path, str]] = []
    roots = {str(repo), str(repo.resolve())}

    def inside(cwd: str | None) -> bool:
        return bool(cwd) and any(cwd == r or cwd.startswith(r.rstrip("/") + "/") for r in roots)

    claude_root = Path(env.get("CLAUDE_CONFIG_DIR") or _home(env) / ".claude") / "projects"
    slugs = {claude_slug(Path(r)) for r in roots}
    if claude_root.is_dir():
        for folder in sorted(claude_root.iterdir()):
            if folder.name in slugs:  # sessions started at the repository's root
                found += [(p, "claude") for p in sorted(folder.glob("*.jsonl"))]
            elif any(folder.name.startswith(s + "-") for s in slugs):  # in a subfolder: check the recorded cwd
                found += [(p, "claude") for p in sorted(folder.glob("*.jsonl")) if inside(_claude_cwd(p))]
    codex_root = Path(env.get("CODEX_HOME") or _home(env) / ".codex") / "sessions"
    if codex_root.is_dir():
        for path in sorted(Path(folder, name) for folder, _, files in walk_tree(codex_root) for name in files
                           if name.startswith("rollout-") and name.endswith(".jsonl")):
            if inside(_codex_cwd(path)):
                found.append((path, "codex"))
    return found


def _claude_cwd(path: Path) -> str | None:
    for obj in head_objects(path, 20):
        if isinstance(obj.get("cwd"), str):
            return obj["cwd"]
    return None


def _codex_cwd(path: Path) -> str | None:
    for obj in head_objects(path, 5):
        if obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
            cwd = obj["payload"].get("cwd")
            return cwd if isinstance(cwd, str) else None
    return None


def installed_at(brain) -> tuple[float | None, str | None]:
    """When brain came to this project: the earliest of its first commit, first boot, install record, brain.yml."""
    candidates: list[tuple[float, str]] = []
    runner = project_repo(brain.repo, timeout=10)
    if runner is not None:
        settings_file = os.path.relpath(brain.dir / "brain.yml", runner.root)
        out = runner.output("log", "--diff-filter=A", "--format=%ct", "--", settings_file) or ""
        stamps = [int(x) for x in out.split() if x.isdigit()]
        if stamps:
            candidates.append((float(min(stamps)), "first commit of .brain/brain.yml"))
    try:
        with open(brain.runtime / "boots.jsonl", "rb") as handle:
            first = json.loads(handle.readline(65536))  # a record is a few hundred bytes
            if isinstance(first.get("at"), (int, float)):
                candidates.append((float(first["at"]), "first boot record"))
    except (OSError, ValueError, AttributeError):
        pass
    for record in sorted((brain.runtime / "installs").glob("*.json")) if (brain.runtime / "installs").is_dir() else ():
        try:
            at = json.loads(record.read_text(encoding="utf-8")).get("at")
            if isinstance(at, (int, float)):
                candidates.append((float(at), f"brain install {record.stem}"))
        except (OSError, ValueError, AttributeError):
            pass
    try:
        candidates.append(((brain.dir / "brain.yml").stat().st_mtime, ".brain/brain.yml"))
    except OSError:
        pass
    if not candidates:
        return None, None
    return min(candidates)


def _clip(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def scan(path: Path, fmt: str | None, on_task) -> tuple[SessionStats, Sketch]:
    """Stream one transcript; hand each finished task to ``on_task``; return the session and its sketch."""
    counters = Counters()
    client = fmt or "claude"
    session = SessionStats(client, path.stem, str(path))
    sketch = Sketch()
    task: TaskStats | None = None
    compact = compact_events = 0

    def current(at) -> TaskStats:
        nonlocal task
        if task is None:
            task = TaskStats(client, session.session, 0, "(before the first prompt)", at)
        return task

    for event in read_transcript(path, counters, fmt):
        if event.at is not None:
            session.start = event.at if session.start is None else min(session.start, event.at)
            session.end = event.at if session.end is None else max(session.end, event.at)
        kind = event.kind
        if kind == "session":
            session.session = event.session or session.session
        elif kind == "prompt":
            if task is not None:
                task.finish()
                on_task(task)
            task = TaskStats(client, session.session, session.tasks + 1, _clip(event.text), event.at)
            session.tasks += 1
        elif kind == "call":
            current(event.at).sketch.add(event.tokens)
            sketch.add(event.tokens)
        elif kind == "read":
            current(event.at).reads += 1
            session.reads += 1
        elif kind == "compact":
            current(event.at).compact += 1
            compact += 1
        elif kind == "compact_event":
            current(event.at).compact_events += 1
            compact_events += 1
    if task is not None:
        task.finish()
        on_task(task)
    session.compactions = max(compact, compact_events)
    session.lines, session.skipped, session.cwd = counters.lines, counters.skipped, counters.cwd
    session.context = sketch.summary()
    return session, sketch


def compute(paths: list[tuple[Path, str | None]], installed: tuple[float | None, str | None] = (None, None),
            *, keep_tasks: int = 10000) -> Report:
    """Figures over ``paths``; at most ``keep_tasks`` task rows are kept (the latest), so memory stays bounded."""
    sessions: list[SessionStats] = []
    tasks: list[TaskStats] = []
    periods = {"before": _Bucket(), "after": _Bucket(), "all": _Bucket()}
    days: dict[str, _Bucket] = {}
    at_install = installed[0]

    def on_task(task: TaskStats) -> None:
        tasks.append(task)
        if len(tasks) > 2 * keep_tasks:
            tasks.sort(key=lambda t: (t.start or 0.0))
            del tasks[: len(tasks) - keep_tasks]

    lines = skipped = 0
    for path, fmt in paths:
        session, sketch = scan(Path(path), fmt, on_task)
        lines += session.lines
        skipped += session.skipped
        if session.start is None and not session.tasks and not sketch.count:
            continue
        sessions.append(session)
        periods["all"].add(session, sketch)
        if at_install is not None and session.start is not None:
            periods["before" if session.start < at_install else "after"].add(session, sketch)
        day = time.strftime("%Y-%m-%d", time.gmtime(session.start)) if session.start is not None else "unknown"
        days.setdefault(day, _Bucket()).add(session, sketch)
    sessions.sort(key=lambda s: (s.start or 0.0, s.session))
    tasks.sort(key=lambda t: (t.start or 0.0, t.session, t.index))
    del tasks[: max(0, len(tasks) - keep_tasks)]
    return Report(sessions=sessions, tasks=tasks, installed_at=at_install, installed_source=installed[1],
                  files=len(paths), lines=lines, skipped=skipped,
                  periods={k: v.to_dict() for k, v in periods.items()},
                  days=[{"day": d, **days[d].to_dict()} for d in sorted(days)])


def _date(at: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return time.strftime(fmt, time.gmtime(at)) if at is not None else "?"


def _table(headers: list[str], rows: list[list], left: tuple[int, ...] = (0, 1)) -> list[str]:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]
    fmt = "  ".join("{:<%d}" % w if i in left else "{:>%d}" % w for i, w in enumerate(widths))
    return [fmt.format(*headers), fmt.format(*("-" * w for w in widths))] + [fmt.format(*map(str, r)) for r in rows]


def render_text(report: Report, *, task_rows: int = 20) -> str:
    out = [f"{len(report.sessions)} sessions from {report.files} transcripts ({report.lines} lines, "
           f"{report.skipped} torn or foreign lines skipped)"]
    if report.installed_at is not None:
        out.append(f"brain installed {_date(report.installed_at)} UTC ({report.installed_source})")
    out.append("")
    rows = [[s.client, s.session[:36], _date(s.start), s.tasks, s.reads, s.context.get("calls", 0),
             s.context.get("p50", 0), s.context.get("p95", 0), s.context.get("max", 0), s.compactions]
            for s in report.sessions]
    out += _table(["client", "session", "start (UTC)", "tasks", "reads", "calls", "ctx p50", "ctx p95", "ctx max",
                   "compactions"], rows)
    if report.tasks:
        shown = report.tasks[-task_rows:]
        out += ["", f"Tasks (latest {len(shown)} of {len(report.tasks)})"]
        out += _table(["session", "task", "reads", "calls", "ctx p50", "ctx p95", "ctx max", "compactions", "prompt"],
                      [[t.session[:12], t.index, t.reads, t.context.get("calls", 0), t.context.get("p50", 0),
                        t.context.get("p95", 0), t.context.get("max", 0), t.compactions, _clip(t.prompt, 48)]
                       for t in shown], left=(0, 8))
    out += ["", "Trend"]
    names = [("before", "before brain"), ("after", "with brain"), ("all", "all")] if report.installed_at else [("all", "all")]
    out += _table(["period", "sessions", "tasks", "reads/task", "ctx p50", "ctx p95", "compactions/task"],
                  [[label, p["sessions"], p["tasks"], p["reads_per_task"], p["context"]["p50"], p["context"]["p95"],
                    p["compactions_per_task"]] for key, label in names for p in [report.periods[key]]], left=(0,))
    return "\n".join(out) + "\n"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def render_svg(report: Report, *, width: int = 720) -> str:
    """A small hand-written SVG: reads per task, context p50 and compactions per task, per day; install marked."""
    days = [d for d in report.days if d["day"] != "unknown"]
    panel_h, top, left, right = 150, 40, 60, 20
    height = top + 3 * (panel_h + 40) + 10
    inner_w = width - left - right
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">brain stats: {len(report.sessions)} sessions, '
           f'{sum(d["tasks"] for d in days)} tasks</text>']
    stamps = [calendar.timegm(time.strptime(d["day"], "%Y-%m-%d")) for d in days]
    lo, hi = (min(stamps), max(stamps)) if stamps else (0.0, 1.0)
    if hi == lo:
        lo, hi = lo - 86400, hi + 86400
    install = None
    if report.installed_at is not None:
        install = calendar.timegm(time.strptime(_date(report.installed_at, "%Y-%m-%d"), "%Y-%m-%d"))

    def x(stamp: float) -> float:
        return left + (stamp - lo) / (hi - lo) * inner_w

    panels = [("file reads per task", [d["reads_per_task"] for d in days], "#1f77b4"),
              ("context tokens per call (p50)", [d["context"]["p50"] for d in days], "#d62728"),
              ("compactions per task", [d["compactions_per_task"] for d in days], "#9467bd")]
    for n, (title, values, colour) in enumerate(panels):
        y0 = top + n * (panel_h + 40) + 20
        vmax = max(values or [0]) or 1
        out.append(f'<text x="{left}" y="{y0 - 6}">{_esc(title)}</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{inner_w}" height="{panel_h}" fill="none" stroke="#999"/>')
        out.append(f'<text x="{left - 4}" y="{y0 + 10}" text-anchor="end">{vmax:g}</text>')
        out.append(f'<text x="{left - 4}" y="{y0 + panel_h}" text-anchor="end">0</text>')

        def y(v: float) -> float:
            return y0 + panel_h - (v / vmax) * (panel_h - 8)

        points = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(stamps, values))
        if len(values) > 1:
            out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for s, v in zip(stamps, values):
            out.append(f'<circle cx="{x(s):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>')
        if install is not None and lo <= install <= hi:
            out.append(f'<line x1="{x(install):.1f}" y1="{y0}" x2="{x(install):.1f}" y2="{y0 + panel_h}" '
                       f'stroke="#2ca02c" stroke-dasharray="4 3"/>')
            out.append(f'<text x="{x(install) + 3:.1f}" y="{y0 + 12}" fill="#2ca02c">brain installed</text>')
        if days:
            out.append(f'<text x="{left}" y="{y0 + panel_h + 14}">{_esc(days[0]["day"])}</text>')
            out.append(f'<text x="{left + inner_w}" y="{y0 + panel_h + 14}" text-anchor="end">{_esc(days[-1]["day"])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
