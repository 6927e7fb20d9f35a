"""The one way brain runs git: in a repository it knows, with repository-local code execution off.

Git can run programs named in a repository's own configuration (`core.fsmonitor`, hooks,
`filter.<driver>.clean|smudge|process`, merge and diff drivers, pagers, editors, credential
helpers, `core.sshCommand`, `gpg.program`, `core.alternateRefsCommand`, a remote's
`uploadpack`/`receivepack`...). Whoever can write that configuration — a planted `.git`
under `.brain/`, a hostile project `.git/config` — would run code as the user the moment
brain runs git there. Every git command brain runs goes through ``GitRepo``, which:

- **pins the repository**: the working directory is the known root, ``GIT_WORK_TREE`` is
  that root (a `core.worktree` in the config cannot move it), ``GIT_CEILING_DIRECTORIES``
  stops discovery from climbing above it, inherited ``GIT_DIR``/``GIT_INDEX_FILE``/
  ``GIT_CONFIG_*`` variables are dropped, and ``safe.bareRepository=explicit`` stops git from
  taking the root itself for a bare repository. ``GIT_DIR`` is deliberately *not* set: an
  explicit git dir turns off git's `safe.directory` ownership check, which stays on;
- **switches off what runs code without configuration** (``-c`` command-line configuration,
  which beats every file): hooks (``core.hooksPath=/dev/null``), fsmonitor, pager and editors,
  signing and signature checks, auto-gc/maintenance, submodule recursion; no protocol at all
  except in ``fetch``/``push`` (``GIT_ALLOW_PROTOCOL``), `--no-ext-diff --no-textconv` on
  every command that can print a diff;
- **neutralizes what the repository's own configuration names**: one `git config --list
  --show-scope` (only when the repository's config files mention such a key at all, see
  ``_config_mentions_drivers``) finds every exec-capable key set in repository scope
  (`local`, `worktree`, and the files they include) and overrides it — with the value the
  user's global/system configuration gives that key, else a neutral one (filters emptied
  and not required, merge drivers replaced by `git merge-file`, credential helpers reset to
  the trusted ones, `ssh`, `git-upload-pack`...). Drivers from global/system configuration
  (git-lfs, say) keep working;
- for a push or fetch to a **local path**, runs the peer's `receive-pack`/`upload-pack`
  through `git -c core.hooksPath=/dev/null ...` as well (git drops inherited configuration
  for local transports), so the peer repository's hooks and alternate-refs command don't run.

Which roots are "known" is the callers' policy (the project repository, the layer
repositories, declared satellites — see brain.sync); this module only refuses a root that
has no `.git` of its own (``UntrustedRepository``).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from .errors import SyncError, UntrustedRepository
from .lazyre import lazy

TYPE_CHECKING = False  # not typing's: importing typing costs 2 ms of a cold CLI start
if TYPE_CHECKING:
    import subprocess

__all__ = ["GitRepo", "project_repo", "git_binary", "find_worktree_root", "discover_toplevel", "is_local_url", "NEUTRAL_CONFIG",
           "PEER_CONFIG", "safe_env", "hook_environment", "hook_index_file", "OPERATION_STATE"]

# Always passed as command-line configuration (highest precedence): features that run code
# or prompt, whatever the configuration files say.
NEUTRAL_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),  # no hook, whichever name git looks for, runs
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("safe.bareRepository", "explicit"),  # never read the root itself as a (planted) bare repository
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("merge.verifySignatures", "false"),
    ("log.showSignature", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("merge.stat", "false"),
)

# Given to the receive-pack / upload-pack of a local peer repository (its hooks would run as us).
PEER_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.alternateRefsCommand", "true"),
    ("receive.autogc", "false"),
    ("receive.denyCurrentBranch", "refuse"),  # updateInstead would check out through the peer's filters
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

# Inherited GIT_* variables that stay: identity, the user's own config files, ssh and TLS, tracing.
_KEEP_ENV = frozenset({
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_SSH",
    "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY",
    "GIT_HTTP_USER_AGENT", "GIT_EXEC_PATH", "GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE_PACKET",
    "GIT_CURL_VERBOSE", "GIT_DEFAULT_HASH",
})

# Subcommands that never read file content, run drivers or talk to a remote: no scan needed.
_INERT = frozenset({"rev-parse", "symbolic-ref", "rev-list", "merge-base", "config", "remote", "for-each-ref"})
_DIFF_PRINTING = frozenset({"diff", "log", "show", "diff-tree", "diff-index", "diff-files", "format-patch"})
_NETWORK = frozenset({"fetch", "push", "pull", "clone", "ls-remote", "submodule", "archive"})

_TRUSTED_SCOPES = frozenset({"system", "global"})

# Repository-scope keys that name a program, and the value used when no trusted scope sets the key.
# Keys are matched as git prints them: section and name lower-cased, subsection as written.
_EXEC_KEYS: tuple[tuple[re.Pattern, str], ...] = (
    (lazy(r"filter\..+\.(?:clean|smudge|process)"), ""),
    (lazy(r"filter\..+\.required"), "false"),
    (lazy(r"merge\..+\.driver"), "git merge-file %A %O %B"),
    (lazy(r"merge\..+\.recursive"), "text"),
    (lazy(r"core\.sshcommand"), "ssh"),
    (lazy(r"core\.askpass"), "true"),
    (lazy(r"core\.gitproxy"), "none"),
    (lazy(r"core\.alternaterefscommand"), "true"),
    (lazy(r"gpg\.(?:.+\.)?program"), "gpg"),
    (lazy(r"gpg\.ssh\.defaultkeycommand"), "true"),
    (lazy(r"remote\..+\.uploadpack"), "git-upload-pack"),
    (lazy(r"remote\..+\.receivepack"), "git-receive-pack"),
)
_CREDENTIAL_HELPER = lazy(r"credential\.(?:.+\.)?helper")

# What a repository-scope config file must contain for any _EXEC_KEYS / credential key (or an
# include that could bring one) to be set in it. Section names cannot be escaped in git's syntax,
# so a file without any of these has nothing to neutralize and the scan is skipped.
_MENTIONS = lazy(rb"\[\s*(?:filter|merge|credential|gpg|include|hook)|sshcommand|askpass|gitproxy"
                       rb"|alternaterefs|uploadpack|receivepack", re.IGNORECASE)
# Hooks defined in configuration (git 2.46+: `hook.<name>.command` run for `hook.<name>.event`) are not
# switched off by core.hooksPath and have no neutral value: a repository whose own configuration
# defines one is refused (the user's global or system configuration stays trusted).
_CONFIG_HOOK = lazy(r"hook\..+")


# What a git operation that is under way (or stopped half-way, waiting for the user) leaves in the
# working tree's git dir: while one of these is there, a commit of brain's own would land inside it.
OPERATION_STATE: tuple[tuple[str, str], ...] = (
    ("index.lock", "another git command (index.lock is held)"),  # first: then even staging must wait
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase or `git am`"),
    ("MERGE_HEAD", "a merge"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
    ("sequencer", "a cherry-pick or revert sequence"),
    ("BISECT_LOG", "a bisect"),
)


def hook_environment(env=None) -> str | None:
    """Why the environment says this process runs inside a git command (a hook), or None.

    Git sets ``GIT_INDEX_FILE`` for the hooks of a commit (pre-commit, commit-msg...) and ``GIT_DIR``
    for hooks and aliases in many layouts; neither is set by a user's shell in normal use."""
    env = os.environ if env is None else env
    for name in ("GIT_INDEX_FILE", "GIT_DIR"):
        if env.get(name):
            return f"a git hook ({name} is set)"
    return None


