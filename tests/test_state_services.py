"""`services:` of a (possibly cloned) brain.yml: bounded, probed at once, loopback only unless this machine allows a host.

A real listening socket whose accept queue is full (listen(0), never accepted): a connect to it
hangs until its timeout, which is what made 200 entries cost `brain state` 40 s.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from brain.errors import SettingsError

BOUND = 60.0
STATE_WITHIN = 8.0  # seconds: 64 entries probed one after another at 0.2 s each take 12.8 s


@pytest.fixture
def full_queue():
    """A port on 127.0.0.1 that accepts no more connections: its accept queue is full and never drained."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        while True:  # fill the queue until a connect no longer completes (bounded: the queue holds a few)
            filler = socket.socket()
            filler.settimeout(1.0)
            fillers.append(filler)
            try:
                filler.connect(("127.0.0.1", port))
            except (TimeoutError, socket.timeout):
                break
            assert len(fillers) < 64, "the accept queue never filled"
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def brain_state(repo, **env):
    out = subprocess.run([sys.executable, "-m", "brain", "state", "--json"], cwd=repo, capture_output=True,
                         text=True, timeout=STATE_WITHIN, env={**os.environ, **env})
    return out


def services_yml(entries: list[dict]) -> str:
    return "version: 1\nservices:\n" + "".join(
        f"  - {{name: s{i}, port: {e['port']}{', host: ' + repr(e['host']) if 'host' in e else ''}}}\n"
        for i, e in enumerate(entries))


def test_a_full_accept_queue_costs_one_short_deadline_for_all_services(brain, repo, full_queue):
    (brain.dir / "brain.yml").write_text(services_yml([{"port": full_queue}] * 64))
    out = brain_state(repo)  # the subprocess timeout is the bound: one probe after another would exceed it
    assert out.returncode == 0, out.stderr
    services = json.loads(out.stdout)["services"]
    assert len(services) == 64 and not any(s["listening"] for s in services)


def test_listening_and_closed_ports_are_told_apart(brain, repo):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, not listening: refused at once
    try:
        (brain.dir / "brain.yml").write_text(services_yml([{"port": listener.getsockname()[1]},
                                                           {"port": closed.getsockname()[1], "host": "localhost"}]))
        out = brain_state(repo)
        assert out.returncode == 0, out.stderr
        assert [s["listening"] for s in json.loads(out.stdout)["services"]] == [True, False]
    finally:
        listener.close()
        closed.close()


def test_more_services_than_the_bound_are_refused(brain, repo):
    from brain.settings import SERVICES_MAX, load_settings

    (brain.dir / "brain.yml").write_text(services_yml([{"port": 9}] * 200))
    with pytest.raises(SettingsError) as info:
        load_settings(brain.dir)
    assert info.value.key == "services" and str(SERVICES_MAX) in info.value.expected
    assert brain_state(repo).returncode == SettingsError.exit_code


def test_a_repository_cannot_choose_a_host_brain_contacts(brain, repo):
    """A non-loopback host of the versioned brain.yml is not probed (nor looked up); this machine may allow it."""
    (brain.dir / "brain.yml").write_text(services_yml([{"port": 5432, "host": "192.0.2.7"},
                                                       {"port": 80, "host": "198.51.100.9"}]))
    services = json.loads(brain_state(repo).stdout)["services"]
    assert [s["listening"] for s in services] == [None, None]
    assert all("state.allowed_hosts" in s["skipped"] for s in services)

    (brain.dir / "brain.local.yml").write_text("state:\n  allowed_hosts: [192.0.2.7]\n")
    services = json.loads(brain_state(repo).stdout)["services"]
    assert services[0]["listening"] is False and "skipped" not in services[0]  # probed (TEST-NET: no answer)
    assert services[1]["listening"] is None
    (brain.dir / "brain.local.yml").unlink()
    services = json.loads(brain_state(repo, BRAIN_STATE_HOSTS="198.51.100.9, other").stdout)["services"]
    assert services[0]["listening"] is None and "skipped" not in services[1]


def test_the_allow_list_is_refused_in_the_versioned_file(brain, repo):
    from brain.settings import load_settings

    (brain.dir / "brain.yml").write_text("version: 1\nstate:\n  allowed_hosts: [192.0.2.7]\n")
    with pytest.raises(SettingsError) as info:
        load_settings(brain.dir)
    assert info.value.key == "state.allowed_hosts"
