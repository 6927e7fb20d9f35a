"""Declared contracts: `.brain/contracts/<module>.yml`, their source of truth.

    summary: one line on what the module promises (optional)
    exposes: [create_user, User]          # public names the module promises
    routes: ["GET /users", "POST /users"] # METHOD path

The card shows the contract and how the code diverges from it, both ways. Nothing here
ever edits code or contract: divergence is reported, never corrected.
"""

from __future__ import annotations

from ..records import field, record


__all__ = ["Contract", "parse_contract", "divergence", "contract_rel_path", "normalize_route"]


@record
class Contract:
    exposes: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)
    summary: str = ""
    error: str | None = None   # the file could not be read: shown in the card
    has_exposes: bool = False  # the key is present (an empty list promises nothing public)
    has_routes: bool = False


def contract_rel_path(module: str) -> str:
    """Path of a module's contract relative to `.brain/`."""
    return "contracts/_root.yml" if module in (".", "") else f"contracts/{module}.yml"


def normalize_route(text: str) -> str:
    """``get   /users/`` -> ``GET /users/``; a bare path means any method."""
    parts = text.split()
    if len(parts) == 1:
        return f"ANY {parts[0]}"
    return f"{parts[0].upper()} {' '.join(parts[1:])}"


def parse_contract(data: bytes) -> Contract:
    """Parse a contract file; a broken one becomes a Contract carrying the error."""
    from ..errors import YamlRefused
    from ..yamlsafe import load_yaml

    try:
        raw = load_yaml(data.decode("utf-8"), "contract")
    except UnicodeDecodeError as exc:
        return Contract(error=f"not valid YAML/UTF-8 ({type(exc).__name__})")
    except YamlRefused as exc:
        return Contract(error="not valid YAML" if exc.problem == "syntax" else f"refused YAML ({exc.problem})")
    if raw is None:
        return Contract()
    if not isinstance(raw, dict):
        return Contract(error="expected a mapping with keys exposes, routes, summary")
    unknown = sorted(set(map(str, raw)) - {"exposes", "routes", "summary"})
    if unknown:
        return Contract(error=f"unknown keys: {', '.join(unknown)} (expected exposes, routes, summary)")
    exposes = raw.get("exposes") or []
    routes = raw.get("routes") or []
    if not isinstance(exposes, list) or not all(isinstance(x, str) for x in exposes):
        return Contract(error="`exposes` must be a list of names")
    if not isinstance(routes, list) or not all(isinstance(x, str) and x.strip() for x in routes):
        return Contract(error="`routes` must be a list of \"METHOD /path\" strings")
    summary = raw.get("summary") or ""
    if not isinstance(summary, str):
        return Contract(error="`summary` must be text")
    return Contract(sorted(dict.fromkeys(x.strip() for x in exposes if x.strip())),
                    sorted(dict.fromkeys(normalize_route(r) for r in routes)), " ".join(summary.split()),
                    has_exposes="exposes" in raw, has_routes="routes" in raw)


def _route_matches(declared: str, present: set[str]) -> bool:
    method, _, path = declared.partition(" ")
    if declared in present:
        return True
    if method == "ANY":
        return any(p.partition(" ")[2] == path for p in present)
    return f"ANY {path}" in present


def divergence(contract: Contract, names: set[str], routes: set[str]) -> dict[str, list[str]]:
    """Both directions: declared-but-missing and present-but-undeclared, for names and routes.

    Each kind is compared only when the contract has its key (`exposes:` / `routes:`): a
    contract about routes alone says nothing about names, and the reverse.
    """
    declared_names = set(contract.exposes)
    routes = {normalize_route(r) for r in routes}
    out = {
        "missing_names": sorted(declared_names - names),
        "undeclared_names": sorted(names - declared_names) if (contract.has_exposes or contract.exposes) else [],
        "missing_routes": sorted(r for r in contract.routes if not _route_matches(r, routes)),
        "undeclared_routes": [],
    }
    if contract.has_routes or contract.routes:
        declared = set(contract.routes)
        out["undeclared_routes"] = sorted(r for r in routes if not _route_matches(r, declared))
    return out
