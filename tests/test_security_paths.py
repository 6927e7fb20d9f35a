"""Issue 12, class 1 and class 6 (temporary files): one confinement rule for every memory path.

The rule (brain.memory.paths) is tested through every door: the library, the CLI as a
real subprocess (exit code 2), the MCP server through the official SDK client over
stdio, and the web UI over HTTP. Property tests generate spellings of forbidden targets
and random paths; the derived readers (index, decisions, boot, profiles, workflows) are
shown never to read through a symlink a cloned repository could carry.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import brain as brainlib
from brain.errors import InvalidInput, NotFound, PathEscape, PathRefused, TooLarge

CANARY = "CANARY-etc-passwd-0f3c9"


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root`` (files with their bytes, folders and links by kind), runtime/ left out."""
    found: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel == "runtime" or rel.startswith("runtime" + os.sep):
            continue
        for name in dirs:
            path = Path(folder, name)
            found[os.path.join(rel, name)] = "link" if path.is_symlink() else "dir"
        for name in files:
            path = Path(folder, name)
            found[os.path.join(rel, name)] = "link" if path.is_symlink() else path.read_bytes()
    return found


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder outside the brain holding a secret file, as /etc would."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "passwd").write_text(f"root:x:0:0:{CANARY}:/root:/bin/sh\n")
    return folder


# -- the forbidden targets, in many spellings ---------------------------------------------------------------
FORBIDDEN_WRITES = [
    "runtime/tokens.json", "runtime/x.md", "RUNTIME/x.md", "Runtime/notes.md", "./runtime/x.md",
    "notes/../runtime/x.md", "notes//..//runtime/x.md", "\uff32\uff35\uff2e\uff34\uff29\uff2d\uff25/x.md",
    "brain.yml", "Brain.yml", "BRAIN.YML", "./brain.yml", "notes/../brain.yml", "brain.yml.",
    "brain.local.yml", "BRAIN.LOCAL.YML", "notes/../brain.local.yml",
    ".gitignore", "notes/.gitignore", ".GITIGNORE", ".gitattributes", "notes/.gitattributes",
    ".git/config", ".GIT/config", ".Git/hooks/pre-commit", "notes/.git/config", "notes/.gIt/x.md",
    "git~1/config", "notes/x/../.git/config", ".git./config", ".git /config",
    ".brain/now.md", "notes/.x.md.123.deadbeef.tmp",
    "notes/\u202eevil.md", "notes/a\u200bb.md", "notes/a\u2066b.md", "notes/a\u200eb.md", "notes/a\ufeffb.md",
    "notes/bell\x07.md", "notes/new\nline.md", "notes/tab\t.md", "notes/esc\x1b[31m.md", "notes/del\x7f.md",
    ".g\u200cit/config",
    "/etc/passwd", "../x.md", "notes/../../x.md", "~/x.md", "notes\\..\\..\\x.md", "notes/x\x00.md",
]


@pytest.mark.parametrize("path", FORBIDDEN_WRITES)
def test_library_refuses_every_forbidden_write_and_creates_nothing(brain, path):
    before = snapshot(brain.dir)
    with pytest.raises(PathEscape) as err:  # PathRefused is a PathEscape: one family, exit code 2
        brain.write(path, "x\n")
    assert err.value.exit_code == 2 and err.value.field == "path"
    assert snapshot(brain.dir) == before
    assert not (brain.repo / "x.md").exists() and not (brain.repo.parent / "x.md").exists()


@pytest.mark.parametrize("path", ["runtime/brain.db", "RUNTIME/brain.db", "./runtime/brain.db",
                                  "notes/../runtime/brain.db", "brain.local.yml", "Brain.Local.yml",
                                  ".gitignore", ".git/config", "notes/\u202ex.md", "../README.md"])
def test_library_refuses_forbidden_reads(brain, path):
    (brain.dir / "brain.local.yml").write_text("backend: postgresql://u:secret@db/x\n")
    with pytest.raises(PathEscape):
        brain.read(path)


def test_settings_can_be_read_not_written(brain):
    assert "version" in brain.read("brain.yml").text
    with pytest.raises(PathRefused) as err:
        brain.write("brain.yml", "version: 1\nredaction: {enabled: false}\n")
    assert err.value.reason == "forbidden"


