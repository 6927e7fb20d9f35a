"""server.json, the entry of the official MCP registry, validates against the schema the registry publishes.

The schema is a copy in tests/data/ (its constraints written out by hand from the registry's published
revision, named by its `$id`); the test never fetches it. The registry also checks that the PyPI
package belongs to the server: the package's README (its long description) must carry the line
`mcp-name: <server name>`. The server's command line must be one that really runs brain's server.
"""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "tests" / "data" / "mcp-registry-server.schema.json"


def _validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def _server() -> dict:
    return json.loads((ROOT / "server.json").read_text(encoding="utf-8"))


def test_server_json_validates_against_the_registry_schema_it_names():
    server = _server()
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert server["$schema"] == schema["$id"]
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in _validator().iter_errors(server)]
    assert errors == []


@pytest.mark.parametrize("change", [
    lambda s: s.update(description="x" * 101),
    lambda s: s.update(name="brain"),  # no namespace
    lambda s: s["packages"][0].update(version="latest"),
    lambda s: s["packages"][0].pop("transport"),
    lambda s: s["packages"][0]["packageArguments"][0].pop("value"),  # a positional needs value or valueHint
    lambda s: s.pop("version"),
], ids=["long-description", "no-namespace", "latest", "no-transport", "positional-without-value", "no-version"])
def test_the_schema_copy_refuses_what_the_registry_refuses(change):
    server = copy.deepcopy(_server())
    change(server)
    assert list(_validator().iter_errors(server))


def test_the_package_readme_names_the_server_and_the_command_runs_brains_server():
    server = _server()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"mcp-name: {server['name']}" in readme
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == pyproject["project"]["name"]
    # a registry client runs `uvx <runtime arguments> <identifier>==<version> <package arguments>`
    assert pyproject["project"]["scripts"][package["identifier"]] == "brain.cli:main"
    (with_mcp,) = package["runtimeArguments"]
    assert with_mcp["name"] == "--with" and with_mcp["value"] in pyproject["project"]["optional-dependencies"]["mcp"]
    assert [a["value"] for a in package["packageArguments"]] == ["serve"]
    assert package["transport"] == {"type": "stdio"}
    documented = (ROOT / "README.md").read_text(encoding="utf-8")
    for variable in package.get("environmentVariables", []):
        assert f"`{variable['name']}`" in documented, variable["name"]
