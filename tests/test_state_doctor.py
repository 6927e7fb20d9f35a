"""`brain state` derives the environment at call time; `brain doctor` says what to fix."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from conftest import git


def cli(cwd, *args, env=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env=env)


def test_state_reports_git_and_services(brain):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    free_port = free.getsockname()[1]
    free.close()
    try:
        (brain.dir / "brain.yml").write_text(
            "version: 1\nservices:\n"
            f"  - {{name: api, port: {listener.getsockname()[1]}}}\n"
            f"  - {{name: worker, port: {free_port}}}\n")
        (brain.repo / "changed.txt").write_text("x")
        git(brain.repo, "add", "-A")
        git(brain.repo, "commit", "-qm", "add brain")
        (brain.repo / "dirty.txt").write_text("y")
        out = cli(brain.repo, "state", "--json")
        assert out.returncode == 0, out.stderr
        state = json.loads(out.stdout)
    finally:
        listener.close()
    assert state["git"]["branch"] == "main"
    assert state["git"]["changed_files"] == 1
    assert state["git"]["recent_commits"][:2] == ["add brain", "first commit"]
    assert [(s["name"], s["listening"]) for s in state["services"]] == [("api", True), ("worker", False)]
    assert not (brain.runtime / "state.json").exists()  # derived, never stored


def test_state_outside_git(tmp_path):
    import brain as brainlib

    b = brainlib.init(tmp_path / "plain")
    assert b.state()["git"] == {"repository": False}


def test_doctor_all_good_then_names_the_fix(brain):
    out = cli(brain.repo, "doctor", "--json")
    checks = {c["check"]: c for c in json.loads(out.stdout)}
    assert out.returncode == 0, out.stdout
    assert checks["settings"]["ok"] and checks["layout"]["ok"] and checks["AGENTS.md"]["ok"]
    (brain.repo / "AGENTS.md").write_text("# rules\n")
    out = cli(brain.repo, "doctor", "--json")
    assert out.returncode == 1
    checks = {c["check"]: c for c in json.loads(out.stdout)}
    assert not checks["AGENTS.md"]["ok"] and "brain init" in checks["AGENTS.md"]["fix"]


def test_doctor_reports_unreachable_postgres(brain):
    (brain.dir / "brain.local.yml").write_text("backend: postgresql://nobody@127.0.0.1:1/none\n")
    out = cli(brain.repo, "doctor", "--json")
    checks = {c["check"]: c for c in json.loads(out.stdout)}
    assert out.returncode == 1 and not checks["backend"]["ok"]


def test_verbose_logs_go_to_stderr_only(brain):
    import os

    env = {**os.environ, "BRAIN_LOG": "debug"}
    out = subprocess.run([sys.executable, "-m", "brain", "write", "note", "x", "--json"], cwd=brain.repo,
                         input="hello\n", capture_output=True, text=True, env=env)
    assert out.returncode == 0
    json.loads(out.stdout)  # stdout is pure data
    assert "wrote notes/x.md" in out.stderr


def test_write_refuses_invalid_utf8_and_writes_nothing(brain):
    before = brain.read("now.md").text
    out = subprocess.run([sys.executable, "-m", "brain", "write", "now", "--json"], cwd=brain.repo,
                         input=b"\xff\xfe bad", capture_output=True)
    assert out.returncode == 2
    assert json.loads(out.stderr)["error"] == "invalid_input"
    assert brain.read("now.md").text == before


def test_every_command_has_help():
    from brain.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, subparser in sub.choices.items():
        assert subparser.format_help().strip(), name
        out = cli(".", name, "--help")
        assert out.returncode == 0 and "usage: brain " + name in out.stdout, name


def test_every_command_is_documented_in_readme():
    from pathlib import Path

    from brain.cli.main import build_parser

    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    missing = [name for name in sub.choices if f"`brain {name}" not in readme]
    assert not missing, f"document these commands in README.md: {missing}"


def test_command_index_matches_what_the_modules_register():
    import argparse
    import importlib

    from brain.cli.main import COMMAND_INDEX, COMMAND_MODULES

    registered = {}
    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"brain.cli.{name}").register(sub)
        registered.update(dict.fromkeys(sub.choices, name))
    assert COMMAND_INDEX == registered


def test_global_options_before_the_command(brain):
    out = cli("/", "-C", str(brain.repo), "read", "now.md")
    assert out.returncode == 0 and out.stdout.startswith("# Now")
    out = cli("/", "--dir", str(brain.repo), "-v", "nonsense")
    assert out.returncode == 2