def test_spellings_of_one_file_are_one_file_under_its_limit(brain):
    limit = brain.settings["limits.now_bytes"]
    big = "x" * (limit + 1)
    for spelling in ("now.md", "./now.md", "notes/../now.md", ".//now.md", "notes/./../now.md"):
        with pytest.raises(TooLarge) as err:
            brain.write(spelling, big)
        assert err.value.what == "now.md"
    doc = brain.write("notes//sub/./x.md", "one\n")
    assert doc.path == "notes/sub/x.md"
    assert brain.read("notes/sub/../sub/x.md").path == "notes/sub/x.md"
    decomposed = brain.write("notes/cafe\u0301.md", "nfc\n")  # macOS hands out NFD names
    assert decomposed.path == unicodedata.normalize("NFC", "notes/caf\u00e9.md")
    assert brain.read("notes/caf\u00e9.md").text == "nfc\n"


@pytest.mark.parametrize("path", ["notes.txt", "x.md", "notes/x.txt", "notes/x.py", "notes/x.sh", "src/app.md",
                                  "Notes/x.md", "NOW.md", "notes/x.yml", "notes/md", "modules/x.MD"])
def test_writes_are_memory_markdown_only(brain, path):
    with pytest.raises(PathRefused) as err:
        brain.write(path, "x\n")
    assert err.value.reason == "not_memory"


@pytest.mark.parametrize("path", ["now.md", "focus.md", "notes/a/b/c.md", "workflows/release.md", "agents/me.md",
                                  "decisions/0001-x.md", "contracts/api.yml", "contracts/api.md",
                                  "modules/shop.md", "handoffs/t.md", "notes/caf\u00e9 menu.md"])
def test_memory_areas_are_writable(brain, path):
    assert brain.write(path, "x\n").path == path


def test_user_layers_take_markdown_in_any_folder_and_the_same_refusals(brain):
    assert brain.write("profile/notes.md", "x\n", layer="kernel").path == "profile/notes.md"
    for path in (".git/config", "x.txt", "runtime/x.md", "a\u202eb.md"):
        with pytest.raises(PathRefused):
            brain.write(path, "x\n", layer="personal")


def test_folder_paths_get_a_clear_error(brain):
    brain.write("notes/x.md", "x\n")
    for path in ("notes", "notes/", "./notes/.", "notes/x.md/y.md", "notes/x.md/", "notes/x.md/.", "now.md/"):
        with pytest.raises(PathRefused) as err:
            brain.write(path, "x\n")
        assert err.value.reason in ("folder", "not_memory")
        with pytest.raises(InvalidInput):
            brain.read(path)
    (brain.dir / "notes" / "dir.md").mkdir()
    with pytest.raises(PathRefused) as err:
        brain.write("notes/dir.md", "x\n")
    assert err.value.reason == "folder"


def test_long_names_are_written_or_clearly_refused(brain):
    longest = "notes/" + "n" * 252 + ".md"  # 255 bytes: the file system takes it, the temporary name is shortened
    assert brain.write(longest, "ok\n").path == longest
    assert brain.read(longest).text == "ok\n"
    wide = "notes/" + "\u00e9" * 127 + ".md"  # 257 bytes in UTF-8 for 130 characters
    before = snapshot(brain.dir)
    for path in ("notes/" + "n" * 253 + ".md", wide, "notes/" + "d" * 300 + "/x.md", "notes/" + "a/" * 600 + "x.md"):
        with pytest.raises(PathRefused) as err:
            brain.write(path, "x\n")
        assert err.value.reason == "too_long"
    assert snapshot(brain.dir) == before


# -- symlinks ---------------------------------------------------------------------------------------------
def test_a_symlinked_file_is_never_read_nor_written_through(brain, outside):
    (brain.dir / "notes" / "leak.md").symlink_to(outside / "passwd")
    (brain.dir / "notes" / "inside.md").symlink_to(brain.dir / "focus.md")
    for path in ("notes/leak.md", "notes/inside.md", "./notes//leak.md"):
        with pytest.raises(PathRefused) as err:
            brain.read(path)
        assert err.value.reason == "symlink"
        with pytest.raises(PathRefused):
            brain.write(path, "overwritten\n")
    assert CANARY in (outside / "passwd").read_text()
    assert "overwritten" not in (brain.dir / "focus.md").read_text()