def hook_index_file(env=None) -> str | None:
    """The index git gave its hook (``GIT_INDEX_FILE``, made absolute: a hook runs at the top of the work
    tree), or None outside a hook: what the hook stages must go into the commit git is making."""
    env = os.environ if env is None else env
    index = env.get("GIT_INDEX_FILE")
    return os.path.abspath(index) if index else None


def _search_path() -> str:
    """PATH without relative entries: `.` or an empty entry would run a `git` planted in the repository."""
    return os.pathsep.join(d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d))


_GIT_BINARY: dict[str, str] = {}


def git_binary() -> str:
    """The absolute path of git, found on the absolute entries of PATH (``git`` if none: then running fails)."""
    search = _search_path()
    if search not in _GIT_BINARY:
        _GIT_BINARY[search] = _which_git(search) or "git"
    return _GIT_BINARY[search]


def _which_git(search: str) -> str | None:
    """``shutil.which("git", path=search)``: on POSIX the same walk without importing shutil (with bz2,
    lzma and zlib: 2-3 ms of a task boot, decision 0043); elsewhere (PATHEXT) shutil's own."""
    if os.name != "posix":
        import shutil

        return shutil.which("git", path=search)
    seen: set[str] = set()
    for folder in search.split(os.pathsep) if search else ():
        if folder in seen:
            continue
        seen.add(folder)
        name = os.path.join(folder, "git")
        if os.path.exists(name) and os.access(name, os.F_OK | os.X_OK) and not os.path.isdir(name):
            return name
    return None


