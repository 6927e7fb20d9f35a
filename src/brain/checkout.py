"""Where a brain's working tree sits in its git repository: one coordination store per repository.

Every `git worktree` of one repository shares the repository's common git dir. The
coordination store of a brain lives there (``<common dir>/brain/<key>/``), so agents in
parallel worktrees see each other's sessions, claims, signals, asks and live state, and
the conversation logs of every checkout live there too, each under its checkout's own id
(``conversations/<id>/``), so `git worktree remove` does not take them along. What depends
on the checked-out files (search index, cards, settings cache) stays in the working tree's
``.brain/runtime/``.

Why read git's files rather than run ``git rev-parse --git-common-dir``: the answer is
needed on every open (the boot names the brain after its repository), a subprocess costs
milliseconds, and git's layout is documented (gitrepository-layout): a working tree's
``.git`` is either the git dir or a ``gitdir: PATH`` file; a linked worktree's git dir
is ``<common>/worktrees/<id>/`` holding ``commondir`` (the way to the common dir) and
``gitdir`` (the way back to the worktree's ``.git`` file). The tests check the answer
against git's own.

Why the back links are checked: a ``.git`` file is data (an archive can carry one), and
its ``gitdir:`` line could name any folder. The common dir is accepted only when the
worktree's git dir sits in ``<common>/worktrees/`` and names this very worktree back;
redirecting the store would need files already planted at the target. Anything else
(no git, a ``.git`` link, a gitdir file without those back links: a submodule or a
``--separate-git-dir`` checkout) keeps the store in the working tree's own runtime/.
"""

from __future__ import annotations

import os
import re
import stat
from collections import namedtuple
from pathlib import Path

from .gitsafe import find_worktree_root
from .lazyre import lazy

__all__ = ["Checkout", "locate_checkout", "main_worktree_brain", "sibling_worktrees", "store_key", "prepare_store_dir",
           "read_checkout_id", "is_checkout_id", "STORE_FOLDER", "CHECKOUT_ID_FILE", "CONVERSATIONS_FOLDER"]

STORE_FOLDER = "brain"  # inside the common git dir: never versioned, shared by every worktree
CHECKOUT_ID_FILE = "checkout-id"       # in a working tree's runtime/: the id its conversation logs are kept under
CONVERSATIONS_FOLDER = "conversations"  # in the shared store: one folder per checkout id (brain.log.shared)
_CHECKOUT_ID = lazy(r"c[0-9a-f]{16}")
_READ_LIMIT = 4096      # the git files read here are one short line; a bigger one is not git's


class Checkout(namedtuple("Checkout", "root git_dir common_dir linked")):
    """One working tree of a repository: ``root``, its top folder (holds `.git`); ``git_dir``, this
    working tree's git dir (`.git` itself for the main one); ``common_dir``, the repository's common git
    dir, shared by all its worktrees; ``linked``, a `git worktree add` checkout (False: the main one).
    A named tuple, not a dataclass: the cold boot imports no dataclasses (decision 0038)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        """A short name shown on boards: git's id of a linked worktree (unique in the repository), else the
        main working tree's folder name. No absolute path, so a board shared with teammates leaks none."""
        return self.git_dir.name if self.linked else self.root.name

    @property
    def repository_name(self) -> str:
        """The repository's name, the same in every worktree: the main working tree's folder (`.git`'s
        parent), or a bare repository's folder without `.git`."""
        if self.common_dir.name == ".git":
            return self.common_dir.parent.name
        name = self.common_dir.name
        return name[:-4] if name.endswith(".git") and len(name) > 4 else name

    def branch(self) -> str | None:
        """The branch checked out here (from HEAD), ``detached@<sha7>``, or None when HEAD is unreadable."""
        text = _read_line(self.git_dir / "HEAD")
        if text is None:
            return None
        if text.startswith("ref:"):
            ref = text[4:].strip()
            return ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref
        return f"detached@{text[:7]}" if re.fullmatch(r"[0-9a-f]{40,64}", text) else None

    def store_dir(self, brain_parent: Path) -> Path:
        """The folder of the coordination store of the brain whose `.brain` sits in ``brain_parent``."""
        return self.common_dir / STORE_FOLDER / store_key(brain_parent, self.root)


def store_key(brain_parent: Path, root: Path) -> str:
    """The store's folder name for a brain: ``root`` for a `.brain` at the top of the working tree, else a
    readable slug of its folder plus a short hash of the relative path (``app-1f2e3d4c``): two brains in one
    repository (a monorepo) keep two stores, and the same brain in every worktree finds the same one."""
    try:
        rel = Path(brain_parent).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        rel = "."
    if rel in ("", "."):
        return "root"
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", rel).strip("-")[:40] or "sub"
    from .memory.files import content_hash  # not hashlib: see there

    return f"{slug}-{content_hash(rel.encode('utf-8'))[:8]}"


def read_checkout_id(runtime: Path) -> str | None:
    """The id this checkout's conversation logs are kept under in the shared store (``runtime/checkout-id``), or
    None when none was made yet or the file is not one brain wrote (a link, another shape).

    Why an id of its own and not git's worktree name: git gives a removed worktree's name to the next one
    added at the same folder name, and the logs of both must stay apart. The id lives in the working tree's
    runtime/, so it goes with the folder and a re-added worktree gets a new one (brain.log.shared)."""
    text = _read_line(Path(runtime) / CHECKOUT_ID_FILE)
    return text if text is not None and _CHECKOUT_ID.fullmatch(text) else None


def is_checkout_id(name: str) -> bool:
    """Whether ``name`` has the shape of a checkout id (a folder name of the shared conversations/)."""
    return isinstance(name, str) and _CHECKOUT_ID.fullmatch(name) is not None


