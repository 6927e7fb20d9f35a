"""Issue 12, class 2: brain never runs git where an attacker chose the configuration.

Hostile git configuration — fsmonitor, hooks (through `core.hooksPath` and in `.git/hooks`),
clean/smudge/process filters named in `.gitattributes` and `info/attributes`, an included
config file, diff and merge drivers, pager, editors, credential helper, askpass, ssh command,
gpg with signing forced on, alternate-refs command, a remote's upload/receive-pack, auto-gc —
is planted by hand: in a repository under `.brain/` nobody declared, as `.brain/.git`, as a
`.git` file pointing elsewhere, in a folder of a user-level layer, and in the project's own
`.git/config` (plus a local remote with hooks of its own). Every command that runs git is then
run as a real CLI subprocess and no canary may appear. Each planted repository is first
proven live: a plain `git status` there does touch its canary.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import brain as brainlib
from brain.errors import UntrustedRepository
from conftest import git

pytestmark = pytest.mark.timeout(300)

HOOK_NAMES = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-merge-commit", "post-merge",
              "pre-push", "post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc",
              "post-rewrite", "pre-receive", "update", "post-receive", "post-update", "push-to-checkout",
              "proc-receive", "pre-rebase", "fsmonitor-watchman")


class Canary:
    """Scripts that record in one file that they ran; ``fired()`` lists what did."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.file = folder / "CANARY"
        self.hook = folder / "hook.sh"  # records its name and arguments, exits 0
        self.hook.write_text(f'#!/bin/sh\nprintf "%s\\n" "$(basename "$0") $*" >> "{self.file}"\nexit 0\n')
        self.filter = folder / "filter.sh"  # records, then passes the content through (a working filter)
        self.filter.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{self.file}"\nshift\n'
                               'if [ $# -gt 0 ] && [ -f "$1" ]; then cat "$1"; else cat; fi\n')
        self.hooks_dir = folder / "hooks"
        self.hooks_dir.mkdir(exist_ok=True)
        for script in (self.hook, self.filter):
            script.chmod(0o755)
        for name in HOOK_NAMES:
            (self.hooks_dir / name).write_text(self.hook.read_text())
            (self.hooks_dir / name).chmod(0o755)

    def fired(self) -> list[str]:
        return self.file.read_text().splitlines() if self.file.exists() else []

    def reset(self) -> None:
        self.file.unlink(missing_ok=True)


def hostile_settings(c: Canary) -> list[tuple[str, str]]:
    h, f = c.hook, c.filter
    return [
        ("core.fsmonitor", f"{h} fsmonitor"),
        ("core.hooksPath", str(c.hooks_dir)),
        ("filter.evil.clean", f"{f} clean"), ("filter.evil.smudge", f"{f} smudge"),
        ("filter.evil.required", "true"),
        ("filter.evilproc.process", f"{h} process-filter"),
        ("diff.external", f"{h} diff-external"), ("diff.evil.textconv", f"{f} textconv"),
        ("diff.evil.command", f"{h} diff-command"),
        ("merge.evil.driver", f"{h} merge-driver %A %O %B"),
        ("core.pager", f"{h} pager"), ("pager.log", f"{h} pager-log"), ("pager.status", f"{h} pager-status"),
        ("core.editor", f"{h} editor"), ("sequence.editor", f"{h} sequence-editor"),
        ("credential.helper", f"!{h} credential"), ("core.askPass", f"{h} askpass"),
        ("core.sshCommand", f"{h} ssh"),
        ("gpg.program", f"{h} gpg"), ("commit.gpgSign", "true"), ("log.showSignature", "true"),
        ("core.alternateRefsCommand", f"{h} alternate-refs"),
        ("gc.auto", "1"), ("gc.autoDetach", "false"),
        ("protocol.ext.allow", "always"),
    ]


