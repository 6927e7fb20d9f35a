"""Profiles and settings that cannot brick the boot, and hints that name the setting behind a limit."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from brain.errors import InvalidInput, TooLarge


def cli(repo, *args):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True, timeout=60)


@pytest.fixture
def profiled(brain):
    agents = brain.dir / "agents"
    (agents / "good.md").write_text("---\ntier: always\n---\nAlways run the linter.\n")
    (agents / "typo.md").write_text("---\ntier: hottt\nroles: [backend]\n---\nNever seen.\n")
    (agents / "broken.md").write_text("---\ntier: [hot\nroles: {\n---\nNever seen either.\n")
    (agents / "numbers.md").write_text("---\ntier: hot\nroles: 5\n---\nRoles is not a list.\n")
    (agents / "archive.md").write_text("---\ntier: cold\nroles: [backend]\n---\nThe old deploy procedure.\n")
    return brain


def test_a_bad_profile_is_skipped_and_named_in_the_manifest_and_every_boot_still_works(profiled):
    result = profiled.boot(role="backend", record=False)
    assert "Always run the linter." in result.text
    assert "Never seen" not in result.text and "The old deploy procedure." not in result.text
    omitted = {o.source: o for o in result.omitted}
    skipped = {s for s, o in omitted.items() if o.reason == "unparsable"}
    assert skipped == {"agents/typo.md", "agents/broken.md", "agents/numbers.md"}
    typo = omitted["agents/typo.md"].detail
    assert "hottt" in typo and "always, hot, warm, cold" in typo
    assert "- agents/typo.md (0 tokens), skipped: does not parse (" in result.text  # the manifest names it too
    cold = omitted["agents/archive.md"]  # cold: listed as fetchable, never loaded
    assert cold.reason == "cold_profile"
    assert cold.fetch == "brain read agents/archive.md" and cold.tokens > 0
    out = cli(profiled.repo, "boot", "--role", "backend", "--json")
    assert out.returncode == 0, out.stderr


def test_doctor_reports_the_skipped_profiles(profiled):
    out = cli(profiled.repo, "doctor", "--json")
    check = {c["check"]: c for c in json.loads(out.stdout)}["agent profiles"]
    assert out.returncode == 0 and not check["ok"] and check["level"] == "warning"  # a warning fails nothing
    assert cli(profiled.repo, "doctor", "--strict").returncode == 12  # ...but has its own code for CI
    assert "agents/typo.md" in check["detail"] and "agents/broken.md" in check["detail"]
    assert "always, hot, warm, cold" in check["fix"]


def test_boot_help_lists_the_tiers(brain):
    out = cli(brain.repo, "boot", "--help")
    assert all(tier in out.stdout for tier in ("always", "hot", "warm", "cold"))


def test_each_limit_hint_names_the_setting_that_governs_it(brain):
    with pytest.raises(TooLarge) as now:
        brain.write("now.md", "x" * (brain.settings["limits.now_bytes"] + 1))
    assert now.value.setting == "limits.now_bytes" and "limits.now_bytes" in now.value.hint
    with pytest.raises(TooLarge) as note:
        brain.write("notes/big.md", "x" * (brain.settings["limits.write_bytes"] + 1))
    assert note.value.setting == "limits.write_bytes" and "limits.write_bytes" in note.value.hint
    session = brain.coord.start_session("t").id
    with pytest.raises(TooLarge) as fixed:
        brain.coord.checkpoint(session, "x" * 9000)
    assert fixed.value.setting is None and "limits." not in fixed.value.hint
    with pytest.raises(InvalidInput) as budget:
        brain.boot(budget=1, record=False)
    assert "boot.min_budget" in budget.value.hint