def _read_line(path: Path) -> str | None:
    """The one line of a small regular git file (never following a link), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _READ_LIMIT + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > _READ_LIMIT:
        return None
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    return text if text and "\n" not in text else None


def _looks_like_git_dir(path: Path) -> bool:
    """A real folder (not a link) with git's HEAD and objects/: a repository's git dir."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) and os.path.isfile(path / "HEAD") and os.path.isdir(path / "objects")


def locate_checkout(start: Path) -> Checkout | None:
    """The working tree holding ``start`` and its repository's common dir, or None (see the module doc)."""
    root = find_worktree_root(Path(start).resolve())
    if root is None:
        return None
    dot_git = root / ".git"
    try:
        mode = os.lstat(dot_git).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        if not _looks_like_git_dir(dot_git) or os.path.lexists(dot_git / "commondir"):
            return None  # a main working tree's git dir has no commondir; one that does is not git's layout
        return Checkout(root, dot_git, dot_git, linked=False)
    if not stat.S_ISREG(mode):
        return None  # a link: a cloned repository never chooses where the store goes
    line = _read_line(dot_git)
    if line is None or not line.startswith("gitdir:"):
        return None
    git_dir = Path(os.path.normpath(root / line[len("gitdir:"):].strip()))
    if not os.path.isdir(git_dir) or os.path.islink(git_dir):
        return None
    common_line = _read_line(git_dir / "commondir")
    back = _read_line(git_dir / "gitdir")
    if common_line is None or back is None:
        return None  # a submodule or --separate-git-dir checkout: not a linked worktree
    common = Path(os.path.normpath(git_dir / common_line))
    if git_dir.parent != common / "worktrees" or not _looks_like_git_dir(common):
        return None
    try:
        points_back = Path(os.path.normpath(git_dir / back)).resolve() == dot_git.resolve()
    except OSError:
        return None
    if not points_back:
        return None
    return Checkout(root, git_dir.resolve(), common.resolve(), linked=True)


def main_worktree_brain(start: Path) -> tuple[Checkout, Path] | None:
    """For ``start`` in a linked worktree whose branch has no `.brain/` of its own: this checkout and the
    `.brain` the repository's main working tree holds at the same place (or above it), else None.

    Why: `git worktree add` checks out a commit, and a `.brain/` made by `brain init` but not yet committed
    (or committed after the branch forked) is not in it. An agent there should be told that, and how to
    bring the memory in, not to run `brain init` and start a second, diverging memory on its branch.
    Only read here, never opened: the main working tree's files are another checkout's."""
    checkout = locate_checkout(start)
    if checkout is None or not checkout.linked or checkout.common_dir.name != ".git":
        return None  # not a linked worktree, or a bare repository: no main working tree to look in
    main_root = checkout.common_dir.parent
    try:
        rel = Path(start).resolve().relative_to(checkout.root)
    except ValueError:
        return None
    for folder in (rel, *rel.parents):
        if os.path.lexists(checkout.root / folder / ".brain" / "brain.yml"):
            return None  # this branch has its own
        candidate = main_root / folder / ".brain"
        if os.path.lexists(candidate / "brain.yml") and not os.path.islink(candidate):
            return checkout, candidate
    return None


def sibling_worktrees(checkout: Checkout) -> list[Checkout]:
    """The repository's other working trees, as git's own files list them: the main one (unless the
    repository is bare) and each linked one whose `.git` file names its git dir back — the same checks as
    ``locate_checkout`` makes from inside, so a folder planted in `worktrees/` is never taken for one.

    Why: a person supervising agents in several worktrees reads their conversation logs from one place,
    and a log stays in the runtime of the checkout that wrote it (docs/coordination.md)."""
    found: list[Checkout] = []
    common = checkout.common_dir
    if common.name == ".git" and checkout.linked:
        main_root = common.parent
        if _looks_like_git_dir(common) and os.path.isdir(main_root):
            found.append(Checkout(main_root, common, common, linked=False))
    try:
        entries = sorted(os.scandir(common / "worktrees"), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        git_dir = Path(entry.path)
        if git_dir == checkout.git_dir:
            continue
        back = _read_line(git_dir / "gitdir")
        if back is None:
            continue
        dot_git = Path(os.path.normpath(git_dir / back))
        if dot_git.name != ".git":
            continue
        other = locate_checkout(dot_git.parent)
        if other is not None and other.linked and other.git_dir == git_dir.resolve() and other.root == dot_git.parent.resolve():
            found.append(other)
    return found


def prepare_store_dir(store: Path) -> None:
    """Create the shared store's folders (private to the user) and refuse links in them, as for runtime/:
    `<common>/brain`, `<common>/brain/<key>` and the files directly in it are never links."""
    from .errors import UnsafeLink

    store = Path(store)
    for folder in (store.parent, store):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:  # a read-only repository, say: a clear error, not a traceback
            from .errors import BackendError

            raise BackendError(f"cannot create the coordination store folder {folder}: {exc.strerror}",
                               hint="brain keeps one store per repository in its git dir, shared by every "
                                    "worktree: make that folder writable, or use a PostgreSQL backend") from None
        if os.path.islink(folder):
            raise UnsafeLink(str(folder), _link_target(folder), "coordination store folder")
        if not os.path.isdir(folder):
            from .errors import SettingsError

            raise SettingsError(str(folder), None, "a folder (brain's coordination store) or nothing", "a file")
    with os.scandir(store) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise UnsafeLink(entry.path, _link_target(Path(entry.path)), "coordination store file")


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"
