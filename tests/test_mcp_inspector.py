"""A third-party client: the MCP Inspector's CLI (Node) lists and calls brain's tools over stdio.

Skipped only when `npx` is absent. The package is fetched from the npm registry on
first use (CI installs it up front); BRAIN_TEST_INSPECTOR pins another version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from test_mcp_helpers import server_env  # noqa: E402

INSPECTOR = os.environ.get("BRAIN_TEST_INSPECTOR", "@modelcontextprotocol/inspector@2.12.0")

pytestmark = [pytest.mark.timeout(400),
              pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")]


def inspector(repo, *method_args: str) -> dict:
    env_args = [arg for key, value in server_env().items() for arg in ("-e", f"{key}={value}")]
    out = subprocess.run(["npx", "-y", INSPECTOR, "--cli", *env_args, sys.executable, "-m", "brain", "-C", str(repo),
                          "serve", *method_args], cwd=repo, capture_output=True, text=True, timeout=360)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_inspector_lists_the_tools(brain, repo):
    listed = inspector(repo, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"brain_boot", "brain_write", "brain_read", "brain_focus", "brain_workflows", "brain_decisions",
            "brain_state"} <= names
    assert all(tool["inputSchema"]["type"] == "object" for tool in listed["tools"])


def test_inspector_calls_a_tool(brain, repo):
    brain.write("now.md", "# Now\n\nChecked by a Node client.\n")
    called = inspector(repo, "--method", "tools/call", "--tool-name", "brain_read", "--tool-arg", "path=now.md")
    assert called.get("isError") in (None, False)
    assert called["structuredContent"]["text"] == "# Now\n\nChecked by a Node client.\n"