def test_a_symlinked_folder_creates_nothing_outside(brain, outside):
    (brain.dir / "notes" / "ext").symlink_to(outside)
    before_outside = snapshot(outside)
    for path in ("notes/ext/new.md", "notes/ext/deep/er/new.md", "notes/ext/passwd.md", "notes/ext/../ext/x.md"):
        with pytest.raises(PathRefused) as err:
            brain.write(path, "planted\n")
        assert err.value.reason == "symlink"
    with pytest.raises(PathRefused):
        brain.read("notes/ext/passwd")
    assert snapshot(outside) == before_outside
    with pytest.raises(PathRefused):
        brain.memory.list("notes/ext")


def test_the_brain_folder_holding_a_link_to_a_whole_area(brain, outside):
    import shutil

    shutil.rmtree(brain.dir / "decisions")
    (brain.dir / "decisions").symlink_to(outside)
    before = snapshot(outside)
    with pytest.raises(PathRefused):
        brain.write("decisions/0001-x.md", "x\n")
    assert snapshot(outside) == before


def test_write_does_not_follow_a_link_swapped_in_after_the_check(brain, outside):
    """The write walks folders with O_NOFOLLOW: a link that appears between check and write is refused."""
    from brain.memory.files import _open_folder

    notes = brain.dir / "notes"
    (notes / "later").mkdir()
    norm = brain.memory.confine("notes/later/deeper/x.md", write=True)  # checked while later/ is a folder
    (notes / "later").rmdir()
    (notes / "later").symlink_to(outside)  # swapped in before the write walks the folders
    with pytest.raises(PathRefused) as err:
        _open_folder(brain.memory.root, norm.split("/")[:-1], create=True, shown=norm)
    assert err.value.reason == "symlink"
    assert not (outside / "deeper").exists()


# -- properties -------------------------------------------------------------------------------------------
FORBIDDEN_TARGETS = ["runtime/brain.db", "runtime/tokens.json", "brain.yml", "brain.local.yml", ".gitignore",
                     ".git/config", ".git/hooks/pre-commit", "notes/.git/config", "notes/.gitattributes"]


def _respell(draw, target: str) -> str:
    parts = target.split("/")
    out: list[str] = []
    for part in parts:
        for _ in range(draw(st.integers(0, 2))):
            choice = draw(st.sampled_from(["dot", "detour", "empty"]))
            out += {"dot": ["."], "detour": [draw(st.sampled_from(["notes", "x", "workflows", "a b"])), ".."],
                    "empty": [""]}[choice]
        cased = "".join(c.upper() if draw(st.booleans()) else c for c in part)
        if draw(st.booleans()):
            cased = unicodedata.normalize("NFD", cased)
        out.append(cased)
    text = "/".join(out)
    return ("./" + text) if draw(st.booleans()) else text


@st.composite
def forbidden_spellings(draw):
    target = draw(st.sampled_from(FORBIDDEN_TARGETS))
    return target, _respell(draw, target)


@settings(max_examples=400, deadline=None)
@given(forbidden_spellings())
def test_any_spelling_of_a_forbidden_target_is_refused(case):
    from brain.memory.paths import PROJECT_AREAS, check_memory_path

    target, path = case
    with pytest.raises(PathEscape):
        check_memory_path(path, write=True, areas=PROJECT_AREAS)
    if target != "brain.yml":  # brain.yml may be read; everything else on the list may not
        with pytest.raises(PathEscape):
            check_memory_path(path, write=False)


COMPONENTS = st.sampled_from(["notes", "now.md", "x.md", "..", ".", "", "runtime", "RUNTIME", ".git", ".GIT",
                              "brain.yml", "Brain.yml", "brain.local.yml", ".gitignore", "sub", "caf\u00e9.md",
                              "a\u202eb.md", "x\x07.md", "workflows", "contracts", "api.yml", "~", "git~1",
                              "modules", "decisions", "n" * 255, "\uff32untime",
                              "lnk_rt", "lnk_out", "lnk_git", "lnk_file.md"])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(COMPONENTS, min_size=1, max_size=6), st.booleans())
