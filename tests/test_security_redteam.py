"""Re-test of issue 12 as an attacker and as a careless user: variants the first round missed.

- a cloned repository chooses nothing by symbolic link: a linked `.brain/runtime` (or a link
  planted directly in it) and linked settings files are refused with one clear line, and nothing
  is written through them;
- a `brain.yml` that is a folder or unreadable is a settings error naming it, not "no .brain/";
- configured redaction patterns run in linear time whatever they say;
- a repository whose own git configuration defines hooks (`hook.<name>.command`) never runs them;
- a token never resumes the checkpoint of another token's session;
- under tokens, the web UI acts only as the token's own session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import brain as brainlib
from brain.errors import SettingsError, UnsafeLink

BOUND = 60


def cli(repo, *args, env=None, stdin=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=BOUND, env={**os.environ, **(env or {})},
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


def one_clear_line(result) -> None:
    """An error a person reads: no traceback, one `error:` line (a hint line may follow)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and lines[0].startswith("error: "), result.stderr
    assert all(line.startswith("  hint: ") for line in lines[1:]), result.stderr


# -- a cloned repository must not choose where brain writes --------------------------------------

def test_a_linked_runtime_folder_is_refused_and_nothing_is_written_through_it(brain, repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runtime = brain.runtime
    if runtime.exists():
        import shutil

        shutil.rmtree(runtime)
    runtime.symlink_to(elsewhere, target_is_directory=True)
    for args in (["boot"], ["write", "now", "--file", "-"], ["session", "start", "--role", "dev"], ["doctor"]):
        result = cli(repo, *args, "--json", stdin="# now\n" if "write" in args else None)
        assert result.returncode == UnsafeLink.exit_code, (args, result.stderr)
        error = json.loads(result.stderr.splitlines()[-1])
        assert error["error"] == "unsafe_link" and error["path"] == str(runtime), error
        assert cli(repo, *args, stdin="# now\n" if "write" in args else None).returncode == UnsafeLink.exit_code
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(UnsafeLink):
        brainlib.open(repo)


@pytest.mark.parametrize("name", ["brain.db", "write.lock", "tokens.json", "logs", "index.db"])
def test_a_link_planted_in_runtime_is_refused(brain, repo, tmp_path, name):
    brain.runtime.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "target"
    planted = brain.runtime / name
    if planted.is_dir() and not planted.is_symlink():
        import shutil

        shutil.rmtree(planted)
    elif planted.exists():
        planted.unlink()
    planted.symlink_to(target)
    result = cli(repo, "write", "now", "--file", "-", stdin="# now\n")
    assert result.returncode == UnsafeLink.exit_code, result.stderr
    one_clear_line(result)
    assert not target.exists()


@pytest.mark.parametrize("name", ["brain.yml", "brain.local.yml"])
@pytest.mark.parametrize("where", ["outside", "inside"])
def test_linked_settings_files_are_refused(brain, repo, tmp_path, name, where):
    target = tmp_path / "passwd" if where == "outside" else brain.dir / "notes" / "settings.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("root:x:0:0:root:/root:/bin/bash\n" if where == "outside" else "version: 1\n")
    settings_file = brain.dir / name
    settings_file.unlink(missing_ok=True)
    settings_file.symlink_to(target)
    result = cli(repo, "boot", "--json")
    assert result.returncode == UnsafeLink.exit_code, result.stderr
    error = json.loads(result.stderr.splitlines()[-1])
    assert error["error"] == "unsafe_link" and error["path"] == str(settings_file)
    assert "root:x" not in result.stderr + result.stdout
    one_clear_line(cli(repo, "boot"))


def test_a_settings_folder_or_unreadable_settings_is_named(brain, repo):
    settings_file = brain.dir / "brain.yml"
    original = settings_file.read_text()
    settings_file.unlink()
    settings_file.mkdir()
    result = cli(repo, "boot", "--json")
    assert result.returncode == SettingsError.exit_code, result.stderr
    assert json.loads(result.stderr.splitlines()[-1])["file"] == str(settings_file)
    one_clear_line(cli(repo, "boot"))
    settings_file.rmdir()
    settings_file.write_text(original)
    local = brain.dir / "brain.local.yml"
    local.mkdir()
    result = cli(repo, "boot", "--json")
    assert result.returncode == SettingsError.exit_code, result.stderr
    assert json.loads(result.stderr.splitlines()[-1])["file"] == str(local)


# -- configured redaction patterns are linear by construction ------------------------------------

@pytest.mark.parametrize("pattern", [r".*x", r"(?:ab)++c", r"(?>x+)y", r"[^\n]+=", r"x{2,}y", r"(a{1,9})\1",
                                     r"[a-z]{0,60}[a-z]{0,60}X", r"(?:ab|a){0,30}c"])
def test_a_configured_pattern_that_can_rescan_the_text_is_refused(brain, repo, pattern):
    from brain.security.redact import Redactor

    with pytest.raises(SettingsError) as err:
        Redactor([pattern])
    assert err.value.key == "secrets.patterns"
    (brain.dir / "brain.yml").write_text("version: 1\nsecrets:\n  patterns: [" + json.dumps(pattern) + "]\n")
    result = cli(repo, "boot")
    assert result.returncode == SettingsError.exit_code
    one_clear_line(result)


def test_the_costliest_accepted_pattern_runs_in_linear_time():
    """The accepted pattern closest to the bound, on the input that makes it backtrack most."""
    from brain.security.redact import PATTERN_STEPS_MAX, Redactor, pattern_steps

    worst = r"[a-z]{0,11}[a-z]{0,11}X"
    assert pattern_steps(worst) <= PATTERN_STEPS_MAX
    redactor = Redactor([worst, r"acme_live_[0-9a-zA-Z]{24,99}+"])
    assert redactor.redact("key acme_live_" + "a1" * 20).found == {"custom": 1}

    def per_kb(size: int) -> float:
        text = "a" * size
        best = float("inf")
        for _ in range(3):
            # this thread's CPU time: a loaded machine (another test worker, other jobs) does not count
            start = time.thread_time()
            redactor.redact(text)
            best = min(best, time.thread_time() - start)
        return best / size * 1024

    small, large = per_kb(8 * 1024), per_kb(256 * 1024)
    assert large < 3 * small, (small, large)  # a quadratic pattern's cost per KB grows 32 times here


# -- git: hooks defined in a repository's own configuration ---------------------------------------

def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("section", ['hook "lint"', 'HOOK "lint"', "include"])
def test_a_repository_whose_own_config_defines_hooks_is_never_committed(brain, repo, tmp_path, section):
    """git 2.46+ runs `hook.<name>.command` for `hook.<name>.event`, which core.hooksPath does not switch
    off: brain refuses to run git where the repository's own configuration defines one."""
    from brain.errors import UntrustedRepository

    (brain.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "brain")
    canary = tmp_path / "canary"
    with open(repo / ".git" / "config", "a") as handle:
        if section == "include":  # in a file the repository's configuration includes
            (repo / ".git" / "extra").write_text(f'[hook "lint"]\n\tcommand = touch {canary}\n')
            handle.write("[include]\n\tpath = extra\n")
        else:
            handle.write(f"[{section}]\n\tcommand = touch {canary}\n\tevent = pre-commit\n")
    head = _git(repo, "rev-parse", "HEAD")
    write = cli(repo, "write", "now", "--file", "-", stdin="# now\n\nhooks\n")
    assert write.returncode == 0, write.stderr  # the write stands; its commit is refused
    assert _git(repo, "rev-parse", "HEAD") == head
    sync = cli(repo, "sync", "--json")
    assert sync.returncode == UntrustedRepository.exit_code, sync.stderr
    assert json.loads(sync.stdout)["repos"][0]["status"] == "refused"
    assert not canary.exists()


# -- team mode: a token never resumes another token's work ----------------------------------------

def test_a_token_never_inherits_the_checkpoint_of_another_tokens_session(brain, repo, brain_home):
    pytest.importorskip("mcp")
    from test_team_helpers import client_for, run, team_server

    b = brainlib.open_brain(repo)
    ann, _ = b.tokens.create("ann", role="dev", machine="box")
    eve, _ = b.tokens.create("eve", role="dev", machine="box")  # same role and machine, another principal
    local = b.coord.start_session("dev")  # a local session that shares them too
    b.coord.checkpoint(local.id, "local private step", note="local private note")
    b.coord.end_session(local.id)

    with team_server(repo) as url:
        async def as_ann():
            async with client_for(url, ann, "ann") as a:
                out = await a.call_tool("brain_checkpoint", {"step": "ann private step", "note": "ann private note"})
                return out.structured_content["session"]

        ann_session = run(as_ann)
        brainlib.open_brain(repo).coord.end_session(ann_session)

        async def as_eve():
            async with client_for(url, eve, "eve") as e:
                checkpoint = await e.call_tool("brain_checkpoint", {})
                boot = await e.call_tool("brain_boot", {"task": "continue the work"})
                return checkpoint, boot

        checkpoint, boot = run(as_eve)
    assert not checkpoint.is_error and checkpoint.structured_content["checkpoint"] is None, checkpoint
    text = json.dumps(boot.structured_content) + "".join(getattr(c, "text", "") for c in boot.content)
    assert "private" not in text, text
    # a local session (no token) still resumes its predecessor's checkpoint
    successor = b.coord.start_session("dev")
    assert b.coord.read_checkpoint(successor.id).step in ("local private step", "ann private step")


# -- team mode: the web UI acts as the signed-in person, and only people sign in --------------------

def test_under_tokens_the_web_ui_is_for_human_tokens_and_acts_as_their_own_session(brain, repo):
    pytest.importorskip("markdown_it")
    import re

    from starlette.testclient import TestClient

    from brain.team.middleware import web_middleware
    from brain.web import create_app

    b = brainlib.open_brain(repo)
    agent_token, _ = b.tokens.create("agent-x", role="backend")
    person_token, _ = b.tokens.create("pat", role="human", machine="desk")
    target = b.coord.start_session("review").id
    mine = b.coord.claim(b.coord.start_session("build").id, "src/auth/**")
    theirs = b.coord.claim(b.coord.start_session("docs").id, "src/auth/login.py")
    app = create_app(b, middleware=web_middleware(b), warm=False)
    base = "http://127.0.0.1:8766"
    with TestClient(app, base_url=base) as ui:
        agent = {"Authorization": f"Bearer {agent_token}"}
        for path in ("/work", "/threads", "/memory", "/signals", "/claims"):
            assert ui.get(path, headers=agent).status_code == 403, path
        page = ui.get("/signals", headers=agent)
        assert "Traceback" not in page.text
        before = len(b.coord.history(limit=1000))
        person = {"Authorization": f"Bearer {person_token}"}
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', ui.get("/signals", headers=person).text).group(1)
        forged = ui.post("/signals", data={"csrf": csrf, "target": target, "body": "from an agent"},
                         headers={**agent, "Origin": base})
        assert forged.status_code == 403 and len(b.coord.history(limit=1000)) == before
        sent = ui.post("/signals", data={"csrf": csrf, "target": target, "body": "from pat"},
                       headers={**person, "Origin": base}, follow_redirects=False)
        assert sent.status_code == 303, sent.text
        decided = ui.post("/claims/decide", data={"csrf": csrf, "a": mine.claim if hasattr(mine, "claim") else
                                                  mine["claim"], "b": theirs.claim if hasattr(theirs, "claim")
                                                  else theirs["claim"], "decision": "pat decides"},
                          headers={**person, "Origin": base}, follow_redirects=False)
        assert decided.status_code == 303, decided.text
    (signal,) = [s for s in b.coord.signals(target, limit=10, ack=False) if s.body == "from pat"]
    assert b.tokens.owns("pat", signal.sender), signal.sender  # pat's own session, not a shared "human" one
    assert "@desk" in signal.sender


# -- team mode: a thread's local handoff is its sessions' working memory ---------------------------

@pytest.mark.parametrize("spelling", ["{p}", "./{p}", "handoffs//local/{t}.md", "handoffs/x/../local/{t}.md",
                                      "HANDOFFS/Local/{t}.md"])
def test_a_token_never_reads_or_changes_a_thread_handoff_it_is_not_party_to(brain, repo, brain_home, spelling):
    pytest.importorskip("mcp")
    from test_team_helpers import client_for, run, team_server

    b = brainlib.open_brain(repo)
    recorded = cli(repo, "record-turn", "--speaker", "sess-x", "--to", "sess-y", "--file", "-",
                   stdin="private plan: rotate the vault on friday")
    assert recorded.returncode == 0, recorded.stderr
    (path,) = [str(p.relative_to(b.dir)) for p in (b.dir / "handoffs" / "local").glob("*.md")]
    thread = path.rsplit("/", 1)[1][:-3]
    named = spelling.format(p=path, t=thread)
    alice, _ = b.tokens.create("alice", role="backend")
    before = (b.dir / path).read_bytes()
    with team_server(repo) as url:
        async def body():
            async with client_for(url, alice, "a") as a:
                calls = {
                    "read": await a.call_tool("brain_read", {"path": named}),
                    "write": await a.call_tool("brain_write", {"path": named, "text": "overwritten"}),
                    "move": await a.call_tool("brain_move", {"path": named, "to": "notes/stolen.md"}),
                    "move_to": await a.call_tool("brain_move", {"path": "now.md", "to": named}),
                    "delete": await a.call_tool("brain_delete", {"path": named}),
                }
                listed = await a.call_tool("brain_notes", {"everything": True})
                found = await a.call_tool("brain_search", {"query": f"handoff {thread}", "kind": "handoff"})
                boot = await a.call_tool("brain_boot", {"task": f"Handoff between sess-x and sess-y: {thread}"})
                return calls, listed, found, boot

        calls, listed, found, boot = run(body)
    for name, result in calls.items():
        assert result.is_error, (name, result.structured_content)
        if name != "move_to" or "HANDOFFS" not in named:
            assert result.structured_content["error"] in ("forbidden", "path_refused", "not_found"), \
                (name, result.structured_content)
    assert not calls["read"].is_error or "rotate" not in json.dumps(calls["read"].structured_content)
    assert calls["read"].structured_content["error"] in ("forbidden", "not_found")
    assert "handoffs/local" not in json.dumps(listed.structured_content)
    assert "handoffs/local" not in json.dumps(found.structured_content)
    assert "handoffs/local" not in json.dumps(boot.structured_content)
    assert (b.dir / path).read_bytes() == before


def test_a_cloned_brain_folder_that_is_a_link_is_refused(tmp_path):
    """A hostile clone commits `.brain -> elsewhere` (a folder with a brain.yml): brain must neither read
    that folder's memory into a boot nor write its files there."""
    elsewhere = tmp_path / "elsewhere"
    brainlib.init(elsewhere)
    secret = (elsewhere / ".brain" / "now.md").read_bytes()
    clone = tmp_path / "clone"
    clone.mkdir()
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    os.symlink(elsewhere / ".brain", clone / ".brain")
    for args in (("boot",), ("write", "now", "--file", "-"), ("init",)):
        result = cli(clone, *args, "--json", stdin="# now\nplanted\n" if "write" in args else None)
        assert result.returncode == UnsafeLink.exit_code, (args, result.stdout, result.stderr)
        assert json.loads(result.stdout or result.stderr)["error"] == "unsafe_link", (args, result.stderr)
    assert (elsewhere / ".brain" / "now.md").read_bytes() == secret
    assert cli(clone, "boot", env={"BRAIN_DIR": str(elsewhere / ".brain")}).returncode == 0  # chosen on purpose


def test_hidden_handoffs_never_shorten_a_tokens_search(brain, repo, brain_home):
    """Other threads' handoffs are filtered out of a token's search; they must not take the places of the
    visible hits it asked for (the filter ran after the limit, so a note behind them was lost)."""
    pytest.importorskip("mcp")
    from test_team_helpers import client_for, run, team_server

    b = brainlib.open_brain(repo)
    for i in range(4):
        done = cli(repo, "record-turn", "--speaker", f"sess-{i}", "--to", f"peer-{i}", "--file", "-",
                   stdin="the private plan")
        assert done.returncode == 0, done.stderr
    assert len(list((b.dir / "handoffs" / "local").glob("*.md"))) == 4
    b.write("notes/peers.md", "# Notes\n\nWhat a handoff between a peer and a session keeps.\n")
    alice, _ = b.tokens.create("alice", role="backend")
    with team_server(repo) as url:
        async def body():
            async with client_for(url, alice, "a") as a:
                return await a.call_tool("brain_search", {"query": "handoff between peer", "limit": 2})

        found = run(body)
    paths = [h["path"] for h in found.structured_content["hits"]]
    assert "notes/peers.md" in paths and not any("handoffs/local" in p for p in paths)


# -- the graph's path finder is linear on any memory text -----------------------------------------

def test_the_graph_path_finder_finds_the_same_paths_in_linear_time():
    """`_PATHISH` ran over every decision an agent writes: a long run of word characters without a '/'
    was rescanned from each of its positions (32 KB took 10 s). It now starts only where a run starts."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from brain.search import graph

    old = __import__("re").compile(r"[\w.\-]+(?:/[\w.\-]+)+|`([\w.\-/]+)`")

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="ab./-_`é \n", max_size=60))
    def same(text):
        assert [m.group(0) for m in graph._PATHISH.finditer(text)] == [m.group(0) for m in old.finditer(text)]

    same()

    def seconds(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.thread_time()  # CPU time: the machine's load does not count
            list(graph._PATHISH.finditer(text))
            best = min(best, time.thread_time() - start)
        return best

    for seed in ("a", "0x", "a.", "`a"):
        small, large = seconds(seed * (4096 // len(seed))), seconds(seed * (131072 // len(seed)))
        # 32 times the text: linear is ~32 times the time, quadratic 1024 times (the old pattern: 200 s)
        assert large < 0.5 and large < 8 * 32 * max(small, 2e-4), (seed, small, large)


def test_a_decision_written_by_an_agent_cannot_stall_the_graph(brain):
    text = "# Decision\n\n" + "a" * 200_000 + "\n"
    start = time.perf_counter()
    brain.write("decisions/0001-long.md", text)
    brain.reindex()
    assert time.perf_counter() - start < 20


# -- card extraction: a pathological source file costs a bounded time -----------------------------

@pytest.mark.parametrize("lang,path,unit", [("go", "x/a.go", "<!-- "), ("c", "x/a.c", "/*\n"),
                                            ("java", "x/A.java", "<!-- ")])
def test_a_pathological_source_file_is_left_unread_in_bounded_time(lang, path, unit):
    """tree-sitter's error recovery is superlinear on some garbage (32 KB of `<!-- ` in a .go file took
    100 s): a file in a cloned repository, or one an agent wrote, must not stall `brain map` or a boot."""
    pytest.importorskip("tree_sitter")
    from brain.cards.languages import extract_with

    raw = (unit * (24_000 // len(unit))).encode()
    start = time.perf_counter()
    try:
        facts = extract_with(lang, raw, path)
    except ImportError:
        pytest.skip(f"no {lang} grammar")
    assert time.perf_counter() - start < 10
    assert facts.get("status") == "unread", facts
    normal = extract_with(lang, b"package x\n\nfunc A() {}\n" if lang == "go" else
                          b"int a(void) { return 1; }\n" if lang == "c" else b"public class A { void a() {} }\n", path)
    assert normal.get("status") != "unread", normal


# -- a careless user: every error is one line and an exit code ------------------------------------

@pytest.mark.parametrize("case", ["export_into_a_file", "layer_home_is_a_file", "init_under_a_file"])
def test_file_system_mistakes_are_one_line_with_their_own_exit_code(brain, repo, tmp_path, case):
    from brain.errors import FileSystemError

    a_file = tmp_path / "a-file"
    a_file.write_text("x\n")
    if case == "export_into_a_file":
        result = cli(repo, "export-template", str(a_file / "dest"))
    elif case == "layer_home_is_a_file":
        result = cli(repo, "write", "--layer", "personal", "--path", "notes/x.md", "--file", "-",
                     env={"BRAIN_HOME": str(a_file)}, stdin="# x\n")
    else:
        result = cli(tmp_path, "init", str(a_file / "project"))
    assert result.returncode == FileSystemError.exit_code, result.stderr
    one_clear_line(result)
    assert str(a_file) in result.stderr


def test_a_search_index_that_is_a_folder_is_named_not_a_traceback(brain, repo):
    from brain.errors import DamagedStore

    index = brain.runtime / "index.db"
    brain.runtime.mkdir(parents=True, exist_ok=True)
    index.unlink(missing_ok=True)
    index.mkdir()
    for args in (["search", "x"], ["index"]):
        result = cli(repo, *args, "--json")
        assert result.returncode == DamagedStore.exit_code, (args, result.stderr)
        error = json.loads(result.stderr.splitlines()[-1])
        assert error["error"] == "damaged_store" and error["path"] == str(index)
        one_clear_line(cli(repo, *args))


@pytest.mark.parametrize("what", ["log", "thread_folder", "lock"])
def test_a_link_planted_in_a_conversation_folder_is_never_written_through(brain, repo, tmp_path, what):
    first = cli(repo, "record-turn", "--speaker", "sess-x", "--to", "sess-y", "--file", "-", stdin="hello")
    assert first.returncode == 0, first.stderr
    (folder,) = [p for p in brain.conversations_dir.iterdir() if p.is_dir()]
    outside = tmp_path / "victim"
    outside.mkdir()
    target = outside / "bashrc"
    target.write_text("# mine\n")
    if what == "log":
        (folder / "log.jsonl").unlink()
        (folder / "log.jsonl").symlink_to(target)
    elif what == "lock":
        (folder / ".lock").unlink(missing_ok=True)
        (folder / ".lock").symlink_to(outside / "planted-lock")
    else:
        import shutil

        shutil.rmtree(folder)
        folder.symlink_to(outside, target_is_directory=True)
    again = cli(repo, "record-turn", "--speaker", "sess-x", "--to", "sess-y", "--file", "-", stdin="again")
    assert again.returncode != 0
    one_clear_line(again)
    assert target.read_text() == "# mine\n"
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]


def test_a_server_refuses_a_token_store_that_came_with_the_repository(brain, repo, tmp_path):
    """A cloned repository may commit `.brain/runtime/tokens.json` holding the hash of a token its author
    knows: a team server or web UI started on the clone would then accept the author's token."""
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "brain")
    token, _ = brain.tokens.create("planted", role="human")
    _git(repo, "add", "-f", str(brain.runtime / "tokens.json"))
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "hostile")
    for args in (["serve", "--http", "--port", "0"], ["ui", "--port", "0"]):
        result = cli(repo, *args)
        assert result.returncode == SettingsError.exit_code, (args, result.stderr)
        one_clear_line(result)
        assert "runtime" in result.stderr