def plant(repo: Path, c: Canary, *, git_dir: Path | None = None) -> None:
    """Make ``repo`` hostile: configuration, hooks, attributes, an included config file."""
    git_dir = git_dir or repo / ".git"
    for key, value in hostile_settings(c):
        git(repo, "config", key, value)
    for name in HOOK_NAMES:
        (git_dir / "hooks").mkdir(exist_ok=True)
        (git_dir / "hooks" / name).write_text(c.hook.read_text())
        (git_dir / "hooks" / name).chmod(0o755)
    included = c.folder / f"included-{repo.name}.cfg"
    included.write_text(f'[filter "inc"]\n\tclean = {c.filter} include-clean\n\tsmudge = {c.filter} include-smudge\n')
    git(repo, "config", "include.path", str(included))
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text("*.md filter=inc diff=evil merge=evil\n")
    if not (repo / ".gitattributes").exists():
        (repo / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n*.txt filter=evilproc\n")


def prove_live(repo: Path, c: Canary) -> None:
    """A plain git command in ``repo`` does run the planted code (so a silent canary means something)."""
    (repo / "touched.md").write_text("x\n")
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    subprocess.run(["git", "add", "touched.md"], cwd=repo, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert c.fired(), f"the hostile configuration in {repo} does not fire: the test would prove nothing"
    subprocess.run(["git", "reset", "-q"], cwd=repo, capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
                   env={**os.environ, "GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "core.hooksPath",
                        "GIT_CONFIG_VALUE_0": "/dev/null", "GIT_CONFIG_KEY_1": "core.fsmonitor",
                        "GIT_CONFIG_VALUE_1": "false"})
    (repo / "touched.md").unlink()
    c.reset()


def cli(repo: Path, *args: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL, timeout=120,
                          env={**os.environ, **(env or {})})


def run_every_git_command(repo: Path, *, layer_write: bool = False, env: dict | None = None) -> dict[str, subprocess.CompletedProcess]:
    """Each CLI command that runs git, with commit-on-write on; the results by name."""
    runs = {
        "write now": cli(repo, "write", "now", stdin="# Now\n\nplan\n", env=env),
        "write note": cli(repo, "write", "note", "plan", stdin="a plan\n", env=env),
        "sync dry-run": cli(repo, "sync", "--dry-run", "--json", env=env),
        "sync": cli(repo, "sync", "--json", env=env),
        "boot": cli(repo, "boot", "--task", "fix the payment retry", env=env),
        "map": cli(repo, "map", env=env),
        "state": cli(repo, "state", env=env),
        "stats": cli(repo, "stats", "--no-discover", env=env),
        "install git-hook": cli(repo, "install", "git-hook", "--json", env=env),
    }
    if layer_write:
        runs["write kernel"] = cli(repo, "write", "--layer", "kernel", "--path", "agents/helper.md",
                                   stdin="# helper\n", env=env)
    return runs


def commit_on_write(b) -> None:
    (b.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n")


# -- planted by hand inside the memory ---------------------------------------------------------
@pytest.fixture
def project(brain, repo):
    commit_on_write(brain)
    (repo / "pay").mkdir()
    (repo / "pay" / "__init__.py").write_text("def retry(n: int) -> bool:\n    return n < 3\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain and code")
    return brain


def _plant_notes(b, c, tmp_path):
    nested = b.dir / "notes"
    git(nested, "init", "-q", "-b", "main")
    plant(nested, c)
    return nested


def _plant_brain_dir(b, c, tmp_path):
    git(b.dir, "init", "-q", "-b", "main")
    plant(b.dir, c)
    return b.dir


def _plant_gitfile(b, c, tmp_path):
    nested = b.dir / "notes" / "todo"
    nested.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "-b", "main", f"--separate-git-dir={elsewhere}", str(nested))
    assert (nested / ".git").is_file()
    plant(nested, c, git_dir=elsewhere)
    return nested


def _plant_layer(b, c, tmp_path):
    kernel = b.layers.path("kernel")
    git(kernel, "init", "-q", "-b", "main")
    git(kernel, "add", "-A")
    git(kernel, "commit", "-q", "--allow-empty", "-m", "kernel")
    nested = kernel / "agents"
    git(nested, "init", "-q", "-b", "main")
    plant(nested, c)
    return nested


PLANTS = {"notes": _plant_notes, "brain-dir": _plant_brain_dir, "gitfile": _plant_gitfile, "layer": _plant_layer}


@pytest.mark.parametrize("where", sorted(PLANTS))
def test_a_repository_planted_inside_the_memory_never_runs(where, project, tmp_path):
    c = Canary(tmp_path / "canary")
    planted = PLANTS[where](project, c, tmp_path)
    prove_live(planted, c)
    head = git(project.repo, "rev-parse", "HEAD")
    runs = run_every_git_command(project.repo, layer_write=(where == "layer"))
    assert c.fired() == [], f"planted code ran: {c.fired()}"
    for name, out in runs.items():
        if not name.startswith("sync"):
            assert out.returncode == 0, (name, out.stderr)
    for sync in (runs["sync dry-run"], runs["sync"]):  # the stray repository is reported, never run
        assert sync.returncode == UntrustedRepository.exit_code
        report = json.loads(sync.stdout)
        refused = [r for r in report["repos"] if r["status"] == "refused"]
        assert [Path(r["repo"]) for r in refused] == [planted.resolve()]
        assert json.loads(sync.stderr)["error"] == UntrustedRepository.kind
    planted_git = planted / ".git"
    if planted_git.is_dir():
        assert subprocess.run(["git", "--git-dir", str(planted_git), "rev-parse", "-q", "--verify", "HEAD"],
                              capture_output=True).returncode != 0  # nothing was ever committed there
    tree = git(project.repo, "ls-tree", "-r", "HEAD")
    assert "160000" not in tree  # never added as a gitlink
    if where != "brain-dir":  # the project itself still got its memory commits
        assert git(project.repo, "rev-parse", "HEAD") != head


def test_a_declared_satellite_is_committed_and_synced_an_undeclared_one_refused(project, tmp_path):
    b = project
    declared, undeclared = b.dir / "notes" / "team", b.dir / "notes" / "stray"
    for folder in (declared, undeclared):
        folder.mkdir(parents=True)
        git(folder, "init", "-q", "-b", "main")
    (b.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n  satellites: [notes/team]\n")
    b = brainlib.open_brain(b.repo)
    b.write("notes/team/plan.md", "the plan\n", role="lead")
    assert git(declared, "log", "--format=%s").startswith("memory: plan.md by lead")
    b.write("notes/stray/x.md", "x\n", role="lead")  # written, never committed in the stray repository
    assert (undeclared / "x.md").read_text() == "x\n"
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=undeclared,
                          capture_output=True).returncode != 0
    report = b.sync(push=False)
    by_status = {(r.kind, r.status) for r in report.repos}
    assert ("satellite", "no_remote") in by_status and ("untrusted", "refused") in by_status
    # a declared satellite whose .git is a file (it could point at any repository) is refused too
    pointed = b.dir / "notes" / "pointed"
    git(tmp_path, "init", "-q", f"--separate-git-dir={tmp_path / 'pointed.git'}", str(pointed))
    (b.dir / "brain.yml").write_text("version: 1\nsync:\n  satellites: [notes/team, notes/pointed]\n")
    report = brainlib.open_brain(b.repo).sync(push=False)
    assert {(r.repo, r.status) for r in report.refused} == {(str(pointed), "refused"), (str(undeclared), "refused")}
    tracked = git(b.repo, "ls-files", "-s", ".brain/notes")
    assert ".brain/notes/team" not in tracked and ".brain/notes/stray" not in tracked


@pytest.mark.parametrize("entry", ["../outside", "/tmp", "notes/../../x", "runtime/x", "kernel:../personal"])
def test_a_satellite_outside_the_memory_is_a_settings_error(project, entry):
    from brain.errors import SettingsError

    (project.dir / "brain.yml").write_text("version: 1\nsync:\n  satellites: [notes/team, 'kernel:agents']\n")
    brainlib.open_brain(project.repo).sync(dry_run=True)  # inside the memory: accepted
    (project.dir / "brain.yml").write_text(f"version: 1\nsync:\n  satellites: ['{entry}']\n")
    with pytest.raises(SettingsError) as info:
        brainlib.open_brain(project.repo).sync(dry_run=True)
    assert info.value.key == "sync.satellites" and info.value.got == entry


# -- the project's own configuration -----------------------------------------------------------
@pytest.fixture
def hostile_project(tmp_path, project):
    """The project with hostile settings in its own .git/config, a committed .gitattributes naming
    the drivers, and a local bare remote with hooks and an alternate-refs command of its own; a
    second clone has pushed a change to a memory file brain will also change (so the merge needs a
    driver)."""
    b = project
    repo = b.repo
    (b.dir / "notes" / "shared.md").write_text("one\ntwo\nthree\nfour\nfive\nsix\n")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "shared note")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "fetch", "-q", "origin")
    git(repo, "branch", "-q", "--set-upstream-to=origin/main", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / ".brain" / "notes" / "shared.md").write_text("ONE\ntwo\nthree\nfour\nfive\nsix\n")
    git(other, "commit", "-q", "-am", "remote edit")
    git(other, "push", "-q", "origin", "main")
    c = Canary(tmp_path / "canary")
    plant(repo, c)
    git(repo, "config", "remote.origin.uploadpack", f"{c.hook} uploadpack; git-upload-pack")
    git(repo, "config", "remote.origin.receivepack", f"{c.hook} receivepack; git-receive-pack")
    git(remote, "config", "core.hooksPath", str(c.hooks_dir))
    git(remote, "config", "core.alternateRefsCommand", f"{c.hook} remote-alternate-refs")
    alternate = tmp_path / "alternate.git"
    git(tmp_path, "init", "-q", "--bare", str(alternate))
    (remote / "objects" / "info" / "alternates").write_text(f"{alternate / 'objects'}\n")
    prove_live(repo, c)
    return b, remote, c