def test_every_accepted_path_stays_inside_and_is_not_forbidden(parts, write):
    from brain.memory.paths import PROJECT_AREAS, check_memory_path, forbidden_key

    raw = "/".join(parts)
    try:
        norm = check_memory_path(raw, write=write, areas=PROJECT_AREAS)
    except PathEscape:
        return
    root = "/brain-root"
    resolved = os.path.normpath(os.path.join(root, norm))
    assert resolved.startswith(root + "/")
    assert resolved == os.path.join(root, norm)  # already normal: no '.', '..' or '//' left
    keys = [forbidden_key(p) for p in norm.split("/")]
    assert not any(k.startswith(".") or k == "git~1" for k in keys)
    assert keys[0] not in ("runtime", "brain.local.yml")
    assert unicodedata.normalize("NFC", norm) == norm
    assert all(unicodedata.category(c)[0] != "C" for c in norm)
    if write:
        assert keys[0] != "brain.yml" and norm.endswith((".md", ".yml"))
        assert norm in PROJECT_AREAS.files or norm.split("/")[0] in PROJECT_AREAS.folders


def test_accepted_random_paths_land_inside_the_brain_on_disk(tmp_path):
    """The property above, end to end and with links planted where the random paths go: every
    path the library accepts is written to a regular file under .brain/, nothing else changes."""
    repo = tmp_path / "p"
    b = brainlib.init(repo)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    away = tmp_path / "away"
    away.mkdir()
    for area in ("notes", "workflows"):
        (b.dir / area / "lnk_rt").symlink_to(b.dir / "runtime")
        (b.dir / area / "lnk_out").symlink_to(away)
        (b.dir / area / "lnk_git").symlink_to(repo / ".git")
        (b.dir / area / "lnk_file.md").symlink_to(b.dir / "brain.yml")
    b.write("notes/first.md", "x\n")  # runtime/write.lock exists from here on
    guarded = {"away": away, "git": repo / ".git", "runtime": b.dir / "runtime"}
    before = {name: snapshot(folder) for name, folder in guarded.items()}
    settings_before = (b.dir / "brain.yml").read_bytes()

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(COMPONENTS, min_size=1, max_size=5))
    def check(parts):
        raw = "/".join(parts)
        try:
            doc = b.write(raw, "x\n")
        except (PathEscape, TooLarge):
            return
        real = b.dir / doc.path
        assert real.is_file() and not real.is_symlink()
        assert b.dir in real.resolve().parents
        assert not doc.path.startswith(("notes/lnk_", "workflows/lnk_"))  # never through a planted link

    check()
    assert {name: snapshot(folder) for name, folder in guarded.items()} == before
    assert (b.dir / "brain.yml").read_bytes() == settings_before


# -- the other doors --------------------------------------------------------------------------------------
def run_cli(repo: Path, *args: str, stdin: str = "x\n") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, input=stdin, capture_output=True,
                          text=True, timeout=60, env=os.environ)


@pytest.mark.parametrize("path", [".git/config", "RUNTIME/tokens.json", "Brain.yml", "brain.local.yml",
                                  "notes/\u202ex.md", "notes/" + "n" * 300 + ".md", "notes", "notes/",
                                  "./runtime/x.md", "notes/../.gitignore", "../escape.md"])
def test_cli_write_refusals_exit_2_with_one_line(brain, repo, path):
    before = snapshot(brain.dir)
    out = run_cli(repo, "write", "--path", path)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and out.stderr.startswith("error: ")
    assert snapshot(brain.dir) == before


def test_cli_json_error_carries_the_reason(brain, repo):
    out = run_cli(repo, "write", "--path", ".GIT/config", "--json")
    assert out.returncode == 2
    import json

    error = json.loads(out.stderr.strip().splitlines()[-1])
    assert error["error"] == "path_refused" and error["reason"] == "hidden"


