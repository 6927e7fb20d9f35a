"""Cards on a real-world-shaped package (httpx 0.27's layout, rebuilt small in the test).

httpx declares `httpcore` in pyproject, keeps its transports in the private subpackage
`httpx/_transports` and re-exports them from `httpx/__init__.py`: the cards must say
`httpcore` is declared, show what `_transports` defines and who re-exports it, and every
"N files: ..." line must list N files.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from brain.cards.project import ProjectInfo, _requirements

PYPROJECT = """[project]
name = "httpx"
dependencies = ["certifi", "httpcore==1.*", "anyio", "idna"]
[project.optional-dependencies]
http2 = ["h2>=3,<5"]
"""

FILES = {
    "httpx/__init__.py": '"""HTTP for Humans."""\nfrom ._client import Client\nfrom ._transports import *\n\n'
                         '__all__ = ["Client", "HTTPTransport", "MockTransport", "BaseTransport"]\n',
    "httpx/_client.py": "import httpcore\n\nfrom ._transports.base import BaseTransport\n"
                        "from ._transports.default import HTTPTransport\n\n\nclass Client:\n"
                        "    def __init__(self, transport: BaseTransport | None = None) -> None:\n"
                        "        self.transport = transport or HTTPTransport()\n" + "# padding\n" * 40,
    "httpx/_models.py": "import idna\n\n\nclass Request:\n    pass\n\n\nclass Response:\n    pass\n" + "# pad\n" * 40,
    "httpx/_transports/__init__.py": "from .base import *\nfrom .default import *\nfrom .mock import *\n\n"
                                     '__all__ = ["BaseTransport", "HTTPTransport", "MockTransport"]\n',
    "httpx/_transports/base.py": 'from .._models import Request, Response\n\n__all__ = ["BaseTransport"]\n\n\n'
                                 "class BaseTransport:\n    def handle_request(self, request: Request) -> Response:\n"
                                 '        """Send a single HTTP request and return a response."""\n'
                                 "        raise NotImplementedError\n" + "# pad\n" * 40,
    "httpx/_transports/default.py": 'import httpcore\n\nfrom .._models import Request, Response\n'
                                    'from .base import BaseTransport\n\n__all__ = ["HTTPTransport"]\n\n\n'
                                    "class HTTPTransport(BaseTransport):\n"
                                    "    def handle_request(self, request: Request) -> Response:\n"
                                    "        return httpcore.request(request)\n" + "# pad\n" * 40,
    "httpx/_transports/mock.py": 'from .._models import Request, Response\nfrom .base import BaseTransport\n\n'
                                 '__all__ = ["MockTransport"]\n\n\nclass MockTransport(BaseTransport):\n'
                                 "    def __init__(self, handler) -> None:\n        self.handler = handler\n" + "# pad\n" * 40,
}


@pytest.fixture
def httpx_cards(repo, brain) -> dict[str, str]:
    (repo / "pyproject.toml").write_text(PYPROJECT)
    for rel, text in FILES.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # split the package into module cards like the real (160 kB) httpx is, at this fixture's size
    (brain.dir / "brain.yml").write_text("version: 1\ncards:\n  split_bytes: 1000\n  split_min_bytes: 100\n")
    out = subprocess.run([sys.executable, "-m", "brain", "map"], cwd=repo, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    cards = brain.dir / "modules"
    return {p.relative_to(cards).as_posix()[:-3]: p.read_text() for p in cards.rglob("*.md")}


def test_a_requirement_starting_with_http_is_declared(httpx_cards):
    card = httpx_cards["httpx"]
    assert "- `httpcore` — declared (`httpcore==1.*`)" in card
    assert "- `httpcore` — declared (`httpcore==1.*`)" in httpx_cards["httpx/_transports"]


def test_requirement_lines_only_skip_real_urls():
    declared: dict[str, str] = {}
    _requirements(["httpcore==1.*", "http-ece>=1", "httpx[http2]", "https://example.invalid/pkg.whl",
                   "git+https://example.invalid/repo.git", "-r other.txt", "--index-url https://x.invalid",
                   "name @ https://example.invalid/name.zip", "file:///tmp/x.whl"], declared)
    assert set(declared) == {"httpcore", "http-ece", "httpx", "name"}
    assert ProjectInfo(declared=declared).dist_for_import("httpcore") == ("httpcore", "httpcore==1.*")


def test_a_private_implementation_package_shows_what_it_defines_and_who_reexports_it(httpx_cards):
    card = httpx_cards["httpx/_transports"]
    assert "Nothing public found" not in card
    for name in ("class HTTPTransport(BaseTransport)", "class MockTransport(BaseTransport)", "class BaseTransport"):
        assert name in card
    assert "_Private package: `httpx` re-exports all its public names (`import *`)._" in card


def test_nothing_public_found_only_for_a_module_with_nothing_in_it(repo, brain):
    (repo / "pkg" / "_empty").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "_empty" / "__init__.py").write_text("# nothing here\n" * 200)
    (brain.dir / "brain.yml").write_text("version: 1\ncards:\n  split_bytes: 1000\n  split_min_bytes: 100\n")
    assert subprocess.run([sys.executable, "-m", "brain", "map"], cwd=repo, capture_output=True,
                          timeout=120).returncode == 0
    card = (brain.dir / "modules" / "pkg" / "_empty.md").read_text()
    assert "Nothing public found" in card


def _listed(text: str) -> int:
    items = re.findall(r"`[^`]+`", text)
    more = re.search(r" and (\d+) more$", text)
    return len(items) + (int(more.group(1)) if more else 0)


def test_counts_in_dependency_lines_match_what_they_list(httpx_cards):
    lines = [line for card in httpx_cards.values() for line in card.splitlines()
             if re.match(r"^- `[^`]+` \(\d+ files?:", line)]
    assert lines
    for line in lines:
        match = re.match(r"^- `[^`]+` \((\d+) files?: (.*?); imports (.*)\)$", line)
        assert match, line
        assert int(match.group(1)) == _listed(match.group(2)), line
    assert "- `httpx/_transports` (2 files: `__init__.py`, `_client.py`; imports " in httpx_cards["httpx"]