def find_worktree_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that has a ``.git`` entry (git's own rule, without running git)."""
    start = Path(start)
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def project_repo(folder: Path, *, timeout: float = 60.0, here_only: bool = False,
                 index_file: str | None = None) -> GitRepo | None:
    """The runner of the repository whose work tree holds ``folder`` (the nearest `.git` at or above it;
    with ``here_only``, only a `.git` in ``folder`` itself), or None when there is none."""
    root = Path(folder) if here_only else find_worktree_root(Path(folder))
    if root is None or not os.path.lexists(root / ".git"):
        return None
    return GitRepo(root, timeout=timeout, index_file=index_file)


def is_local_url(url: str) -> bool:
    """Whether git reaches ``url`` through the local (file) transport: a path, or ``file://``."""
    if url.startswith("file://"):
        return True
    if "::" in url or re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url):
        return False
    colon, slash = url.find(":"), url.find("/")
    return colon < 0 or 0 <= slash < colon


def neutral_args(without: tuple[str, ...] = ()) -> list[str]:
    """``-c key=value`` for NEUTRAL_CONFIG: plain keys, understood by every git (``GIT_CONFIG_COUNT``, which
    carries the scanned overrides whose keys may hold any character, is silently ignored before git 2.31)."""
    dropped = {key.lower() for key in without}
    return [arg for k, v in NEUTRAL_CONFIG if k.lower() not in dropped for arg in ("-c", f"{k}={v}")]