def test_cli_read_refusals_and_long_name(brain, repo, outside):
    (brain.dir / "notes" / "leak.md").symlink_to(outside / "passwd")
    for path in ("runtime/brain.db", "brain.local.yml", "notes/leak.md", ".git/config"):
        out = run_cli(repo, "read", path)
        assert out.returncode == 2, (path, out.stderr)
        assert CANARY not in out.stdout + out.stderr
    long_ok = "notes/" + "n" * 252 + ".md"
    assert run_cli(repo, "write", "--path", long_ok).returncode == 0
    assert run_cli(repo, "read", long_ok).stdout == "x\n"


def test_cli_named_targets_take_the_same_rule(brain, repo):
    out = run_cli(repo, "write", "note", "a\u202eb")
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_mcp_tools_refuse_through_the_rule(brain, repo, outside):
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, with_client

    (brain.dir / "notes" / "leak.md").symlink_to(outside / "passwd")
    before = snapshot(brain.dir)

    async def body(client):
        calls = [("brain_write", {"path": ".GIT/config", "text": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}),
                 ("brain_write", {"path": "brain.yml", "text": "version: 1\n"}),
                 ("brain_write", {"path": "Runtime/tokens.json", "text": "{}"}),
                 ("brain_write", {"path": "notes/" + "n" * 300 + ".md", "text": "x"}),
                 ("brain_write", {"path": "notes/leak.md", "text": "x"}),
                 ("brain_write", {"path": "notes/", "text": "x"}),
                 ("brain_read", {"path": "notes/leak.md"}),
                 ("brain_read", {"path": "brain.local.yml"}),
                 ("brain_read", {"path": "./runtime/brain.db"})]
        return [await client.call_tool(name, args) for name, args in calls]

    forwarded = {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}  # the server runs the code under test
    results = with_client(stdio_params(repo, **forwarded), body)
    for result in results:
        assert result.is_error
        assert result.structured_content["error"] in ("path_refused", "path_escape")
        assert CANARY not in str(result.content)
    assert snapshot(brain.dir) == before


def test_web_memory_browser_refuses_through_the_rule(brain, outside):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from brain.web.app import create_app

    (brain.dir / "notes" / "leak.md").symlink_to(outside / "passwd")
    (brain.dir / "brain.local.yml").write_text("backend: postgresql://u:hunter2@db/x\n")
    brain.write("notes/fine.md", "# Fine\n")
    with TestClient(create_app(brain, warm=False), base_url="http://127.0.0.1:8766") as client:
        for path in ("notes/leak.md", "brain.local.yml", "BRAIN.LOCAL.YML", ".git/config", "RUNTIME/brain.db",
                     "notes/%E2%80%AEx.md"):
            response = client.get(f"/memory/doc/{path}")
            assert response.status_code == 400, (path, response.status_code)
            assert CANARY not in response.text and "hunter2" not in response.text
        assert client.get("/memory/doc/notes/fine.md").status_code == 200
        overview = client.get("/memory")
        assert overview.status_code == 200 and "leak.md" not in overview.text


# -- derived readers never read through a link -----------------------------------------------------------
def _plant_links(b, outside: Path) -> None:
    (outside / "decision.md").write_text(f"# 0007. Leak {CANARY}\n\n- Status: accepted\n\n{CANARY}\n")
    (outside / "profile.md").write_text(f"---\nname: evil\ntier: always\n---\n{CANARY}\n")
    (outside / "dir").mkdir()
    (outside / "dir" / "inner.md").write_text(f"# inner {CANARY}\n")
    (b.dir / "notes" / "leak.md").symlink_to(outside / "passwd")
    (b.dir / "notes" / "linked").symlink_to(outside / "dir")
    (b.dir / "decisions" / "0007-leak.md").symlink_to(outside / "decision.md")
    (b.dir / "agents" / "evil.md").symlink_to(outside / "profile.md")
    (b.dir / "workflows" / "leak.md").symlink_to(outside / "passwd")
    (b.dir / "modules" / "leak.md").symlink_to(outside / "passwd")


