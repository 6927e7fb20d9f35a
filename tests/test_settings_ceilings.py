"""Limits a repository can raise: the versioned brain.yml keeps each size, count and time limit under a
ceiling; brain.local.yml (the machine's own) may go higher."""

from __future__ import annotations

import pytest

from brain.errors import SettingAboveCeiling, SettingsError
from brain.settings import SCHEMA, VERSIONED_CEILINGS, load_settings


def test_issue_20_limits_raised_to_2_53_by_the_versioned_file_are_refused(brain):
    (brain.dir / "brain.yml").write_text("version: 1\nserver:\n  max_request_bytes: 9007199254740992\n")
    with pytest.raises(SettingAboveCeiling) as caught:
        load_settings(brain.dir, {})
    error = caught.value
    assert isinstance(error, SettingsError) and error.exit_code == 4
    assert (error.key, error.value, error.ceiling) == ("server.max_request_bytes", 2**53,
                                                       VERSIONED_CEILINGS["server.max_request_bytes"])
    assert error.file.endswith("brain.yml") and "brain.local.yml" in error.hint
    (brain.dir / "brain.yml").write_text("version: 1\nlimits:\n  write_bytes: 9007199254740992\n")
    with pytest.raises(SettingAboveCeiling):
        load_settings(brain.dir, {})


def test_the_local_file_may_go_above_the_ceiling(brain):
    (brain.dir / "brain.local.yml").write_text("limits:\n  write_bytes: 9007199254740992\ncards:\n  workers: 500\n")
    settings = load_settings(brain.dir, {})
    assert settings["limits.write_bytes"] == 2**53 and settings.sources["limits.write_bytes"] == "brain.local.yml"
    assert settings["cards.workers"] == 500


@pytest.mark.parametrize("key", sorted(VERSIONED_CEILINGS))
def test_every_ceiling_is_enforced_at_its_value_plus_one_and_allows_the_value(brain, key):
    if key not in SCHEMA:
        pytest.skip(f"{key} is not a setting of this tree (a ceiling kept for a branch that adds it)")
    spec = SCHEMA[key]
    ceiling = VERSIONED_CEILINGS[key]
    if spec.type == "int":
        over, at = ceiling + 1, ceiling
    elif spec.type == "list[str]":
        over, at = [f"e{i}" for i in range(ceiling + 1)], [f"e{i}" for i in range(ceiling)]
    elif spec.type == "map[bool]":
        over, at = {f"e{i}": True for i in range(ceiling + 1)}, {f"e{i}": True for i in range(ceiling)}
    elif spec.type == "roles":
        over, at = {f"e{i}": {} for i in range(ceiling + 1)}, {f"e{i}": {} for i in range(ceiling)}
    else:  # map[str]: territories
        over, at = {f"notes/e{i}": "r" for i in range(ceiling + 1)}, {f"notes/e{i}": "r" for i in range(ceiling)}
    import json

    def write(value):
        (brain.dir / "brain.yml").write_text(json.dumps({"version": 1, key: value}) + "\n")

    write(over)
    with pytest.raises(SettingAboveCeiling) as caught:
        load_settings(brain.dir, {})
    assert caught.value.key == key
    write(at)
    assert load_settings(brain.dir, {})[key] == at


def test_every_limit_setting_has_a_ceiling():
    """A new size, count or time limit must say how far a repository may raise it."""
    words = ("bytes", "seconds", "ttl", "max", "workers", "budget", "tokens", "timeout", "days", "keys", "files",
             "functions", "threads")
    exempt = {"version", "cards.split_bytes", "cards.split_min_bytes"}  # thresholds of card splitting, not costs
    missing = [k for k, s in SCHEMA.items() if s.type == "int" and k not in exempt and not s.local_only
               and any(w in k for w in words) and k not in VERSIONED_CEILINGS]
    assert missing == []


@pytest.mark.parametrize("key", ["log.rotate_bytes", "log.rotate_days", "log.retention_days",
                                 "coord.prune_idle_seconds", "coord.prune_gone_seconds"])
def test_zero_that_lifts_a_limit_is_for_the_local_file_only(brain, key):
    """0 means never rotate, never prune, keep forever: above any ceiling, so not the repository's choice."""
    import json

    (brain.dir / "brain.yml").write_text(json.dumps({"version": 1, key: 0}) + "\n")
    with pytest.raises(SettingAboveCeiling) as caught:
        load_settings(brain.dir, {})
    assert (caught.value.key, caught.value.value) == (key, 0)
    (brain.dir / "brain.yml").write_text("version: 1\n")
    (brain.dir / "brain.local.yml").write_text(json.dumps({key: 0}) + "\n")
    assert load_settings(brain.dir, {})[key] == 0
