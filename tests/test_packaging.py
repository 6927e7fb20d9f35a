"""The package's metadata and the test command's configuration, read back from the real tools.

- The license is an SPDX string (PEP 639): the TOML-table form `{ text = "MIT" }` is deprecated by
  setuptools and warned about on every install and build with a current pip. A wheel built by pip with
  the declared backend carries `License-Expression: MIT` and the build says nothing deprecated.
- The README's test command (`python -m pytest -q`, also what `.ci/run` runs) names the reason of every
  skip: without `-rs` a quiet run only counts them, and the browser tests vanish silently without chromium.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_license_is_an_spdx_string_and_the_declared_backend_reads_it():
    data = _pyproject()
    assert data["project"]["license"] == "MIT"
    backend = [r for r in data["build-system"]["requires"] if re.match(r"setuptools\b", r)]
    assert len(backend) == 1
    floor = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", backend[0].replace(" ", ""))
    assert floor and int(floor.group(1)) >= 77, backend  # 77 is the first setuptools that reads the SPDX string


@pytest.mark.slow
def test_a_wheel_built_by_pip_carries_the_license_expression_and_no_deprecation(tmp_path):
    source = tmp_path / "source"  # a copy: the build's egg-info and build/ stay out of the checkout
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    out = tmp_path / "wheels"
    # the installed backend (the dev extra pins setuptools>=77), not a fresh one fetched for the build: offline
    pytest.importorskip("setuptools", minversion="77")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-v", "--disable-pip-version-check", str(source), "-w", str(out)],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "SetuptoolsDeprecationWarning" not in proc.stdout + proc.stderr
    (wheel,) = out.glob("agent_brain-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = HeaderParser().parsestr(archive.read(name).decode("utf-8"))
        names = archive.namelist()
    assert metadata["License-Expression"] == "MIT"
    assert metadata["License"] is None  # the deprecated free-text field is gone
    assert "brain/search/weights.json" in names  # the ranking's weights are package data


def test_the_test_command_names_the_reason_of_every_skip(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text("import pytest\n\n\ndef test_skipped():\n    pytest.skip('needs the probe-7f3a tool')\n",
                     encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                           str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(probe)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = proc.stdout.split("short test summary info", 1)
    assert len(summary) == 2 and "needs the probe-7f3a tool" in summary[1], proc.stdout