def test_index_decisions_boot_profiles_never_read_through_links(brain, outside):
    brain.write("notes/real.md", "# Real\n\nthe canary word is not here\n")
    _plant_links(brain, outside)
    brain.reindex(rebuild=True)
    assert all(CANARY not in str(hit) for hit in brain.search(CANARY))
    assert all(CANARY not in str(hit) for hit in brain.search("inner"))
    assert all(hit["path"] != "notes/leak.md" for hit in brain.search("root"))
    assert 7 not in [d["number"] for d in brain.decisions(include_inactive=True)]
    brain.reindex_decisions()
    assert CANARY not in (brain.dir / "decisions.md").read_text()
    assert "evil" not in [p.name for p in brain.profiles()]
    assert "leak" not in brain.workflows()
    boot = brain.boot("anything about leak and root", budget=8000)
    assert CANARY not in boot.text
    assert brain.memory.list("notes") == ["notes/real.md"]


def test_kernel_layer_profile_links_are_not_followed(brain, outside):
    (outside / "profile.md").write_text(f"---\nname: evil\ntier: always\n---\n{CANARY}\n")
    agents = brain.layers.path("kernel") / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "evil.md").symlink_to(outside / "profile.md")
    assert "evil" not in [p.name for p in brain.profiles()]
    assert CANARY not in brain.boot(None, budget=8000).text


# -- temporary files of a killed writer ---------------------------------------------------------------------
WRITER = r"""
import sys
import brain
b = brain.open(sys.argv[1])
text = "x" * 200_000
print("ready", flush=True)
while True:
    b.write("notes/big.md", text)
"""


def _temps(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(".") and n.endswith(".tmp"))


def test_a_killed_writers_temp_file_is_removed_by_the_next_write_and_ignored_by_git(brain, repo):
    notes = brain.dir / "notes"
    left: list[str] = []
    for _ in range(200):  # bounded: each round kills a writer mid-write, most rounds leave a temp file
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(repo)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        spins = 0
        while not _temps(notes) and spins < 200_000:
            spins += 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        left = _temps(notes)
        if left:
            break
    assert left, "no round left a temporary file"
    ignored = subprocess.run(["git", "check-ignore", "-q", f".brain/notes/{left[0]}"], cwd=repo)
    assert ignored.returncode == 0
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
    assert ".tmp" not in status
    brain.write("notes/other.md", "next write\n")
    assert _temps(notes) == []


def test_a_live_writers_temp_file_is_kept(brain):
    notes = brain.dir / "notes"
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        name = f".x.md.{live.pid}.0123abcd.tmp"
        (notes / name).write_text("half a write")
        mine = f".y.md.{os.getpid()}.89abcdef.tmp"
        (notes / mine).write_text("half a write")
        brain.write("notes/next.md", "x\n")
        assert sorted(_temps(notes)) == sorted([name, mine])
    finally:
        live.stdin.close()
        live.wait(timeout=30)
    brain.write("notes/next.md", "y\n")
    assert _temps(notes) == [mine]
    old = notes / mine
    os.utime(old, (1_000_000, 1_000_000))  # older than the bound: stale even though the pid lives (pid reuse)
    brain.write("notes/next.md", "z\n")
    assert _temps(notes) == []


def test_an_existing_brain_gets_the_ignore_line_from_init(brain, repo):
    gitignore = brain.dir / ".gitignore"
    gitignore.write_text("# mine\nruntime/\nbrain.local.yml\n")
    brainlib.init(repo)
    lines = gitignore.read_text().splitlines()
    assert lines[0] == "# mine" and ".*.tmp" in lines
    brainlib.init(repo)
    assert gitignore.read_text().splitlines().count(".*.tmp") == 1


def test_not_found_is_still_not_found(brain):
    with pytest.raises(NotFound):
        brain.read("notes/absent.md")
    with tempfile.TemporaryDirectory() as other:
        assert not Path(other, "x.md").exists()


def test_doctor_names_a_missing_ignore_line_and_the_ignored_links(brain, repo, outside):
    import json

    (brain.dir / ".gitignore").write_text("runtime/\nbrain.local.yml\n")
    (brain.dir / "notes" / "leak.md").symlink_to(outside / "passwd")
    out = run_cli(repo, "doctor", "--json")
    checks = {c["check"]: c for c in json.loads(out.stdout)}
    assert checks["gitignore"]["level"] == "warning" and ".*.tmp" in checks["gitignore"]["detail"]
    assert checks["links"]["level"] == "warning" and "notes/leak.md" in checks["links"]["detail"]
    assert CANARY not in out.stdout
    assert run_cli(repo, "init").returncode == 0
    checks = {c["check"]: c for c in json.loads(run_cli(repo, "doctor", "--json").stdout)}
    assert checks["gitignore"]["ok"]