def test_the_projects_own_hostile_configuration_is_neutralized(hostile_project):
    b, remote, c = hostile_project
    head = git(b.repo, "rev-parse", "HEAD")
    (b.dir / "notes" / "mine.md").write_text("mine\n")
    note = cli(b.repo, "write", "--path", "notes/shared.md", stdin="one\ntwo\nthree\nfour\nfive\nSIX\n")
    assert note.returncode == 0, note.stderr
    runs = run_every_git_command(b.repo)
    assert c.fired() == [], f"hostile configuration ran: {c.fired()}"
    hook = runs.pop("install git-hook")  # the repository's own core.hooksPath points outside it: refused
    assert hook.returncode == 2 and json.loads(hook.stderr)["field"] == "hook", hook.stderr
    assert sorted(p.name for p in c.hooks_dir.iterdir()) == sorted(HOOK_NAMES)  # nothing written there
    for name, out in runs.items():
        assert out.returncode == 0, (name, out.stdout, out.stderr)
    assert git(b.repo, "rev-parse", "HEAD") != head  # brain did commit, merge and push
    (project_repo,) = json.loads(runs["sync"].stdout)["repos"]
    assert project_repo["status"] == "pulled_pushed" and project_repo["pulled"] == 1
    assert git(remote, "show", "main:.brain/notes/shared.md") == "ONE\ntwo\nthree\nfour\nfive\nSIX\n"


