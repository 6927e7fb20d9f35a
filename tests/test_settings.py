"""One validated settings reader: wrong keys and types name the file, the key and what was expected."""

from __future__ import annotations

import pytest

import brain as brainlib
from brain.errors import SettingsError
from brain.settings import SCHEMA, load_settings


def write(path, text):
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)


def test_defaults_without_files(tmp_path):
    settings = load_settings(tmp_path, env={"BRAIN_HOME": str(tmp_path / "home")})
    assert settings["boot.budget"] == 8000
    assert settings["backend"] == "sqlite"
    assert settings.home == tmp_path / "home"


def test_local_file_and_environment_override(brain):
    write(brain.dir / "brain.local.yml", "machine: laptop\nboot:\n  budget: 3000\n")
    settings = load_settings(brain.dir, env={"BRAIN_HOME": "/x", "BRAIN_MACHINE": "ci-box"})
    assert settings["boot.budget"] == 3000
    assert settings.sources["boot.budget"] == "brain.local.yml"
    assert settings.machine == "ci-box"
    assert settings.sources["machine"] == "BRAIN_MACHINE"


@pytest.mark.parametrize("text,key,expected_word", [
    ("boot:\n  budjet: 10\n", "boot.budjet", "known keys"),
    ("boot:\n  budget: lots\n", "boot.budget", "integer"),
    ("boot:\n  budget: true\n", "boot.budget", "integer"),
    ("modules: src/*\n", "modules", "list"),
    ("features:\n  fast: maybe\n", "features", "true|false"),
    ("services:\n  - {name: db, port: 99999}\n", "services[0].port", "port"),
    ("roles:\n  review: {tiers: [lukewarm]}\n", "roles.review.tiers", "always"),
    ("backend: sqlite\n", "backend", "brain.local.yml"),
])
def test_wrong_key_or_type_names_file_key_and_expectation(brain, text, key, expected_word):
    write(brain.dir / "brain.yml", text)
    with pytest.raises(SettingsError) as info:
        load_settings(brain.dir)
    err = info.value
    assert err.file.endswith("brain.yml")
    assert err.key == key
    assert expected_word in err.expected


def test_corrupted_yaml_and_bad_utf8_are_reported(brain):
    write(brain.dir / "brain.yml", "boot: [unclosed\n")
    with pytest.raises(SettingsError) as info:
        brainlib.open(brain.repo)
    assert info.value.expected == "valid YAML"
    write(brain.dir / "brain.yml", b"version: 1\nname: \xff\xfe\n")
    with pytest.raises(SettingsError) as info:
        brainlib.open(brain.repo)
    assert info.value.expected == "UTF-8 text"


def test_bad_backend_value(brain):
    write(brain.dir / "brain.local.yml", "backend: mysql://x\n")
    with pytest.raises(SettingsError) as info:
        load_settings(brain.dir)
    assert info.value.key == "backend"


def test_every_setting_and_variable_is_documented_in_readme():
    from pathlib import Path

    from brain.settings import ENVIRONMENT

    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    missing = [k for k in list(SCHEMA) + list(ENVIRONMENT) if f"`{k}`" not in readme]
    assert not missing, f"document these in README.md: {missing}"


def test_settings_cache_follows_every_change(brain):
    import os

    (brain.dir / "brain.yml").write_text("version: 1\nboot:\n  budget: 4000\n")
    assert load_settings(brain.dir)["boot.budget"] == 4000
    assert (brain.dir / "runtime" / "settings.cache.json").exists()
    (brain.dir / "brain.yml").write_text("version: 1\nboot:\n  budget: 5000\n")
    assert load_settings(brain.dir)["boot.budget"] == 5000
    (brain.dir / "brain.yml").write_text("boot:\n  budget: [broken\n")
    with pytest.raises(SettingsError):
        load_settings(brain.dir)
    (brain.dir / "brain.yml").write_text("version: 1\n")
    os.remove(brain.dir / "runtime" / "settings.cache.json")
    assert load_settings(brain.dir)["boot.budget"] == 8000
