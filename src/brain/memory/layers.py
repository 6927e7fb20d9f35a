"""User-level layers under $BRAIN_HOME: kernel, instance, personal.

kernel/    universal: agent profiles (agents/) and profile notes (profile/); exportable
instance/  this machine: paths, the list of projects; never exported
personal/  one person's own notes; never exported, never shared
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

from ..trees import walk as walk_tree
from ..errors import InvalidInput
from ..lazyre import lazy

__all__ = ["LAYERS", "PRIVATE_LAYERS", "Layers", "AgentProfile", "parse_front_matter", "TIERS"]

LAYERS = ("kernel", "instance", "personal")
PRIVATE_LAYERS = ("instance", "personal")  # machine paths and one person's notes: 0700 folders, 0600 files
TIERS = ("always", "hot", "warm", "cold")


_SIMPLE_LINE = lazy(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$")
# numbers of at most 18 digits: a longer one goes to brain.yamlsafe, which refuses it (int() of
# 5,000 digits raises ValueError, and it is quadratic below that)
_PLAIN = lazy(r"^(?:[A-Za-z_][\w.@/+-]*(?: [\w.@/+-]+)*|0|[1-9]\d{0,17})$")
_YAML_WORDS = {"null", "~", "yes", "no", "on", "off", "y", "n", "true", "false"}


def _plain(raw: str) -> bool:
    """A word YAML reads as the same string (or as the int / bool _scalar gives it)."""
    return bool(_PLAIN.match(raw)) and (raw.lower() not in _YAML_WORDS or raw in ("true", "True", "false", "False"))


def _scalar(raw: str):
    if raw in ("true", "True"):
        return True
    if raw in ("false", "False"):
        return False
    if raw.isdigit():
        return int(raw)
    return raw


def _simple_front_matter(block: str) -> dict | None:
    """The common front matter (`key: word`, `key: [a, b]`) without importing YAML (cold starts).

    Anything else (quotes, nesting, multi-line values, YAML specials) returns None and
    goes to the real YAML parser, so the meaning is always YAML's."""
    meta: dict = {}
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _SIMPLE_LINE.match(line)
        if not match:
            return None
        key, raw = match.groups()
        if raw.startswith("[") and raw.endswith("]"):
            items = [item.strip() for item in raw[1:-1].split(",")] if raw[1:-1].strip() else []
            if not all(_plain(item) for item in items):
                return None
            meta[key] = [_scalar(item) for item in items]
        elif raw and _plain(raw):
            meta[key] = _scalar(raw)
        else:
            return None
    return meta