def test_inherited_git_variables_do_not_choose_the_repository(project, tmp_path):
    """Inside a git hook, GIT_DIR / GIT_CONFIG_PARAMETERS are set: brain still runs in its own repository."""
    c = Canary(tmp_path / "canary")
    hostile = tmp_path / "hostile"
    git(tmp_path, "init", "-q", "-b", "main", str(hostile))
    plant(hostile, c)
    prove_live(hostile, c)
    env = {"GIT_DIR": str(hostile / ".git"), "GIT_WORK_TREE": str(hostile),
           "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{c.hook} fsmonitor-param'"}
    for args in (("state", "--json"), ("boot", "--task", "fix the payment retry")):
        out = cli(project.repo, *args, env=env)
        assert out.returncode == 0, out.stderr
    assert c.fired() == []
    state = json.loads(cli(project.repo, "state", "--json", env=env).stdout)
    assert state["git"]["head"] == git(project.repo, "rev-parse", "--short", "HEAD").strip()


def test_the_hook_goes_where_the_user_not_the_repository_chose(project, tmp_path):
    """core.hooksPath inside the repository (husky) or from the user's global config is honoured; the
    repository's own pointing elsewhere is refused (brain would write a file there)."""
    git(project.repo, "config", "core.hooksPath", ".husky/_")
    out = cli(project.repo, "install", "git-hook", "--json")
    assert out.returncode == 0 and Path(json.loads(out.stdout)["hook"]) == project.repo / ".husky" / "_" / "pre-commit"
    elsewhere = tmp_path / "elsewhere-hooks"
    git(project.repo, "config", "core.hooksPath", str(elsewhere))
    out = cli(project.repo, "install", "git-hook", "--json")
    assert out.returncode == 2 and json.loads(out.stderr)["field"] == "hook"
    assert not elsewhere.exists()
    git(project.repo, "config", "--unset", "core.hooksPath")
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text(f"[core]\n\thooksPath = {elsewhere}\n")
    out = cli(project.repo, "install", "git-hook", "--json", env={"GIT_CONFIG_GLOBAL": str(global_config)})
    assert out.returncode == 0, out.stderr
    assert (elsewhere / "pre-commit").exists()