def safe_env(root: Path | None, *, overrides: tuple[tuple[str, str], ...] = (), protocols: str = "",
             index_file: str | None = None) -> dict[str, str]:
    """The environment of every git process: inherited location/config variables dropped, ours set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP_ENV}
    env["PATH"] = _search_path()
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "GIT_PAGER": "cat", "GIT_EDITOR": ":",
                "GIT_SEQUENCE_EDITOR": ":", "GIT_ALLOW_PROTOCOL": protocols, "GIT_PROTOCOL_FROM_USER": "0",
                "LC_ALL": "C"})
    if root is not None:
        env["GIT_WORK_TREE"] = str(root)
        if root.parent != root:
            env["GIT_CEILING_DIRECTORIES"] = str(root.parent)
    if index_file:
        env["GIT_INDEX_FILE"] = index_file
    env["GIT_CONFIG_COUNT"] = str(len(overrides))
    for i, (key, value) in enumerate(overrides):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def discover_toplevel(start: Path, timeout: float = 5.0) -> Path | None:
    """The work tree git finds from ``start`` (for ``brain init`` without a folder), run with the neutral settings."""
    import subprocess  # lazy: a boot that runs no git never imports it

    try:
        out = subprocess.run([git_binary(), "--no-pager", *neutral_args(), "rev-parse", "--show-toplevel"], cwd=start,
                             capture_output=True,
                             text=True, timeout=timeout, env=safe_env(None), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


_IDENTITIES: dict[str, list[str]] = {}  # per repository, for the life of the process (a server commits often)


class GitRepo:
    """A repository brain knows, pinned at ``root``; every command runs with the neutral settings.

    ``dot_git_folder`` demands that `root/.git` be a real folder (not a `gitdir:` file or a
    link): for repositories inside the memory, where a `.git` file could point anywhere.
    ``index_file``: the index to use (the pre-commit hook passes git's own).
    ``private``: git runs with umask 077, so what it creates (objects, refs, files a pull checks out) in a
    private layer is its owner's only, whatever the umask brain was started with.
    """

    def __init__(self, root: Path, *, timeout: float = 60.0, dot_git_folder: bool = False,
                 index_file: str | None = None, private: bool = False) -> None:
        self.root = Path(root).resolve()
        self.timeout = timeout
        self.index_file = index_file
        self.umask = 0o077 if private else -1  # -1: subprocess leaves the umask as it is
        try:
            mode = os.lstat(self.root / ".git").st_mode
        except OSError:
            raise UntrustedRepository(str(self.root), "it has no .git of its own") from None
        if dot_git_folder and not stat.S_ISDIR(mode):
            raise UntrustedRepository(str(self.root), "its .git is not a folder (a gitdir file or link could point "
                                                      "at any repository)")
        self._overrides: tuple[tuple[str, str], ...] | None = None
        self._identity: list[str] | None = None

    # -- running ---------------------------------------------------------------------
    def run(self, *args: str, check: bool = True, identity: bool = False, timeout: float | None = None,
            input: str | None = None, _protocols: str = "", _skip: tuple[str, ...] = (),
            _overrides: tuple[tuple[str, str], ...] | None = None) -> subprocess.CompletedProcess:
        """Run ``git ARGS`` in the pinned repository; ``SyncError`` on failure when ``check``."""
        import subprocess

        if not args:
            raise ValueError("no git subcommand")
        if args[0] in _NETWORK and not _protocols:
            raise ValueError(f"git {args[0]} talks to a remote: use GitRepo.fetch / GitRepo.push")
        overrides = _overrides if _overrides is not None else () if args[0] in _INERT else self.overrides()
        cmd = [git_binary(), "--no-pager", *neutral_args(_skip), *(self.identity() if identity else []),
               *self._with_flags(args)]
        env = safe_env(self.root, overrides=overrides, protocols=_protocols, index_file=self.index_file)
        timeout = self.timeout if timeout is None else timeout
        try:
            out = subprocess.run(cmd, cwd=self.root, capture_output=True, encoding="utf-8", errors="surrogateescape",
                                 timeout=timeout, env=env, input=input, umask=self.umask,
                                 stdin=None if input is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise SyncError(str(self.root), " ".join(args), f"timed out after {timeout:.0f} s") from None
        except OSError as exc:
            raise SyncError(str(self.root), " ".join(args), str(exc)) from None
        if check and out.returncode != 0:
            raise SyncError(str(self.root), " ".join(args), out.stderr or out.stdout)
        return out

    def output(self, *args: str, timeout: float | None = None) -> str | None:
        """Standard output of ``git ARGS``, or None when git fails, times out, is missing, or brain refuses
        to run it here (for reads that can do without: state, the boot's changed files, map, stats)."""
        try:
            out = self.run(*args, check=False, timeout=timeout)
        except (SyncError, UntrustedRepository):
            return None
        return out.stdout if out.returncode == 0 else None

    def stream(self, *args: str) -> subprocess.Popen:
        """``git ARGS`` started with its standard output as a binary pipe (stderr dropped), for a reader
        that bounds what it takes from a long output (the history index reads ``git log`` this way): the
        caller reads, then kills and waits. ``SyncError`` when git cannot be started."""
        import subprocess

        if not args:
            raise ValueError("no git subcommand")
        if args[0] in _NETWORK:
            raise ValueError(f"git {args[0]} talks to a remote: use GitRepo.fetch / GitRepo.push")
        overrides = () if args[0] in _INERT else self.overrides()
        cmd = [git_binary(), "--no-pager", *neutral_args(), *self._with_flags(args)]
        env = safe_env(self.root, overrides=overrides, index_file=self.index_file)
        try:
            return subprocess.Popen(cmd, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, env=env, umask=self.umask)
        except OSError as exc:
            raise SyncError(str(self.root), " ".join(args), str(exc)) from None

    @staticmethod
    def _with_flags(args: tuple[str, ...]) -> list[str]:
        if args[0] in _DIFF_PRINTING:
            return [args[0], "--no-ext-diff", "--no-textconv", *args[1:]]
        return list(args)

    # -- remotes ---------------------------------------------------------------------
    def fetch(self, remote: str, *refs: str, check: bool = False) -> subprocess.CompletedProcess:
        """``git fetch -q REMOTE REFS`` with only https/http/ssh, or file with a neutral peer upload-pack."""
        local, protocols = self._transport(remote, push=False)
        extra = [f"--upload-pack={_peer_program('upload-pack')}"] if local else []
        return self.run("fetch", "-q", *extra, "--", remote, *refs, check=check, _protocols=protocols)

    def push(self, remote: str, *refspecs: str, check: bool = False) -> subprocess.CompletedProcess:
        local, protocols = self._transport(remote, push=True)
        extra = [f"--receive-pack={_peer_program('receive-pack')}"] if local else []
        return self.run("push", "-q", *extra, "--", remote, *refspecs, check=check, _protocols=protocols)

    def _transport(self, remote: str, *, push: bool) -> tuple[bool, str]:
        """Whether ``remote`` is a local path, and the protocols its URLs need (names from config are data:
        they come after ``--``, never as options)."""
        urls = self.run("remote", "get-url", "--all", *(["--push"] if push else []), "--", remote).stdout.split("\n")
        kinds = {is_local_url(u) for u in urls if u}
        if kinds == {True}:
            return True, "file"
        if kinds == {False}:
            return False, "https:http:ssh"
        raise SyncError(str(self.root), f"{'push' if push else 'fetch'} {remote}",
                        "the remote mixes local paths and network URLs; give it one kind")

    # -- helpers ---------------------------------------------------------------------
    def identity(self) -> list[str]:
        """``-c user.name/email`` when neither the repository nor the environment names a committer."""
        if self._identity is None and str(self.root) in _IDENTITIES:
            self._identity = _IDENTITIES[str(self.root)]
        if self._identity is None:
            name = (self.output("config", "user.name") or "").strip()
            email = (self.output("config", "user.email") or "").strip()
            env = os.environ
            self._identity = [] if (name or env.get("GIT_AUTHOR_NAME")) and (email or env.get("GIT_AUTHOR_EMAIL")) \
                else ["-c", "user.name=brain", "-c", "user.email=brain@localhost"]
            _IDENTITIES[str(self.root)] = self._identity
        return self._identity

    def rev(self, ref: str) -> str | None:
        out = self.run("rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
        return out.stdout.strip() or None

    def operation_in_progress(self) -> str | None:
        """The git operation under way in this working tree (a rebase, merge, cherry-pick, revert or bisect
        stopped half-way, or another git command holding the index), or None. Read from the files git
        keeps in the working tree's own git dir (a linked worktree has its own)."""
        out = self.run("rev-parse", "--absolute-git-dir", check=False)
        git_dir = out.stdout.strip()
        if out.returncode != 0 or not git_dir:
            return None
        for name, what in OPERATION_STATE:
            if os.path.lexists(os.path.join(git_dir, name)):
                return what
        return None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def hooks_dir(self) -> tuple[Path, bool]:
        """Where git looks for this repository's hooks (honouring `core.hooksPath`), for installing one, and
        whether that folder is the repository's own: inside its work tree or git dir, or chosen by the
        user's global/system configuration rather than by the repository's."""
        lines = self.run("rev-parse", "--git-path", "hooks", "--git-common-dir", _skip=("core.hooksPath",)).stdout
        hooks, common = (Path(x) if Path(x).is_absolute() else self.root / x for x in lines.splitlines()[:2])
        hooks, common = hooks.resolve(), common.resolve()
        if any(hooks == top or top in hooks.parents for top in (self.root, common)):
            return hooks, True
        scope = self.run("config", "--show-scope", "--get", "core.hooksPath", check=False,
                         _skip=("core.hooksPath",)).stdout.split("\t", 1)[0]
        return hooks, scope in _TRUSTED_SCOPES

    # -- neutralizing the repository's own configuration -------------------------------
    def overrides(self) -> tuple[tuple[str, str], ...]:
        """Command-line values for every exec-capable key the repository's own configuration sets."""
        if self._overrides is None:
            self._overrides = _scan(self) if _config_mentions_drivers(self.root) else ()
        return self._overrides


def _peer_program(name: str) -> str:
    import shlex

    return shlex.quote(git_binary()) + " " + " ".join(f"-c {shlex.quote(f'{k}={v}')}" for k, v in PEER_CONFIG) \
        + f" {name}"


def _config_files(root: Path) -> list[Path] | None:
    """The repository-scope config files git reads for ``root`` (None when the layout is not understood)."""
    dot_git = root / ".git"
    try:
        if dot_git.is_dir():
            git_dir = dot_git
        else:
            text = dot_git.read_text(encoding="utf-8", errors="strict").strip()
            if not text.startswith("gitdir:") or "\n" in text:
                return None
            git_dir = (root / text[len("gitdir:"):].strip())
        common = git_dir
        if (git_dir / "commondir").exists():
            common = git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return [common / "config", git_dir / "config.worktree", common / "config.worktree"]


def _config_mentions_drivers(root: Path) -> bool:
    """False only when no repository-scope config file can set a key that ``_scan`` would override."""
    files = _config_files(root)
    if files is None:
        return True
    for path in files:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError:
            return True
        if _MENTIONS.search(data):
            return True
    return False


_PROBE = ("brain.gitconfigcount", "1")


def _scan(repo: GitRepo) -> tuple[tuple[str, str], ...]:
    """Read the whole configuration with scopes; the probe proves this git honours ``GIT_CONFIG_COUNT``
    (without it the overrides would be silently dropped: refuse rather than run the drivers)."""
    out = repo.run("config", "--list", "--show-scope", "-z", check=False, _overrides=(_PROBE,))
    if out.returncode != 0:
        raise SyncError(str(repo.root), "config --list --show-scope",
                        out.stderr or "cannot read the repository's configuration")
    entries: list[tuple[str, str, str]] = []  # (scope, key, value)
    fields = out.stdout.split("\0")
    for scope, item in zip(fields[0::2], fields[1::2]):
        key, _, value = item.partition("\n")
        entries.append((scope, key, value))
    if ("command", *_PROBE) not in entries:
        raise UntrustedRepository(str(repo.root), "its git configuration names programs, and this git is too old "
                                                  "(before 2.31) for brain to switch them off; upgrade git")
    hooks = sorted({key for scope, key, _ in entries if scope not in _TRUSTED_SCOPES and scope != "command"
                    and _CONFIG_HOOK.fullmatch(key)})
    if hooks:
        raise UntrustedRepository(str(repo.root), f"its own git configuration defines hooks ({', '.join(hooks)}), "
                                                  "which git would run; remove them (`git config --remove-section "
                                                  "hook.<name>`) or move them to your global configuration")
    return overrides_for(entries)


def overrides_for(entries: list[tuple[str, str, str]]) -> tuple[tuple[str, str], ...]:
    """From ``(scope, key, value)`` config entries: what to pass on the command line (pure, for tests)."""
    import shlex

    trusted: dict[str, str] = {}
    for scope, key, value in entries:
        if scope in _TRUSTED_SCOPES:
            trusted[key] = value
    out: dict[str, str] = {}
    helpers = False
    for scope, key, value in entries:
        if scope in _TRUSTED_SCOPES or scope == "command":
            continue
        if _CREDENTIAL_HELPER.fullmatch(key):
            helpers = True
            continue
        for pattern, neutral in _EXEC_KEYS:
            if pattern.fullmatch(key):
                out[key] = trusted.get(key, neutral.replace("git ", shlex.quote(git_binary()) + " ", 1)
                                       if neutral.startswith("git ") else neutral)
                break
    pairs = list(out.items())
    if helpers:  # an empty helper resets the list; then the user's own helpers, in their order
        pairs.append(("credential.helper", ""))
        pairs.extend((k, v) for scope, k, v in entries if scope in _TRUSTED_SCOPES and _CREDENTIAL_HELPER.fullmatch(k))
    return tuple(pairs)
