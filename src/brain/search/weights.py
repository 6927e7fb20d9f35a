"""The ranking's weights as data: one small JSON file shipped in the package, loaded once, lazily.

Every weight, factor and threshold of the file ranking (``ranking``) and the function
ranking (``rank_functions``) lives in ``weights.json`` beside this module, each entry
``{"value": x, "why": "..."}`` so a reader sees what it is for and a fitter can replace it:

* ``files.features``: the weight of each kind of evidence (a feature's value is what
  ``ranking.gather`` measured at unit weight); the score is their weighted sum;
* ``files.shares``: the share of a best file's score lent to its neighbours;
* ``files.factors``: demotions, applied in the file's order, the first that matches
  (a file has the flag of that name; unless ``named_too``, a file the text names is spared);
* ``files.params``: thresholds and counts of the evidence gathering and lending;
* ``functions.weights`` / ``functions.params``: the same for the function ranking.

Adding a kind of evidence is one entry here and one module that measures it. The file is
read on first use only, so a boot without a task never pays for it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..errors import InvalidInput

__all__ = ["Weights", "shipped_weights", "load_weights", "WEIGHTS_FILE", "FILE_SECTIONS", "FUNCTION_SECTIONS"]

WEIGHTS_FILE = Path(__file__).with_name("weights.json")
FILE_SECTIONS = ("features", "shares", "factors", "params")
FUNCTION_SECTIONS = ("weights", "params")
_ENTRY_KEYS = {"value", "why", "named_too"}


def _check_value(where: str, value) -> None:
    if isinstance(value, bool) or isinstance(value, (int, float)):
        if not isinstance(value, bool) and not value == value:  # NaN
            raise InvalidInput(f"weight {where} is not a number")
        return
    if isinstance(value, dict) and value and all(isinstance(k, str) and isinstance(v, (int, float))
                                                 and not isinstance(v, bool) for k, v in value.items()):
        return
    raise InvalidInput(f"weight {where} must be a number, true/false or an object of numbers",
                       hint="see the module docstring of brain.search.weights")


def _validate(data) -> None:
    """A clear error for a weights document of the wrong shape, before anything uses it."""
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise InvalidInput("a weights file is a JSON object with \"schema\": 1")
    for group, sections in (("files", FILE_SECTIONS), ("functions", FUNCTION_SECTIONS)):
        body = data.get(group)
        if not isinstance(body, dict) or set(body) != set(sections):
            raise InvalidInput(f"weights `{group}` must hold exactly the sections {', '.join(sections)}")
        seen: set[str] = set()
        for section in sections:
            entries = body[section]
            if not isinstance(entries, dict):
                raise InvalidInput(f"weights `{group}.{section}` must be an object")
            for name, entry in entries.items():
                where = f"`{group}.{section}.{name}`"
                if name in seen:
                    raise InvalidInput(f"weight {where} is named twice in `{group}`")
                seen.add(name)
                if not isinstance(entry, dict) or not {"value", "why"} <= set(entry) or set(entry) - _ENTRY_KEYS:
                    raise InvalidInput(f"weight {where} must be an object with `value` and `why`")
                if not isinstance(entry["why"], str) or not entry["why"].strip():
                    raise InvalidInput(f"weight {where} needs a one-line `why`")
                _check_value(where, entry["value"])
                if "named_too" in entry and (section != "factors" or not isinstance(entry["named_too"], bool)):
                    raise InvalidInput(f"weight {where}: `named_too` is a true/false of a factor")


class Weights:
    """One set of ranking weights (the shipped ones, or a fitter's), read-only by convention.

    ``features``, ``shares``, ``factors`` and ``params`` map names to values for the file
    ranking (``factors`` keep their order), ``functions`` the function ranking's weights and
    params together; ``replace`` gives a copy with some values changed.
    """

    def __init__(self, data: dict) -> None:
        _validate(data)
        self._data = data
        files = data["files"]
        self.features: dict[str, float] = {k: e["value"] for k, e in files["features"].items()}
        self.shares: dict[str, float] = {k: e["value"] for k, e in files["shares"].items()}
        self.factors: dict[str, float] = {k: e["value"] for k, e in files["factors"].items()}
        self.named_too: frozenset[str] = frozenset(k for k, e in files["factors"].items() if e.get("named_too"))
        self.params: dict = {k: e["value"] for k, e in files["params"].items()}
        funcs = data["functions"]
        self.functions: dict = {k: e["value"] for s in FUNCTION_SECTIONS for k, e in funcs[s].items()}

    def __getitem__(self, name: str):
        """A file-ranking value by name, whichever section holds it."""
        for section in (self.features, self.shares, self.factors, self.params):
            if name in section:
                return section[name]
        raise KeyError(name)

    def names(self, group: str = "files") -> list[str]:
        """Every entry name of ``files`` or ``functions``, in the file's order."""
        sections = FILE_SECTIONS if group == "files" else FUNCTION_SECTIONS
        return [name for s in sections for name in self._data[group][s]]

    def replace(self, values: dict | None = None, *, functions: dict | None = None) -> "Weights":
        """A copy with the named values changed (``{"path": 9.0, "test": 0.01}``; ``functions`` for the
        function ranking's); an unknown name is an error, not a silent no-op."""
        import copy  # here: a task boot never copies the weights

        data = copy.deepcopy(self._data)
        for group, changes in (("files", values), ("functions", functions)):
            sections = FILE_SECTIONS if group == "files" else FUNCTION_SECTIONS
            for name, value in (changes or {}).items():
                owner = next((s for s in sections if name in data[group][s]), None)
                if owner is None:
                    raise InvalidInput(f"no ranking weight `{name}` in `{group}`", field=name)
                data[group][owner][name]["value"] = value
        return Weights(data)

    def to_json(self) -> dict:
        import copy

        return copy.deepcopy(self._data)

    @classmethod
    def from_json(cls, data: dict) -> "Weights":
        import copy

        return cls(copy.deepcopy(data))


def load_weights(path) -> Weights:
    """A weights file (the shipped one's shape) read and checked."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read the weights file: {exc}") from None
    return Weights(data)


@lru_cache(maxsize=1)
def shipped_weights() -> Weights:
    """The weights the package ships, read once per process on first use."""
    return load_weights(WEIGHTS_FILE)