def test_a_decisions_folder_behind_a_link_is_neither_read_nor_written(brain, repo, outside):
    (outside / "adr").mkdir()
    (outside / "adr" / "0001-leak.md").write_text(f"# 1. Leak {CANARY}\n\n- Status: accepted\n\n{CANARY}\n")
    (repo / "docs").symlink_to(outside)
    with open(brain.dir / "brain.yml", "a") as handle:
        handle.write("decisions:\n  dir: docs/adr\n")
    b = brainlib.open(repo)
    assert b.decisions(include_inactive=True) == []
    b.reindex(rebuild=True)
    assert all(CANARY not in str(hit) for hit in b.search(CANARY))
    before = snapshot(outside)
    with pytest.raises(PathRefused):
        b.new_decision("Planted through a link")
    assert snapshot(outside) == before


def test_a_linked_handoff_is_left_out_of_the_boot(brain, outside):
    brain.record_turn(None, "alice", "where is the login code?", to="bob")
    thread = brain.thread_between("alice", "bob")
    handoff = brain.dir / "handoffs" / "local" / f"{thread}.md"  # a thread's handoff is machine-local
    assert handoff.is_file()
    handoff.unlink()
    handoff.symlink_to(outside / "passwd")
    boot = brain.boot(None, session="alice", budget=8000)
    assert CANARY not in boot.text
    assert all(CANARY not in doc.text for doc in brain.conversations.handoffs_for("alice"))


def test_a_name_on_disk_that_is_not_nfc_is_not_listed_as_memory(brain):
    (brain.dir / "workflows" / "cafe\u0301.md").write_text("# NFD name from another system\n")
    brain.write("workflows/plain.md", "# plain\n")
    assert brain.workflows() == ["plain"]
    assert brain.memory.list("workflows") == ["workflows/plain.md"]


def test_a_decisions_folder_nested_in_the_brain_is_writable(repo):
    b = brainlib.init(repo)
    with open(b.dir / "brain.yml", "a") as handle:
        handle.write("decisions:\n  dir: .brain/records/adr\n")
    b = brainlib.open(repo)
    record = b.new_decision("Keep records nested")
    assert record["path"] == ".brain/records/adr/0001-keep-records-nested.md"
    with pytest.raises(PathRefused):
        b.write("records/.git/config", "x\n")


def test_a_layer_folder_not_created_yet_is_made_by_its_first_write(brain):
    import shutil

    shutil.rmtree(brain.layers.path("personal"))
    assert brain.memory.__class__(brain.layers.path("personal")).list("") == []
    assert brain.write("me.md", "x\n", layer="personal").path == "me.md"
    assert brain.read("me.md", layer="personal").text == "x\n"


def test_init_over_a_cloned_brain_with_linked_folders_writes_nothing_outside(brain, repo, outside):
    import shutil

    shutil.rmtree(brain.dir / "workflows")
    (brain.dir / "workflows").symlink_to(outside)
    before = snapshot(outside)
    assert run_cli(repo, "init").returncode == 0
    assert snapshot(outside) == before


@given(st.text(alphabet=st.characters(max_codepoint=0x2FFF), max_size=12))
def test_the_ascii_shortcuts_compare_and_normalize_as_unicodedata_does(text):
    """forbidden_key and normalize_memory_path skip unicodedata for ASCII text: same answer as the full form."""
    from brain.memory.paths import forbidden_key, normalize_memory_path

    assert forbidden_key(text) == unicodedata.normalize("NFKC", text).casefold().rstrip(" .")
    rel = f"notes/{text}.md"
    try:
        got = normalize_memory_path(rel)
    except (PathRefused, PathEscape) as exc:
        got = type(exc)
    try:
        want = normalize_memory_path(unicodedata.normalize("NFC", rel))
    except (PathRefused, PathEscape) as exc:
        want = type(exc)
    assert got == want