def parse_front_matter(text: str, source: str) -> tuple[dict, str]:
    """Split a markdown file into its YAML front matter (a mapping) and its body."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    meta = _simple_front_matter(text[4:end])
    if meta is not None:
        return meta, text[end + 4:].lstrip("\n")
    from ..errors import YamlRefused
    from ..yamlsafe import load_yaml

    try:
        meta = load_yaml(text[4:end], source) or {}
    except YamlRefused as exc:
        if exc.problem != "syntax":
            raise
        raise InvalidInput(f"{source}: the front matter between --- lines is not valid YAML", field="front_matter") from None
    if not isinstance(meta, dict):
        raise InvalidInput(f"{source}: the front matter must be a mapping", field="front_matter")
    body = text[end + 4:].lstrip("\n")
    return meta, body


class AgentProfile(namedtuple("AgentProfile", "name tier roles body source requires triggers",
                               defaults=(None, ()))):
    """An agent profile: who to be for a role, loaded by tier.

    always: every boot; hot: boots of its roles; warm: boots of its roles whose task
    mentions one of its triggers; cold: never injected, only listed as fetchable.
    ``roles`` and ``triggers`` are tuples of str; ``requires``: a feature flag that must be on.
    A named tuple, not a dataclass: the cold boot imports no dataclasses (decision 0038).
    """

    __slots__ = ()

    @classmethod
    def parse(cls, text: str, source: str, default_name: str) -> "AgentProfile":
        meta, body = parse_front_matter(text, source)
        tier = meta.get("tier", meta.get("context_tier", "warm"))
        if tier not in TIERS:
            raise InvalidInput(f"{source}: tier must be one of {', '.join(TIERS)}, not {tier!r}", field="tier")
        roles = meta.get("roles", [])
        if isinstance(roles, str):
            roles = [roles]
        triggers = meta.get("triggers", [])
        if isinstance(triggers, str):
            triggers = [triggers]
        for key, value in (("roles", roles), ("triggers", triggers)):
            if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
                raise InvalidInput(f"{source}: {key} must be a name or a list of names", field=key)
        return cls(
            name=str(meta.get("name", default_name)),
            tier=tier,
            roles=tuple(str(r) for r in roles),
            body=body,
            source=source,
            requires=meta.get("requires"),
            triggers=tuple(str(t).lower() for t in triggers),
        )


class Layers:
    """The three user-level layers of one $BRAIN_HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def path(self, layer: str) -> Path:
        if layer not in LAYERS:
            raise InvalidInput(f"unknown layer {layer!r}; layers are {', '.join(LAYERS)}", field="layer")
        return self.home / layer

    def ensure(self) -> None:
        from .private import ensure_private_dir

        ensure_private_dir(self.home)  # a new $BRAIN_HOME is its owner's only; instance and personal always are
        for sub in PRIVATE_LAYERS:
            ensure_private_dir(self.home / sub)
        for sub in ("kernel/agents", "kernel/profile"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)

    def register_project(self, repo: Path) -> None:
        """Record the project in the instance layer (machine paths live there, never in the kernel)."""
        listing = self.path("instance") / "projects.txt"
        entries = listing.read_text(encoding="utf-8").splitlines() if listing.exists() else []
        if str(repo) not in entries:
            from .files import atomic_write_bytes

            atomic_write_bytes(listing, ("\n".join(entries + [str(repo)]) + "\n").encode("utf-8"), private=True)

    def kernel_profile_files(self) -> list[Path]:
        folder = self.path("kernel") / "agents"
        if not folder.is_dir() or folder.is_symlink():
            return []
        return sorted(p for p in folder.glob("*.md") if p.is_file() and not p.is_symlink())  # links are never followed

    def export_template(self, dest: Path) -> list[str]:
        """Copy the kernel layer alone to ``dest`` (which must be empty or absent).

        Built in a temporary folder and renamed into place, so a failure leaves nothing.
        """
        import shutil
        import tempfile

        dest = dest.resolve()
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise InvalidInput(f"{dest} exists and is not an empty folder", field="dest",
                               hint="give a new folder for the template")
        kernel = self.path("kernel")
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}."))
        try:
            from ..security.export import find_leak, layer_values, outside_links

            if kernel.is_dir():
                patterns, links = shutil.ignore_patterns(".git", "*.local.*"), outside_links(kernel)
                shutil.copytree(kernel, staging / "kernel", symlinks=False,
                                ignore=lambda folder, names: patterns(folder, names) | links(folder, names))
            else:
                (staging / "kernel").mkdir()
            leak = find_leak(staging, layer_values(self.home))  # canaries of instance and personal: refused
            if leak is not None:
                from ..errors import ExportLeak

                raise ExportLeak(leak[0], leak[1])
            (staging / "README.md").write_text(
                "# brain template\n\nThe kernel layer of a brain: universal agent profiles and profile notes.\n"
                "Copy `kernel/` into `$BRAIN_HOME/kernel/` on a new machine.\n",
                encoding="utf-8",
            )
            if dest.exists():
                dest.rmdir()
            os.replace(staging, dest)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return sorted(Path(folder, name).relative_to(dest).as_posix() for folder, _, files in walk_tree(dest)
                      for name in files if Path(folder, name).is_file())
