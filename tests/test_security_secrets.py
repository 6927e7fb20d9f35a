"""Secret redaction: nothing shaped like a secret reaches a memory file or a log line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from brain.errors import SettingsError
from brain.security.redact import Redactor

SECRETS = {
    "api_key": ["sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0", "sk-proj-" + "x" * 30, "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"],
    "aws_access_key": ["AKIA" + "IOSFODNN7EXAMPLE"],
    "github_token": ["ghp_" + "a1B2" * 9, "github_pat_" + "11ABCDEFG0" * 3],
    "slack_token": ["xoxb-" + "1234567890-abcdefghij"],
    "jwt": ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV"],
    "brain_token": ["brn_" + "Zx9" * 12],
}
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvJ3cZ8x1q2w3e4r5t6y7u8i9o0p\nQWERTYUIOPASDFGHJKLZXCVBNM123456\n-----END RSA PRIVATE KEY-----"
ALL = [(kind, value) for kind, values in SECRETS.items() for value in values]

filler = st.text(alphabet=" abcdefgh.,\n#", max_size=80)


@settings(max_examples=150, deadline=None)
@given(before=filler, after=filler, pick=st.sampled_from(ALL))
def test_every_shape_is_redacted_and_reported(before, after, pick):
    kind, secret = pick
    result = Redactor().redact(f"{before} {secret} {after}")
    assert secret not in result.text
    assert result.found == {kind: 1}
    assert result.text.startswith(before) and result.text.endswith(after)
    assert Redactor().redact(result.text).found == {}  # idempotent: the placeholder matches nothing


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_characters="-_:@/.=\"'", blacklist_categories=("Cs",)),
                    max_size=300))
def test_text_without_secret_shapes_is_unchanged(text):
    assert Redactor().redact(text).text == text


def test_keys_in_urls_assignments_and_pem_blocks():
    r = Redactor()
    text = (f"db: postgresql://app:hunter2pass@db.internal:5432/x\npassword = \"correct-horse-battery\"\n{PEM}\n"
            "api_key = os.environ['KEY']  # not a literal: kept\n")
    out = r.redact(text)
    assert "hunter2pass" not in out.text and "postgresql://app:[REDACTED:url_password]@db.internal" in out.text
    assert "correct-horse-battery" not in out.text and "password = \"[REDACTED:assigned_secret]\"" in out.text
    assert "MIIEowIBAAKCAQEA" not in out.text and "QWERTYUIOP" not in out.text
    assert "os.environ['KEY']" in out.text
    assert out.found == {"url_password": 1, "assigned_secret": 1, "private_key": 1}
    # an unterminated key block still loses its body, not the prose after it
    cut = r.redact("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n\nthe end of the note")
    assert "MIIEvQ" not in cut.text and cut.text.endswith("the end of the note")


def test_extra_patterns_and_switch(brain):
    r = Redactor([r"ACME-[0-9]{6}", r"pin=(?P<secret>\d{4})"])
    out = r.redact("ticket ACME-123456 pin=1234")
    assert out.text == "ticket [REDACTED:custom] pin=[REDACTED:custom]" and out.found == {"custom": 2}
    with pytest.raises(SettingsError) as err:
        Redactor(["(unclosed"])
    assert err.value.key == "secrets.patterns"
    assert Redactor(enabled=False).redact("sk-ant-" + "a" * 30).found == {}


def test_memory_writes_never_hold_the_secret(brain):
    secret = SECRETS["github_token"][0]
    doc = brain.write("notes/setup.md", f"# Setup\n\ntoken {secret} then {PEM}\n")
    on_disk = (brain.dir / "notes/setup.md").read_bytes()
    assert secret.encode() not in on_disk and b"MIIEow" not in on_disk
    assert dict(doc.redacted) == {"github_token": 1, "private_key": 1}
    assert doc.text == on_disk.decode()
    layer = brain.write("me.md", f"key {SECRETS['aws_access_key'][0]}", layer="personal")
    assert SECRETS["aws_access_key"][0] not in (brain.layers.path("personal") / "me.md").read_text()
    assert dict(layer.redacted) == {"aws_access_key": 1}


def test_configured_patterns_reach_the_write_path(brain):
    (brain.dir / "brain.yml").write_text("version: 1\nsecrets:\n  patterns: ['ACME-[0-9]{6}']\n")
    import brain as brainlib

    b = brainlib.open_brain(brain.repo)
    b.write("notes/a.md", "ACME-424242 and sk-ant-" + "b" * 24)
    assert (b.dir / "notes/a.md").read_text() == "[REDACTED:custom] and [REDACTED:api_key]"
    (brain.dir / "brain.yml").write_text("version: 1\nsecrets:\n  redact: false\n")
    b = brainlib.open_brain(brain.repo)
    b.write("notes/b.md", "ACME-424242")
    assert (b.dir / "notes/b.md").read_text() == "ACME-424242"


def test_log_lines_and_handoffs_never_hold_the_secret(brain):
    secret = SECRETS["api_key"][0]
    rec = brain.record_turn(None, "sess-20261130-0900-a@m", f"use {secret} for the call", to="person")
    folder = brain.conversations_dir / rec.thread
    raw = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    assert secret.encode() not in raw and b"[REDACTED:api_key]" in (folder / "log.jsonl").read_bytes()
    assert secret not in (brain.dir / rec.handoff).read_text()
    # transcript imports record through Conversations directly: the fold state is clean too
    conv = brain.conversations
    imported = conv.record(conv.make_turn("t-import", "person", f"here {secret}", to="agent"))
    state_dir = brain.conversations_dir / imported.thread
    assert all(secret.encode() not in p.read_bytes() for p in state_dir.rglob("*") if p.is_file())
    # the log's own append path redacts too (direct appends)
    conv = brain.conversations
    conv.log.append(conv.make_turn("t-direct", "x", f"pw postgresql://u:{'p' * 12}@h/db", to="y"))
    line = (brain.conversations_dir / "t-direct" / "log.jsonl").read_text()
    assert "p" * 12 not in line and json.loads(line)["text"] == "pw postgresql://u:[REDACTED:url_password]@h/db"


def test_cli_write_reports_kinds_never_the_secret(brain, repo):
    secret = SECRETS["slack_token"][0]
    out = subprocess.run([sys.executable, "-m", "brain", "write", "note", "chat", "--json"], cwd=repo,
                         input=f"slack {secret}\n", capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["redacted"] == [{"kind": "slack_token", "count": 1}]
    assert secret not in out.stdout + out.stderr
    assert secret not in (brain.dir / "notes/chat.md").read_text()


def test_mcp_write_reports_the_redaction(brain):
    from brain.mcp.tools import collect

    tool = collect().tools["brain_write"]
    out = tool.fn(brain, path="notes/m.md", text="key " + SECRETS["api_key"][1])
    assert out.data["redacted"] == [{"kind": "api_key", "count": 1}]
    assert "api_key" in out.note and SECRETS["api_key"][1] not in (brain.dir / "notes/m.md").read_text()
