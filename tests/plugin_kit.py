"""Shared pieces of the plugin tests: the repository's plugin files, a built wheel, and a `brain` from it.

The plugins must work from a shell without this checkout's venv, so the tests run the `brain` of a
wheel built from this source and installed into its own environment (a venv of its own, as
`uv tool install` or `pipx install` make one). Its dependencies are read from the test venv's
site-packages through a path entry (no download in a test); the editable install of the test venv
stays invisible there (its `.pth` files are only processed in a site directory, not on a path entry).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "plugins" / "brain"
LAUNCHER = PLUGIN / "scripts" / "brain-run"
MARKER = "# -- launcher --\n"
BARE_PATH = "/usr/bin:/bin"
# no network at test time: Claude Code's update check, telemetry and other nonessential traffic off
OFFLINE = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1"}

__all__ = ["ROOT", "PLUGIN", "LAUNCHER", "MARKER", "BARE_PATH", "OFFLINE", "load", "version", "launcher_body",
           "build_wheel", "isolated_brain", "client_env", "copy_marketplace", "bump", "LineReader"]


def load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def version() -> str:
    import brain

    return brain.__version__


def launcher_body() -> str:
    """The launcher's lines after its marker: what .codex-mcp.json runs inline."""
    return LAUNCHER.read_text(encoding="utf-8").split(MARKER, 1)[1]


def build_wheel(out: Path) -> Path:
    """A wheel of this source, built offline with the installed backend from a copy (the checkout stays clean)."""
    source = out / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    wheels = out / "wheels"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "--no-cache-dir", "--disable-pip-version-check", str(source), "-w", str(wheels)],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = wheels.glob("agent_brain-*.whl")
    return wheel


def isolated_brain(wheel: Path, where: Path) -> Path:
    """A venv of its own with the wheel installed; returns its bin/ (holding `brain` and `agent-brain`)."""
    env_dir = where / "brain-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-index", "--no-cache-dir", "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(purelib, "_test_venv_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    where_from = subprocess.run([str(env_dir / "bin" / "brain"), "--version"], capture_output=True, text=True,
                                timeout=60, env={"PATH": BARE_PATH})
    assert where_from.stdout.startswith("brain "), where_from.stderr
    found = subprocess.run([str(python), "-c", "import brain; print(brain.__file__)"], capture_output=True,
                           text=True, check=True, timeout=60).stdout
    assert found.startswith(str(env_dir)), found  # the wheel's brain, not this checkout's
    return env_dir / "bin"


def client_env(home: Path, path: str) -> dict[str, str]:
    """A user's environment with its own HOME (nothing of this machine's client config) and an explicit PATH."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "BRAIN_DIR")}
    xdg = {f"XDG_{kind}_HOME": str(home / f".xdg-{kind.lower()}") for kind in ("CACHE", "CONFIG", "DATA", "STATE")}
    return {**env, **OFFLINE, **xdg, "HOME": str(home), "PATH": path, "PIP_NO_CACHE_DIR": "1"}


def copy_marketplace(dest: Path) -> Path:
    """The files a clone of this repository gives both clients' marketplaces (copied: a client never writes
    into the checkout)."""
    dest.mkdir(parents=True)
    for rel in (".claude-plugin", ".agents", "plugins"):
        shutil.copytree(ROOT / rel, dest / rel)
    return dest


def bump(market: Path, new: str) -> None:
    """Give the marketplace copy ``market`` a new version wherever the plugin carries one (a release)."""
    for rel in ("plugins/brain/.claude-plugin/plugin.json", "plugins/brain/.codex-plugin/plugin.json"):
        data = json.loads((market / rel).read_text(encoding="utf-8"))
        (market / rel).write_text(json.dumps({**data, "version": new}), encoding="utf-8")
    rel = ".claude-plugin/marketplace.json"
    data = json.loads((market / rel).read_text(encoding="utf-8"))
    data["metadata"]["version"] = new
    for entry in data["plugins"]:
        entry["version"] = new
    (market / rel).write_text(json.dumps(data), encoding="utf-8")


class LineReader:
    """The lines a child process writes to a pipe, each waited for with a deadline (select on the raw fd and
    our own buffer: a buffered readline would hide lines that already arrived from select)."""

    def __init__(self, pipe):
        self.fd = pipe.fileno()
        self.buffer = b""

    def line(self, deadline: float) -> str | None:
        """The next line, or None at end of file or when ``deadline`` (time.monotonic) passes."""
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")
