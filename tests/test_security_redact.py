"""Secrets, class 4 of the security issue: linear time, more shapes, every channel that stores text.

- the redactor stays linear on crafted input (ratio against normal text of the same size, measured
  in the same process) and keeps its properties (idempotent, never gives a secret back, leaves text
  without a secret alone);
- env/ini/YAML assignments are secrets, code and prose that look alike are not;
- every store redacts on its own write path: memory files, log turns and handoffs, commit messages,
  decision file names, and on SQLite and PostgreSQL the coordination rows (claim items, signals,
  checkpoints, asks and replies, live state, their audit lines);
- a DSN's password is masked wherever settings are shown; export-template refuses layer values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import brain as brainlib
from brain.coord.factory import coordinator_for
from brain.errors import ExportLeak
from brain.security.redact import Redactor, mask_dsn
from conftest import git
from coordkit import backend, backend_spec, clock, make_coord  # noqa: F401  (fixtures)

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "a1B2" * 9

# (text, the secret it holds): the new shapes, each on its own
ASSIGNED = [
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("PASSWORD=hunter2", "hunter2"),
    ("PASSWORD=correcthorse", "correcthorse"),
    ("export GITHUB_TOKEN=abc123def456ghi", "abc123def456ghi"),
    ("STRIPE_WEBHOOK_SECRET=whsec_9f8e7d6c5b4a", "whsec_9f8e7d6c5b4a"),
    ("  db_password: s3cr3t-Pa55", "s3cr3t-Pa55"),
    ("db.password = Tr0ub4dor&3", "Tr0ub4dor&3"),
    ('DB_PASSWORD="hunter2hunter2"', "hunter2hunter2"),
    ("api_key: 'q8w7e6r5t4y3'", "q8w7e6r5t4y3"),
    ('{"client_secret": "7d1e2a9b4c6f8e0d"}', "7d1e2a9b4c6f8e0d"),
    ("https://api.example.com/v1?access_token=f00dbabe1234&x=1", "f00dbabe1234&x=1"),
    ("run it with --password=letmein42", "letmein42"),
    ("SECRET_KEY=django-insecure-9x8y7z", "django-insecure-9x8y7z"),
]

# code and prose that look like assignments but hold no secret: never changed
NOT_SECRETS = [
    "password = getpass()",
    "TOKEN_LIMIT=10",
    "MAX_TOKENS=4096",
    "max_token = 4096",
    "token = next_token(stream)",
    "token = next_token",
    "secret = compute",
    "password: str",
    "api_key: Optional[str] = None",
    "api_key = settings.API_KEY",
    "token = self.token",
    "password == expected",
    "if token != other_token:",
    "GITHUB_TOKEN=${GITHUB_TOKEN}",
    "token: ${{ secrets.GH_TOKEN }}",
    "API_KEY=<your key here>",
    "PASSWORD=changeme",
    "PASSWORD=********",
    "PWD=/home/me/project",
    "SSH_PRIVATE_KEY=~/.ssh/id_ed25519",
    "Password: see the vault",
    "The secret: everything is logged.",
    "password = None",
    "connect(url, password=password)",
    "DB_PASSWORD_FILE=/run/secrets/db",
    "the token is valid for an hour; rotate the password monthly",
    'password = os.environ["DB_PASSWORD"]',
    "passwords: 3 tries",
    "token: 12",
    "MYTOKEN=abcdefgh",
]


# -- shapes --------------------------------------------------------------------------
@pytest.mark.parametrize("text,secret", ASSIGNED, ids=[t.split("=")[0].split(":")[0].strip()[:24] for t, _ in ASSIGNED])
def test_env_ini_yaml_assignments_are_redacted(text, secret):
    out = Redactor().redact(f"config:\n{text}\nend\n")
    assert secret not in out.text
    assert "assigned_secret" in out.found
    assert out.text.startswith("config:\n") and out.text.endswith("\nend\n")


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_code_and_prose_that_look_alike_are_left_alone(text):
    out = Redactor().redact(text)
    assert out.text == text and out.found == {}


def test_the_key_part_stays_readable():
    out = Redactor().redact(f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nPASSWORD=hunter2 # local\n")
    assert out.text == ("export AWS_SECRET_ACCESS_KEY=[REDACTED:assigned_secret]\n"
                        "PASSWORD=[REDACTED:assigned_secret] # local\n")
    assert out.found == {"assigned_secret": 2}


def test_a_placeholder_inside_quotes_is_counted_once():
    out = Redactor().redact(f'token = "{GITHUB}"')
    assert out.text == 'token = "[REDACTED:github_token]"' and out.found == {"github_token": 1}


# -- properties ------------------------------------------------------------------------
SECRET_SHAPES = [GITHUB, "AKIA" + "IOSFODNN7EXAMPLE", "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0", "brn_" + "Zx9" * 12,
                 "xoxb-1234567890-abcdefghij", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw"]
anything = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
keyish = st.text(alphabet="AKIAghp_sk-eyJ=:/@.'\" \nPASSWORDtoken-----BEGIN PRIVATE KEY", max_size=200)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(anything, keyish))
def test_redaction_is_idempotent(text):
    r = Redactor()
    once = r.redact(text)
    twice = r.redact(once.text)
    assert twice.text == once.text and twice.found == {}


@settings(max_examples=300, deadline=None)
@given(before=st.one_of(anything, keyish), after=st.one_of(anything, keyish),
       planted=st.sampled_from(SECRET_SHAPES + [t for t, _ in ASSIGNED]))
def test_a_planted_secret_never_comes_back(before, after, planted):
    secret = dict(ASSIGNED).get(planted, planted)
    r = Redactor()
    out = r.redact(f"{before}\n{planted}\n{after}")
    assert secret not in out.text
    assert secret not in r.redact(out.text).text


words = st.sampled_from(NOT_SECRETS + ["the", "parser", "## Notes", "- claim src/**", "`brain boot`", "x = 1",
                                       "key: value", "see README.md", "a:b", "1 + 1 = 2", "ratio: 0.95", "#", "--"])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(words, max_size=30), glue=st.sampled_from([" ", "\n", "\n\n", "  ", "\t"]))
def test_text_without_a_secret_is_never_changed(parts, glue):
    text = glue.join(parts)
    assert Redactor().redact(text).text == text


# -- linear time -----------------------------------------------------------------------------
_TIMING = textwrap.dedent("""
    import json, sys, time
    from brain.security.redact import Redactor

    SIZE = 256 * 1024
    def fill(unit):
        return (unit * (SIZE // len(unit) + 1))[:SIZE]
    normal = fill("# Notes\\nWe decided to keep the cache; `TOKEN_LIMIT=10` and password = getpass().\\n"
                  "def f(x):\\n    return x + 1  # see docs/x.md\\n- claim src/brain/** first\\n")
    crafted = {
        "jwt_partial": fill("eyJ-"), "url_colons": "x://" + ":" * (SIZE - 4), "url_userinfo": fill("a://b:"),
        "pem_unterminated": fill("-----BEGIN PRIVATE KEY-----\\n"), "pem_words": fill("-----BEGIN RSA "),
        "password_eq": fill("password="), "password_quote": fill("password='"), "token_colon": fill("TOKEN:        "),
        "akia": fill("AKIA"), "ghp": fill("ghp_"), "sk": fill("sk-"), "equals": "=" * SIZE,
        "key_run": "aB3_-" * (SIZE // 5), "scheme_run": fill("a.") + "://",
    }
    r = Redactor()
    def best(text, n=3):
        out = []
        for _ in range(n):
            start = time.thread_time(); r.redact(text); out.append(time.thread_time() - start)  # CPU, not load
        return min(out)
    r.redact(normal)
    base = best(normal)
    ratios = {name: best(text) / base for name, text in crafted.items()}
    print(json.dumps({"normal_seconds": base, "ratios": ratios}))
""")


def test_crafted_input_costs_about_what_normal_text_costs():
    """256 KB of each crafted input against 256 KB of markdown, timed in one process.

    The bound is a ratio (the machine is shared, absolute times mean little): a backtracking rule
    is hundreds of times slower here; a linear one stays under 10 (input that matches every few
    bytes pays a Python callback each time), so 40 leaves room for a loaded machine. The child's
    timeout only stops a runaway."""
    try:
        out = subprocess.run([sys.executable, "-c", _TIMING], capture_output=True, text=True, timeout=120,
                             env=os.environ)
    except subprocess.TimeoutExpired:
        pytest.fail("redacting 256 KB of crafted input did not finish within 120 s")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    slow = {name: round(ratio, 1) for name, ratio in data["ratios"].items() if ratio > 40}
    assert not slow, f"crafted inputs {slow} times slower than normal text ({data['normal_seconds']:.4f} s)"


@pytest.mark.parametrize("pattern", [r"(a+)+b", r"(?:x*)*!", r"(\w+\s?)+$", r"(a|b+)*c", r"(?=(t+)+)u"])
def test_a_configured_pattern_that_can_take_exponential_time_is_refused(pattern):
    from brain.errors import SettingsError

    with pytest.raises(SettingsError) as err:
        Redactor([pattern])
    assert err.value.key == "secrets.patterns"


def test_possessive_or_bounded_configured_patterns_are_accepted_and_builtins_have_no_nested_repeat():
    from brain.security.redact import _RULES, _nested_repeat

    r = Redactor([r"ACME-[0-9]{6}", r"(?:ab){1,40}+c", r"(?>x{1,40})y", r"pin=(?P<secret>\d{4})"])
    assert r.redact("ACME-123456 pin=1234").found == {"custom": 2}
    assert [kind for kind, rx in _RULES if _nested_repeat(rx)] == []


# -- channels: files, logs, commits, decisions -----------------------------------------------------
ENV_SECRET = f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}"


def raw_tree(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_memory_files_log_turns_and_handoffs_hold_no_env_secret(brain):
    doc = brain.write("notes/env.md", f"# env\n\n{ENV_SECRET}\nPASSWORD=hunter2\n")
    on_disk = (brain.dir / "notes/env.md").read_text()
    assert AWS_SECRET not in on_disk and "hunter2" not in on_disk
    assert dict(doc.redacted) == {"assigned_secret": 2}
    rec = brain.record_turn(None, "sess-20261201-0900-a@m", f"here is the key: {ENV_SECRET}", to="person",
                            files=[f"notes/{GITHUB}.md"])
    logged = raw_tree(brain.conversations_dir / rec.thread)
    assert AWS_SECRET.encode() not in logged and GITHUB.encode() not in logged
    assert AWS_SECRET not in (brain.dir / rec.handoff).read_text()


def test_commit_messages_hold_no_secret(brain, repo):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init brain")
    (brain.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n")
    b = brainlib.open_brain(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "settings")
    b.write("notes/rotation.md", "# rotation\n", role="ops", reason=f"rotated after {ENV_SECRET} leaked")
    b.write("notes/keys.md", "# keys\n", role=f"ops-{GITHUB}", reason="a writer named after a token")
    messages = git(repo, "log", "-2", "--format=%B")
    assert AWS_SECRET not in messages and GITHUB not in messages
    assert "rotated after AWS_SECRET_ACCESS_KEY=[REDACTED:assigned_secret] leaked" in messages
    assert "by ops-[REDACTED:github_token]" in messages and "Writer: ops-[REDACTED:github_token]" in messages


def test_a_memory_path_holding_a_secret_is_refused(brain, repo):
    from brain.errors import InvalidInput

    for layer in (None, "personal"):
        with pytest.raises(InvalidInput) as err:
            brain.write(f"notes/{'AKIA' + 'IOSFODNN7EXAMPLE'}.md", "# oops\n", layer=layer)
        assert err.value.field == "path"
    assert not list(brain.dir.rglob("*AKIA*")) and not list(brain.layers.home.rglob("*AKIA*"))
    out = subprocess.run([sys.executable, "-m", "brain", "write", "note", GITHUB], cwd=repo, input="x\n",
                         capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.returncode == 2 and GITHUB not in out.stdout + out.stderr
    assert not list(brain.dir.rglob("*ghp_*"))


def test_a_decision_title_never_puts_a_key_in_a_file_name(brain, repo):
    record = brain.new_decision(f"Rotate {'AKIA' + 'IOSFODNN7EXAMPLE'} after PASSWORD=hunter2 leaked")
    names = [p.name for p in (brain.dir / "decisions").iterdir()]
    assert not any("akiaiosfodnn7example" in n.lower() or "hunter2" in n for n in names), names
    assert "AKIAIOSFODNN7EXAMPLE" not in (repo / record["path"]).read_text()
    # a decisions folder outside .brain/ is written by the same redaction
    (brain.dir / "brain.yml").write_text("version: 1\ndecisions:\n  dir: docs/adr\n")
    b = brainlib.open_brain(repo)
    record = b.new_decision(f"Keys: {GITHUB}", body=f"## Context\n\n{ENV_SECRET}\n")
    text = (repo / record["path"]).read_text()
    assert GITHUB not in text and AWS_SECRET not in text and GITHUB.lower() not in record["path"]


# -- channels: coordination rows on SQLite and PostgreSQL ---------------------------------------------
TABLES = {"claims": "item", "signals": "body, kind", "checkpoints": "step, note, claims, asks", "asks": "question, answer",
          "livestate": "intent, progress, delegation", "audit": "subject, detail", "overlap_decisions": "decision"}


def stored_text(backend) -> str:
    with backend.transaction(write=False) as tx:
        return "\n".join(str(row) for table, cols in TABLES.items() for row in tx.execute(f"SELECT {cols} FROM {table}"))


def exercise(c, secret_text: str, secret: str) -> None:
    """Every coordination write that takes text, each carrying the secret."""
    a = c.start_session("build").id
    b = c.start_session("review").id
    g1 = c.claim(a, f"name:deploy {secret_text}")
    g2 = c.claim(b, f"name:deploy {secret_text}")
    c.decide_overlap(g1.claim, g2.claim, f"both fine, {secret_text}")
    c.signal(a, b, f"use {secret_text} for staging")
    c.checkpoint(a, f"step with {secret_text}", note=f"note: {secret_text}")
    c.livestate.set(a, intent=f"deploy {secret_text}", progress=f"half {secret_text}", writer=a)
    ticket = c.arm(a, b, f"is {secret_text} still valid?", timeout=30)
    c.reply(b, ticket.ticket, f"no, rotate {secret_text}")
    assert c.release(a, item=f"name:deploy {secret_text}") == [g1.claim]  # found by the same text it was claimed with


def test_coordination_rows_hold_no_secret(backend, clock):  # noqa: F811
    c = make_coord(backend, clock)
    exercise(c, ENV_SECRET, AWS_SECRET)
    exercise(c, GITHUB, GITHUB)
    text = stored_text(backend)
    assert AWS_SECRET not in text and GITHUB not in text
    assert "[REDACTED:assigned_secret]" in text and "[REDACTED:github_token]" in text


def test_a_brains_coordinator_uses_its_configured_patterns(brain, backend, clock):  # noqa: F811
    (brain.dir / "brain.yml").write_text("version: 1\nsecrets:\n  patterns: ['ACME-[0-9]{6}']\n")
    b = brainlib.open_brain(brain.repo)
    c = coordinator_for(b, backend, clock=clock)
    exercise(c, "ticket ACME-123456", "ACME-123456")
    assert "ACME-123456" not in stored_text(backend)
    # and the conversation log copies of the ask and the reply
    assert b"ACME-123456" not in raw_tree(b.conversations_dir)


def test_cli_coordination_commands_store_no_secret(brain, repo):
    def run(*args: str) -> dict:
        out = subprocess.run([sys.executable, "-m", "brain", *args, "--json"], cwd=repo, capture_output=True,
                             text=True, timeout=60, env=os.environ)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    session = run("session", "start", "--role", "build")["session"]
    run("claim", f"name:{GITHUB}", "--session", session)
    run("checkpoint", "--session", session, "--step", f"deploying with {ENV_SECRET}")
    b = brainlib.open_brain(repo)
    text = stored_text(b.backend)
    assert GITHUB not in text and AWS_SECRET not in text


# -- settings: DSN passwords ---------------------------------------------------------------------
@pytest.mark.parametrize("dsn,shown", [
    ("postgresql://app:s3cret@db.internal:5432/brain", "postgresql://app:***@db.internal:5432/brain"),
    ("postgres://app:p%40ss@db/brain?sslmode=require", "postgres://app:***@db/brain?sslmode=require"),
    ("postgresql://db/brain?user=app&password=s3cret&sslmode=require",
     "postgresql://db/brain?user=app&password=***&sslmode=require"),
    ("postgresql://app@db/brain", "postgresql://app@db/brain"),
    ("postgresql://app:pa/ss@db/brain", "postgresql://app:***@db/brain"),
    ("postgresql://app:p@ss@db/brain?application_name=a@b", "postgresql://app:***@db/brain?application_name=a@b"),
    ("host=db user=app password='s e cret' dbname=brain", "host=db user=app password=*** dbname=brain"),
    ("sqlite", "sqlite"),
])
def test_mask_dsn(dsn, shown):
    assert mask_dsn(dsn) == shown


def test_settings_and_doctor_never_show_the_password(brain, repo, monkeypatch):
    monkeypatch.setenv("BRAIN_BACKEND", "postgresql://app:Sup3rSecretPw@127.0.0.1:1/brain")
    for args in (["settings"], ["settings", "--json"], ["doctor"], ["doctor", "--json"]):
        out = subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                             timeout=60, env=os.environ)
        assert "Sup3rSecretPw" not in out.stdout + out.stderr, args
        assert "app:***@127.0.0.1:1/brain" in out.stdout, args
    monkeypatch.setenv("BRAIN_BACKEND", "mysql://app:Sup3rSecretPw@db/brain")  # refused, and shown masked
    out = subprocess.run([sys.executable, "-m", "brain", "settings"], cwd=repo, capture_output=True, text=True,
                         timeout=60, env=os.environ)
    assert out.returncode != 0 and "Sup3rSecretPw" not in out.stdout + out.stderr and "app:***@db" in out.stderr


# -- export-template: canaries in every form ---------------------------------------------------
SHORT = "x7Qp2z"  # six characters: the floor


@pytest.fixture
def layered(brain):
    """Instance and personal layers holding values: a short one, a token mid-line, a name, deep in a big file."""
    home = brain.layers.home
    (home / "personal" / "creds.md").write_text(f"# creds\n\nvault pin: {SHORT}\nwifi password: correcthorse\n")
    (home / "personal" / "client-acme-2027.md").write_text("# a client\n")
    big = home / "instance" / "big.log"
    with open(big, "w") as handle:
        for i in range(60_000):  # ~3.5 MB: the value sits past any early cut-off
            handle.write(f"line {i:06d} of an ordinary machine log, nothing to see\n")
        handle.write("mount point /srv/deep-Mount-77 for the backups\n")
    brain.write("agents/reviewer.md", "---\ntier: hot\n---\nReview carefully.\n", layer="kernel")
    return brain


LEAKS = {
    "short value mid-line": ("profile/a.md", f"the pin is {SHORT} for now\n", "personal"),
    "value glued into a word": ("profile/b.md", f"prefix{SHORT}suffix\n", "personal"),
    "value from deep in a large layer file": ("profile/c.md", "backups under /srv/deep-Mount-77\n", "instance"),
    "layer file name copied": ("profile/d.md", "see client-acme-2027 notes\n", "personal"),
    "value in a kernel file name": (f"profile/{SHORT}.md", "# nothing inside\n", "personal"),
    "letters-only value of a secret key": ("profile/e.md", "the wifi is correcthorse\n", "personal"),
}


@pytest.mark.parametrize("case", list(LEAKS))
def test_export_refuses_a_layer_value_in_any_form(layered, tmp_path, case):
    path, text, layer = LEAKS[case]
    layered.write(path, text, layer="kernel")
    dest = tmp_path / "template"
    with pytest.raises(ExportLeak) as err:
        layered.layers.export_template(dest)
    assert (err.value.file, err.value.layer) == (f"kernel/{path}", layer)
    assert not dest.exists() and not list(tmp_path.glob(".template.*"))


def test_export_refuses_a_value_deep_in_a_large_kernel_file(layered, tmp_path, repo):
    filler = "an ordinary line of a long profile note, nothing in it\n" * 80_000  # ~4.4 MB before the value
    (layered.layers.path("kernel") / "profile" / "huge.md").write_text(filler + f"pin {SHORT}\n")
    dest = tmp_path / "template"
    out = subprocess.run([sys.executable, "-m", "brain", "export-template", str(dest), "--json"], cwd=repo,
                         capture_output=True, text=True, timeout=120, env=os.environ)
    assert out.returncode == ExportLeak.exit_code
    assert "kernel/profile/huge.md" in out.stdout + out.stderr and SHORT not in out.stdout + out.stderr
    assert not dest.exists()


def test_export_without_a_leak_still_succeeds(layered, tmp_path):
    layered.write("profile/style.md", "Prefer small modules and clear names.\n", layer="kernel")
    files = layered.layers.export_template(tmp_path / "template")
    assert "kernel/profile/style.md" in files and "kernel/agents/reviewer.md" in files


def test_mcp_coordination_tools_store_no_secret(brain, repo):
    """The same rows written by an agent over a real stdio MCP server (official SDK client)."""
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, with_client

    other = brain.coord.start_session("review").id

    async def body(client):
        results = [
            await client.call_tool("brain_claim", {"item": f"name:{GITHUB}", "ttl": 600}),
            await client.call_tool("brain_signal", {"target": other, "text": f"staging uses {ENV_SECRET}"}),
            await client.call_tool("workstate_set", {"intent": f"rotate {GITHUB}", "progress": "PASSWORD=hunter2 done"}),
            await client.call_tool("brain_checkpoint", {"step": f"after {GITHUB}", "note": ENV_SECRET}),
        ]
        return results

    same_code = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    for result in with_client(stdio_params(repo, **same_code), body):
        assert not result.is_error, result
    text = stored_text(brain.backend)
    assert GITHUB not in text and AWS_SECRET not in text and "hunter2" not in text


def test_texts_known_clean_are_kept_and_secrets_never_are():
    # a team server redacts the same keys, ids and items on every claim: a clean short text is kept so the
    # next call is a lookup; a text that held a secret is never kept, and redacts the same way every time
    r = Redactor()
    for text in ("src/auth/login.py", f"token {GITHUB}", f"token {GITHUB}", "src/auth/login.py", "x" * 500):
        assert r(text) == Redactor()(text)
    assert "src/auth/login.py" in r._clean and "x" * 500 not in r._clean
    assert not any(GITHUB in kept for kept in r._clean)
    off = Redactor(enabled=False)
    assert off(f"token {GITHUB}") == f"token {GITHUB}" and not off._clean
