"""Every YAML brain reads is parsed by the one bounded reader (brain.yamlsafe): alias bombs, deep
nesting, long numbers and tags are refused with a typed error before anything is built."""

from __future__ import annotations

import ast
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import brain as brainlib
from brain.cards.contracts import parse_contract
from brain.cards.extract import extract_file
from brain.errors import InvalidInput, SettingsError, YamlRefused
from brain.memory.layers import AgentProfile
from brain.settings import load_settings

SRC = Path(__file__).resolve().parents[1] / "src" / "brain"


def bomb(levels: int, width: int = 9) -> str:
    """Nested aliases: ``levels`` anchors, each a list of ``width`` aliases of the previous one."""
    lines = ["l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines)


def test_no_module_but_yamlsafe_imports_yaml():
    """The bounded reader is the only door: a plain `yaml.safe_load` anywhere else is caught here."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "yamlsafe.py" and path.parent == SRC:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                    "__import__", "import_module") and node.args and isinstance(node.args[0], ast.Constant):
                names = [str(node.args[0].value)]
            if any(n == "yaml" or n.startswith("yaml.") or n == "ruamel.yaml" for n in names):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def test_decision_alias_bomb_is_listed_without_its_front_matter(brain):
    """The 338-byte shape of issue 20 (7 levels), but 4 levels here so the old code fails fast: the record
    is listed from its file name and body, the front matter ignored."""
    folder = brain.repo / ".brain" / "decisions"
    folder.mkdir(parents=True, exist_ok=True)
    text = "---\n" + bomb(4) + "\nmodules: *l3\ntitle: Bomb\n---\n# 0001 Real title\n\nBody.\n"
    (folder / "0001-bombed.md").write_text(text, encoding="utf-8")
    listed = brain.decisions(include_inactive=True)
    assert [d["number"] for d in listed] == [1]
    assert listed[0]["modules"] == []


def test_decision_alias_bomb_of_issue_20_costs_bounded_memory(brain, repo):
    """A 7-level bomb (15 wide, about 560 bytes) under a 1 GB address-space cap: `brain decisions`
    answers (the old code ran out of memory; issue 20's 338-byte one took 3.6 GB and 25 s)."""
    folder = repo / ".brain" / "decisions"
    folder.mkdir(parents=True, exist_ok=True)
    front = bomb(7, width=15) + "\nmodules: *l6\n"
    (folder / "0001-bombed.md").write_text("---\n" + front + "---\n# 0001 Bombed\n", encoding="utf-8")

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    out = subprocess.run([sys.executable, "-m", "brain", "decisions", "--all", "--json"], cwd=repo, capture_output=True,
                         text=True, preexec_fn=cap, timeout=120)
    assert out.returncode == 0, out.stderr[-400:]


def test_profile_alias_bomb_is_refused_and_boot_goes_on(brain):
    text = "---\n" + bomb(4) + "\ntier: *l3\nroles: [lead]\n---\nBe the lead.\n"
    with pytest.raises(YamlRefused) as caught:
        AgentProfile.parse(text, "agents/bomb.md", "bomb")
    assert caught.value.problem == "alias"
    agents = brain.repo / ".brain" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "bomb.md").write_text(text, encoding="utf-8")
    result = brain.boot(role="lead")
    assert result.text
    assert [p["source"] for p in brain.profile_problems()] == ["agents/bomb.md"]


def test_settings_refuse_anchors_and_aliases(brain):
    (brain.dir / "brain.yml").write_text("version: 1\nboot:\n  budget: &b 9000\n  min_budget: *b\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(brain.dir, {})
    assert caught.value.file.endswith("brain.yml")


def test_settings_with_a_huge_integer_are_a_settings_error_not_a_traceback(brain):
    """Past 4300 digits Python's int() raises ValueError, which plain yaml.safe_load lets through."""
    (brain.dir / "brain.yml").write_text("version: 1\nboot:\n  budget: " + "9" * 5000 + "\n")
    with pytest.raises(SettingsError):
        load_settings(brain.dir, {})


@pytest.mark.parametrize("value", ["!!bool maybe", "!!timestamp not-a-date", "!!int abc"])
def test_settings_whose_tagged_value_cannot_be_built_are_a_settings_error_not_a_traceback(brain, value):
    """PyYAML's constructors raise KeyError / AttributeError / ValueError there, which safe_load lets through."""
    (brain.dir / "brain.yml").write_text(f"version: 1\nsearch:\n  enabled: {value}\n")
    with pytest.raises(SettingsError):
        load_settings(brain.dir, {})


@pytest.mark.parametrize("front, problem", [
    ("tier: " + "[" * 200 + "]" * 200, "depth"),
    ("tier: hot\nroles:\n" + "".join("  " * i + "- \n" for i in range(1, 100)), "depth"),
    ("tier: !!python/object/apply:os.system [echo hi]", "tag"),
    ("tier: !custom hot", "tag"),
    ("base: &b {tier: hot}\n<<: *b", "alias"),
    ("tier: " + "1" * 150, "scalar"),
    ("tier: " + ":".join(["1"] * 80), "scalar"),  # a YAML 1.1 sexagesimal integer: quadratic to convert
])
def test_front_matter_variants_are_refused_by_kind(front, problem):
    with pytest.raises(YamlRefused) as caught:
        AgentProfile.parse("---\n" + front + "\n---\nBody\n", "agents/x.md", "x")
    assert caught.value.problem == problem


def test_profile_with_a_5000_digit_tier_does_not_break_boot(brain):
    """The YAML-free front matter reader turned it into int(), whose ValueError failed every boot."""
    agents = brain.repo / ".brain" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "long.md").write_text("---\ntier: " + "9" * 5000 + "\n---\nBody\n", encoding="utf-8")
    assert brain.boot(role="lead").text
    assert [p["source"] for p in brain.profile_problems()] == ["agents/long.md"]


def test_colliding_number_keys_are_refused_before_the_quadratic_build():
    """Ints equal modulo 2**61-1 share a hash: 8,000 such keys took a second, 40,000 (1 MiB) about 25."""
    from brain.yamlsafe import MAX_NUMBER_KEYS, load_yaml

    text = "\n".join(f"{(2**61 - 1) * k}: 1" for k in range(1, MAX_NUMBER_KEYS + 2))
    with pytest.raises(YamlRefused) as caught:
        load_yaml(text, "brain.yml")
    assert caught.value.problem == "keys"
    assert len(load_yaml("\n".join(f"{k}: x" for k in range(MAX_NUMBER_KEYS)), "spec")) == MAX_NUMBER_KEYS


def test_merge_key_without_aliases_still_reads():
    profile = AgentProfile.parse("---\n<<: {tier: hot}\nroles: [lead]\n---\nBody\n", "agents/x.md", "x")
    assert profile.tier == "hot"


def test_contract_with_aliases_is_a_contract_error():
    contract = parse_contract(b"summary: &s create_user\nexposes: [*s]\n")
    assert contract.error is not None and contract.exposes == []
    assert parse_contract(("exposes: *l6\n" + bomb(7)).encode()).error is not None


def test_openapi_spec_may_use_aliases_but_not_a_bomb(tmp_path):
    ok = "common: &c {get: {summary: x}}\npaths:\n  /a: *c\n  /b: *c\n"
    spec = extract_file("api/openapi.yaml", ok.encode(), dotted=None, max_bytes=10**6)
    assert spec["openapi"] == [["GET", "/a"], ["GET", "/b"]]
    refused = extract_file("api/openapi.yaml", (bomb(8) + "\npaths: {/a: {get: *l7}}\n").encode(), dotted=None,
                           max_bytes=10**6)
    assert refused["status"] == "unread"


def test_alias_to_the_node_that_holds_it_is_refused_even_where_aliases_are_allowed():
    from brain.yamlsafe import load_yaml

    with pytest.raises(YamlRefused) as caught:
        load_yaml("a: &a {b: *a}", "spec.yaml", aliases=True)
    assert caught.value.problem == "alias"


def test_write_of_a_bomb_is_refused_and_nothing_written(brain):
    text = "---\n" + bomb(3) + "\n---\n# Note\n"
    with pytest.raises(YamlRefused) as caught:
        brain.write("notes/bomb.md", text, role=None)
    assert caught.value.problem == "alias" and isinstance(caught.value, InvalidInput)
    assert not (brain.dir / "notes" / "bomb.md").exists()
    with pytest.raises(YamlRefused):
        brain.write("contracts/x.yml", "exposes: *l2\n" + bomb(3))
    assert not (brain.dir / "contracts" / "x.yml").exists()
    brain.write("notes/rule.md", "---\nnot: [valid\n---\n# A note that opens with a rule\n")  # syntax: allowed


def test_brain_write_over_mcp_gets_a_typed_error(brain, repo):
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, with_client

    text = "---\n" + bomb(7) + "\ntier: *l6\n---\nBe the lead.\n"

    async def body(client):
        return await client.call_tool("brain_write", {"path": "agents/bomb.md", "text": text})

    result = with_client(stdio_params(repo), body)
    assert result.is_error
    assert result.structured_content["error"] == "yaml_refused"
    assert result.structured_content["problem"] == "alias"
    assert not (repo / ".brain" / "agents" / "bomb.md").exists()


def test_plain_yaml_reads_as_before():
    from brain.yamlsafe import load_yaml

    text = "a: 1\nb: [x, 'y', 2.5, true, null]\nc: {d: 2026-01-01, e: !!str 3}\n"
    assert load_yaml(text, "t") == {"a": 1, "b": ["x", "y", 2.5, True, None],
                                    "c": {"d": __import__("datetime").date(2026, 1, 1), "e": "3"}}
    assert brainlib is not None


def test_without_libyaml_the_same_bounds_hold(monkeypatch):
    """PyYAML's own parser (no libyaml) costs time quadratic in flow nesting before any node exists:
    the bracket pre-check refuses it first; every other bound is the composer's, as with libyaml."""
    import brain.yamlsafe as yamlsafe

    real = yamlsafe._loader_class
    monkeypatch.setattr(yamlsafe, "_loader_class", lambda pure_python=False: real(pure_python=True))
    assert yamlsafe._loader_class().pure_python
    for text, problem in (("[" * 100_000, "depth"), (bomb(7), "alias"), ("x: !!python/name:os.system", "tag"),
                          ("x: " + "1" * 200, "scalar")):
        with pytest.raises(YamlRefused) as caught:
            yamlsafe.load_yaml(text, "t")
        assert caught.value.problem == problem
    assert yamlsafe.load_yaml("a: [1, {b: c}]", "t") == {"a": [1, {"b": "c"}]}