def test_a_git_planted_in_the_project_is_never_the_git_brain_runs(project, tmp_path):
    """With `.` (or an empty entry) on PATH, a bare `git` would resolve inside the repository brain runs in."""
    c = Canary(tmp_path / "canary")
    for folder in (project.repo, project.dir / "notes"):
        (folder / "git").write_text(c.hook.read_text())
        (folder / "git").chmod(0o755)
    env = {"PATH": f".{os.pathsep}{os.pathsep}{os.environ['PATH']}"}
    for args, stdin in ((("write", "now"), "# Now\n\nplan\n"), (("boot", "--task", "fix the retry"), None),
                        (("state", "--json"), None), (("map",), None), (("sync", "--json"), None)):
        out = cli(project.repo, *args, stdin=stdin, env=env)
        assert out.returncode == 0, (args, out.stderr)
    assert c.fired() == []
    assert json.loads(cli(project.repo, "state", "--json", env=env).stdout)["git"]["repository"] is True


# -- remotes: protocols, ssh command, credential helpers ---------------------------------------
def test_ssh_command_from_the_repository_is_replaced_by_the_users_own(project, tmp_path):
    c = Canary(tmp_path / "canary")
    trusted = Canary(tmp_path / "trusted")
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text(f"[core]\n\tsshCommand = {trusted.hook} trusted-ssh\n")
    git(project.repo, "remote", "add", "origin", "ssh://git@example.invalid/memory.git")
    git(project.repo, "config", "core.sshCommand", f"{c.hook} ssh")
    out = cli(project.repo, "sync", "--json", env={"GIT_CONFIG_GLOBAL": str(global_config)})
    assert out.returncode == 7  # the fetch fails: the trusted command exits without talking git
    assert c.fired() == []
    assert any(line.startswith("hook.sh trusted-ssh") for line in trusted.fired())


