"""The README's first command, as a new user runs it: init then boot, through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys


def run_brain(cwd, *args, input=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, capture_output=True, text=True,
                          input=input, timeout=60)


def test_init_then_boot_starts_with_now(repo):
    assert run_brain(repo, "init").returncode == 0
    wrote = run_brain(repo, "write", "now", input="# Now\n\nShipping the parser. Next: tests.\n")
    assert wrote.returncode == 0, wrote.stderr
    out = run_brain(repo, "boot", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"text", "tokens", "budget", "sections", "files", "omitted", "functions", "evidence"}
    assert data["sections"][0]["slot"] == "now"
    body = data["text"].split("\n", 2)[2]
    assert body.startswith("## Now (.brain/now.md)\n\n# Now\n\nShipping the parser.")
