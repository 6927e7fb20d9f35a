"""`brain serve --http`: streamable HTTP on a free port, reached with the SDK's HTTP client."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

from test_mcp_helpers import BOUND, serve_http, server_env, text_of, with_client  # noqa: E402

pytestmark = pytest.mark.timeout(120)

@pytest.fixture
def http_server(brain, repo):
    """`brain serve --http --port 0`: the server binds a free port and announces its URL on stderr."""
    brain.write("now.md", "# Now\n\nServing over HTTP.\n")
    with serve_http(repo, server_env()) as url:
        yield url


def test_http_serves_the_tools_on_localhost(http_server):
    assert http_server.startswith("http://127.0.0.1:") and http_server.endswith("/mcp")

    async def body(client):
        names = {t.name for t in (await client.list_tools()).tools}
        read = await client.call_tool("brain_read", {"path": "now.md"})
        bad = await client.call_tool("brain_read", {"path": "now.md", "extra": 1})
        return names, read, bad

    for mode in ("auto", "legacy"):
        names, read, bad = with_client(http_server, body, mode=mode)
        assert {"brain_boot", "brain_read", "brain_write"} <= names
        assert "Serving over HTTP." in text_of(read)
        assert bad.is_error and bad.structured_content["error"] == "invalid_input"


def test_http_port_in_use_is_a_clear_error(http_server, repo):
    port = http_server.rsplit(":", 1)[1].split("/")[0]
    out = subprocess.run([sys.executable, "-m", "brain", "serve", "--http", "--port", port], cwd=repo,
                         capture_output=True, text=True, timeout=BOUND, env={**os.environ, **server_env()})
    assert out.returncode == 2  # InvalidInput
    assert out.stdout == ""
