"""Trees a repository ships cannot break brain by their shape (brain.trees).

A real 1,200-level tree, committed and cloned with git, once made `brain index`, `map`,
`search` and `doctor` fail with RecursionError. They now walk without recursion, skip what
lies deeper than brain.trees.MAX_DEPTH and say so on stderr (a JSON line with --json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, remove_tree

DEPTH = 1200
TIMEOUT = 300
# the 1,200-level clone (the module fixture) is built once: under pytest-xdist the group keeps this module's
# tests on one worker
pytestmark = pytest.mark.xdist_group("deep-trees")


def make_deep(base: Path, depth: int = DEPTH, name: str = "x.py", text: str = "def deep():\n    return 1\n") -> Path:
    """``base/d/d/.../d/name`` ``depth`` folders down (os.makedirs itself recurses per level)."""
    base.mkdir(parents=True, exist_ok=True)
    folder = base
    for _ in range(depth):
        folder = folder / "d"
        folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


def brain_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT)


def warnings_of(stderr: str) -> list[dict]:
    found = []
    for line in stderr.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("warning"):
            found.append(data)
    return found


@pytest.fixture(scope="module")
def deep_clone(tmp_path_factory) -> Path:
    """A repository with a brain, a 1,200-level code tree and a 1,200-level notes tree, cloned by git."""
    import brain as brainlib

    origin = tmp_path_factory.mktemp("origin") / "project"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    (origin / "app.py").write_text("def shallow():\n    return 0\n")
    home = tmp_path_factory.mktemp("home")
    old = os.environ.get("BRAIN_HOME")
    os.environ["BRAIN_HOME"] = str(home)
    try:
        brainlib.init(origin)
    finally:
        if old is None:
            os.environ.pop("BRAIN_HOME")
        else:
            os.environ["BRAIN_HOME"] = old
    make_deep(origin / "src")
    make_deep(origin / ".brain" / "notes", name="bottom.md", text="# Bottom\n\nthe deepest note\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "a deep tree")
    clone = origin.parent / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True, timeout=TIMEOUT)
    assert (clone / "src").is_dir()
    yield clone
    remove_tree(origin.parent)


@pytest.mark.parametrize("command", [["index"], ["map"], ["search", "shallow"], ["doctor"]])
def test_deep_clone_commands_finish_and_say_what_was_skipped(deep_clone, command):
    proc = brain_cli(deep_clone, *command, "--json")
    assert "RecursionError" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr[-3000:]  # doctor exits 1 on any failed check
    json.loads(proc.stdout)
    if command[0] != "search":  # the index is fresh by then: search does not walk again
        deep = [w for w in warnings_of(proc.stderr) if w["warning"] == "too_deep"]
        assert deep and all(w["limit"] == 128 for w in deep)


def test_deep_clone_text_mode_says_it_on_stderr(deep_clone):
    proc = brain_cli(deep_clone, "index", "--rebuild")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "deeper than the 128 levels brain reads" in proc.stderr


def test_the_shallow_code_is_still_found(deep_clone):
    brain_cli(deep_clone, "index")
    proc = brain_cli(deep_clone, "search", "shallow", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "app.py" in proc.stdout


def test_walk_is_os_walk_without_recursion(tmp_path):
    from brain.trees import take_notices, walk

    make_deep(tmp_path, 300)
    (tmp_path / "loop").symlink_to(".")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x")
    (tmp_path / "a" / "up").symlink_to("..")
    take_notices()
    seen = list(walk(tmp_path, max_depth=10))
    assert len(seen) == 1 + 1 + 10  # the root, a/, and d/ down to depth 10; links listed, never descended
    top = seen[0]
    assert top[0] == str(tmp_path) and sorted(top[1]) == ["a", "d", "loop"]
    notices = take_notices()
    assert len(notices) == 1 and notices[0].count("/d") == 10
    expected = [(f, sorted(d), sorted(n)) for f, d, n in os.walk(tmp_path / "a")]
    assert [(f, sorted(d), sorted(n)) for f, d, n in walk(tmp_path / "a")] == expected


def test_many_empty_folders_and_a_link_loop(brain, repo):
    """1e5 empty folders and a link loop: index and map finish (linear in folders, links never descended)."""
    wide = repo / "wide"
    wide.mkdir()
    for i in range(100_000):
        os.mkdir(wide / f"e{i}")
    (repo / "wide" / "loop").symlink_to("..")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("def found():\n    return 1\n")
    for command in (["index"], ["map"], ["doctor"]):
        proc = brain_cli(repo, *command, "--json")
        assert proc.returncode in (0, 1), proc.stderr[-3000:]
        json.loads(proc.stdout)


# -- deep JSON in files a repository ships or a client writes ----------------------------------------------------------
def deep_json(depth: int = 100_000) -> str:
    return '{"name": "deep", "x": ' + "[" * depth + "]" * depth + "}"


def test_deep_json_in_package_json_and_tsconfig_does_not_end_a_map(brain, repo):
    (repo / "web").mkdir()
    (repo / "web" / "package.json").write_text(deep_json())
    (repo / "web" / "index.js").write_text("export function shown() { return 1 }\n")
    (repo / "tsconfig.json").write_text('{"compilerOptions": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (repo / "package.json").write_text(deep_json())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "deep json")
    proc = brain_cli(repo, "map", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    card = next((brain.dir / "modules").glob("web*.md")).read_text()
    assert "nested too deeply" in card


def test_a_deep_json_line_in_a_transcript_is_skipped(brain, repo, tmp_path):
    line = json.dumps({"type": "user", "sessionId": "s1", "message": {"role": "user", "content": "kept"}})
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text(line + "\n" + '{"type": "user", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n" + line + "\n")
    proc = brain_cli(repo, "import-turns", str(transcript), "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["turns"] == 2 and result["skipped"] == 1


@pytest.mark.parametrize("depth", [100_000, 985])
def test_a_deep_client_settings_file_is_refused_with_a_clear_error(brain, repo, depth):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"hooks": ' + "[" * depth + "]" * depth + "}")
    proc = brain_cli(repo, "install", "claude-code", "--json")
    assert "RecursionError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 2)
    doctor = brain_cli(repo, "doctor", "--json")
    assert "Traceback" not in doctor.stderr, doctor.stderr[-3000:]