class _AskForPassword(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the http.server interface
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="memory"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_credential_helpers_from_the_repository_never_run_the_users_own_do(project, tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AskForPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        c = Canary(tmp_path / "canary")
        trusted = Canary(tmp_path / "trusted")
        global_config = tmp_path / "global.gitconfig"
        global_config.write_text(f"[credential]\n\thelper = !{trusted.hook} trusted-helper\n")
        url = f"http://127.0.0.1:{server.server_address[1]}/memory.git"
        git(project.repo, "remote", "add", "origin", url)
        git(project.repo, "config", "credential.helper", f"!{c.hook} helper")
        git(project.repo, "config", f"credential.{url}.helper", f"!{c.hook} url-helper")
        out = cli(project.repo, "sync", "--json", env={"GIT_CONFIG_GLOBAL": str(global_config)})
        assert out.returncode == 7
        assert c.fired() == []
        assert any("trusted-helper" in line for line in trusted.fired())
    finally:
        server.shutdown()
        server.server_close()


def test_ext_transport_is_refused_even_when_the_repository_allows_it(project, tmp_path):
    c = Canary(tmp_path / "canary")
    git(project.repo, "remote", "add", "origin", f"ext::{c.hook} ext-transport %S")
    git(project.repo, "config", "protocol.ext.allow", "always")
    git(project.repo, "config", "protocol.allow", "always")
    out = cli(project.repo, "sync", "--json")
    assert out.returncode == 7
    assert c.fired() == []


def test_a_remote_named_like_an_option_stays_a_name(project, tmp_path):
    """branch.main.remote = `--upload-pack=sh` (and a file named like the branch) must not become an option."""
    c = Canary(tmp_path / "canary")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    name = "--upload-pack=sh"
    git(project.repo, "config", f"remote.{name}.url", str(remote))
    git(project.repo, "config", f"remote.{name}.fetch", f"+refs/heads/*:refs/remotes/{name}/*")
    git(project.repo, "update-ref", f"refs/remotes/{name}/main", "HEAD")
    git(project.repo, "config", "branch.main.remote", name)
    git(project.repo, "config", "branch.main.merge", "refs/heads/main")
    (project.repo / "main").write_text(f"{c.hook} option-injection\n")
    out = cli(project.repo, "sync", "--json")
    assert c.fired() == []
    assert out.returncode == 0, out.stderr
    assert git(remote, "rev-parse", "main") == git(project.repo, "rev-parse", "HEAD")


def test_a_git_that_ignores_config_count_is_refused_where_drivers_are_configured(project, tmp_path):
    """Before git 2.31 GIT_CONFIG_COUNT is silently ignored: the scanned overrides would be lost. The
    fixed protections still hold (they go as -c), and a repository whose config names programs is refused."""
    import shutil

    c = Canary(tmp_path / "canary")
    plant(project.repo, c)
    prove_live(project.repo, c)
    old_git = tmp_path / "old-git"
    old_git.mkdir()
    (old_git / "git").write_text(f'#!/bin/sh\nunset GIT_CONFIG_COUNT\nexec {shutil.which("git")} "$@"\n')
    (old_git / "git").chmod(0o755)
    env = {"PATH": f"{old_git}{os.pathsep}{os.environ['PATH']}"}
    head = git(project.repo, "rev-parse", "HEAD")
    for args, stdin in ((("write", "now"), "# Now\n\nold git\n"), (("boot", "--task", "fix the retry"), None),
                        (("state", "--json"), None), (("map",), None)):
        out = cli(project.repo, *args, stdin=stdin, env=env)
        assert out.returncode == 0, (args, out.stderr)
    sync = cli(project.repo, "sync", "--json", env=env)
    assert c.fired() == []
    assert git(project.repo, "rev-parse", "HEAD") == head  # refused, not committed with the drivers on
    assert sync.returncode == 7 and json.loads(sync.stdout)["repos"][0]["status"] == "refused"


# -- git's own ownership check stays on ---------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown the repository")
def test_a_repository_owned_by_someone_else_is_left_to_gits_ownership_check(project, tmp_path):
    c = Canary(tmp_path / "canary")
    plant(project.repo, c)
    prove_live(project.repo, c)
    subprocess.run(["chown", "-R", "nobody", str(project.repo / ".git")], check=True)
    subprocess.run(["chown", "nobody", str(project.repo)], check=True)
    out = cli(project.repo, "state", "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout)["git"]["repository"] is False  # git refused it: dubious ownership
    cli(project.repo, "boot", "--task", "fix the payment retry")
    sync = cli(project.repo, "sync", "--json")
    assert sync.returncode == 7
    assert c.fired() == []


# -- through the API: a .git is never writable (path confinement, issue 12 class 1) --------------
@pytest.mark.parametrize("path", ["notes/.git/config", ".git/config", "notes/x/.GIT/hooks/post-commit"])
def test_the_cli_refuses_to_write_a_git_folder(project, path):
    out = cli(project.repo, "write", "--path", path, stdin="[core]\n\tfsmonitor = touch /tmp/x\n")
    assert out.returncode == 2
    assert not (project.dir / path).exists()


def test_mcp_brain_write_refuses_a_git_folder(project):
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, with_client

    async def body(client):
        return await client.call_tool("brain_write", {"path": "notes/.git/config",
                                                      "text": "[core]\n\tfsmonitor = touch /tmp/x\n"})

    result = with_client(stdio_params(project.repo), body)
    assert result.is_error
    assert not (project.dir / "notes" / ".git").exists()


# -- the project is a linked worktree: its configuration lives in the main repository ----------
def test_a_linked_worktree_gets_the_main_repositorys_configuration_neutralized(tmp_path, repo):
    c = Canary(tmp_path / "canary")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    b = brainlib.init(linked)
    commit_on_write(b)
    git(linked, "add", "-A")
    git(linked, "commit", "-q", "-m", "brain")
    git(repo, "config", "extensions.worktreeConfig", "true")
    plant(repo, c)  # main repository's .git/config, hooks, info/attributes
    git(linked, "config", "--worktree", "filter.wt.clean", f"{c.filter} worktree-clean")
    (linked / ".gitattributes").write_text("* filter=wt\n")
    prove_live(linked, c)
    head = git(linked, "rev-parse", "HEAD")
    for args, stdin in ((("write", "now"), "# Now\n\nin the worktree\n"), (("boot", "--task", "plan"), None),
                        (("state", "--json"), None), (("sync", "--json"), None)):
        out = cli(linked, *args, stdin=stdin)
        assert out.returncode == 0, (args, out.stderr)
    assert c.fired() == []
    assert git(linked, "rev-parse", "HEAD") != head


# -- the cheap pre-check never skips a configuration that sets a key to neutralize -------------
from brain.gitsafe import _config_mentions_drivers, git_binary, overrides_for  # noqa: E402

CONFIG_VARIANTS = [
    '[filter "x"]\n\tclean = C\n', '[FiLtEr "x"]\n\tsmudge = C\n', "[filter.x]\n\tprocess = C\n",
    '[filter "a\\"b"]\n\tclean = C\n', '[filter   "sp ace"]\n\tclean = C\n', "[core]\n\tsshCommand = C\n",
    "[core] SSHCOMMAND = C\n", '[remote "o"]\n\tuploadpack = C\n', '[remote "o"]\n\treceivePack = C\n',
    '[credential "https://x"]\n\thelper = C\n', "[credential]\n\thelper = C\n", '[gpg "ssh"]\n\tprogram = C\n',
    "[gpg]\n\tprogram = C\n", '[merge "m"]\n\tdriver = C\n', "[core]\n\taskPass = C\n",
    "[core]\n\talternateRefsCommand = C\n", "[core]\n\tgitProxy = C\n",
]


def _scan_entries(root: Path) -> list[tuple[str, str, str]]:
    out = subprocess.run(["git", "config", "--list", "--show-scope", "-z"], cwd=root, capture_output=True,
                         text=True, check=True).stdout.split("\0")
    return [(scope, *item.partition("\n")[::2]) for scope, item in zip(out[0::2], out[1::2])]


@pytest.mark.parametrize("text", CONFIG_VARIANTS)
def test_every_spelling_of_a_neutralized_key_is_seen_by_the_precheck(tmp_path, text):
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", str(root))
    assert not _config_mentions_drivers(root)  # a fresh repository: the scan is skipped
    with open(root / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(text)
    assert overrides_for(_scan_entries(root)), f"git does not read {text!r} as a key to neutralize"
    assert _config_mentions_drivers(root)


def test_an_included_file_is_followed(tmp_path):
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", str(root))
    (tmp_path / "inc.cfg").write_text('[filter "inc"]\n\tclean = C\n')
    git(root, "config", "include.path", str(tmp_path / "inc.cfg"))
    assert _config_mentions_drivers(root)
    assert ("filter.inc.clean", "") in overrides_for(_scan_entries(root))


def test_trusted_values_win_and_credential_helpers_are_reset_to_the_users_own():
    entries = [("system", "credential.https://a.helper", "sys-helper"), ("global", "core.sshcommand", "my-ssh"),
               ("global", "credential.helper", "my-helper"), ("global", "filter.lfs.clean", "git-lfs clean"),
               ("local", "core.sshcommand", "evil"), ("local", "credential.helper", "!evil"),
               ("local", "filter.lfs.clean", "evil"), ("local", "filter.X.smudge", "evil"),
               ("worktree", "remote.origin.uploadpack", "evil"), ("local", "merge.m.driver", "evil"),
               ("command", "core.sshcommand", "ignored"), ("local", "user.name", "kept")]
    assert overrides_for(entries) == (
        ("core.sshcommand", "my-ssh"), ("filter.lfs.clean", "git-lfs clean"), ("filter.X.smudge", ""),
        ("remote.origin.uploadpack", "git-upload-pack"), ("merge.m.driver", f"{git_binary()} merge-file %A %O %B"),
        ("credential.helper", ""), ("credential.https://a.helper", "sys-helper"), ("credential.helper", "my-helper"))


@pytest.mark.timeout(300)
def test_any_key_git_writes_is_seen_by_the_precheck_and_scanned(tmp_path_factory):
    """Property: whatever subsection and spelling, a key git itself writes into the repository's config
    is found by the pre-check and overridden by the scan."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    keys = st.sampled_from(["filter.{}.clean", "filter.{}.smudge", "filter.{}.process", "merge.{}.driver",
                            "credential.{}.helper", "remote.{}.uploadpack", "remote.{}.receivepack",
                            "gpg.{}.program", "core.sshCommand", "core.askPass", "core.alternateRefsCommand"])
    names = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(key=keys, name=names, value=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
           upper=st.booleans())
    def check(key, name, value, upper):
        root = tmp_path_factory.mktemp("r")
        git(root, "init", "-q")
        section, _, rest = key.partition(".")
        full = (section.upper() if upper else section) + "." + rest.format(name)
        git(root, "config", "--add", full, value)
        assert _config_mentions_drivers(root)
        scanned = dict(overrides_for(_scan_entries(root)))
        assert scanned, (full, value)

    check()
