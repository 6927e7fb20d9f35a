"""Secret redaction: common secret shapes are replaced before text touches disk.

Why here and not at each caller: memory files and conversation logs are versioned,
synced between machines and read by humans and agents; a key pasted into a note or
a chat must never reach them. ``Redactor.redact`` is pure and idempotent (the
placeholder ``[REDACTED:kind]`` matches no pattern), reports *what* it replaced
(kind and count, never the secret) and is cheap on text without secrets: one
combined pre-check decides whether any per-pattern pass is needed at all.

A pattern may name a group ``secret``: only that group is replaced (the user name of
``scheme://user:pass@host`` or the key of ``password = "..."`` stay readable).
Extra patterns come from the ``secrets.patterns`` setting (kind ``custom``).
"""

from __future__ import annotations

import re

from ..errors import SettingsError

__all__ = ["REDACTED", "BUILTIN_PATTERNS", "Redaction", "Redactor", "redactor_from_settings"]

REDACTED = "[REDACTED:{kind}]"

# (kind, regex); order matters only where shapes nest (a PEM block before anything inside it)
BUILTIN_PATTERNS: tuple[tuple[str, str], ...] = (
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                    r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=]{16,})*)"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("api_key", r"\bsk-(?:ant-|proj-|live-|test-|or-)?[A-Za-z0-9_-]{16,}"),
    ("api_key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    ("brain_token", r"\bbrn_[A-Za-z0-9_-]{20,}"),
    ("url_password", r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@"),
    ("assigned_secret", r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|"
                        r"client[_-]?secret|aws_secret_access_key)\s*[:=]\s*[\"'](?P<secret>[^\"'\s]{8,})[\"']"),
)

# a cheap pre-check: text holding none of these fragments cannot match a built-in pattern
_HINTS_RX = (r"PRIVATE KEY|eyJ|sk-|[rs]k_(?:live|test)_|AIza|A[KSGIRNP][A-Z]A|gh[pousr]_|github_pat_|xox|brn_|"
             r"://[^\s/@]*:[^\s@/]*@|(?i:pass|pwd|secret|key|token)")


class Redaction:
    """The redacted text and what was taken out: ``{kind: count}`` (never the secrets).

    A plain class, not a dataclass: this module is imported by every command that opens a brain."""

    __slots__ = ("text", "found")

    def __init__(self, text: str, found: dict[str, int] | None = None) -> None:
        self.text = text
        self.found = found or {}

    def __repr__(self) -> str:
        return f"Redaction(found={self.found!r})"

    @property
    def changed(self) -> bool:
        return bool(self.found)

    def to_list(self) -> list[dict]:
        return [{"kind": k, "count": n} for k, n in sorted(self.found.items())]


class Redactor:
    """Replaces secret shapes in text; built once per brain, patterns compiled on first use."""

    def __init__(self, extra: list[str] | tuple[str, ...] = (), *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._extra = tuple(extra)
        self._compiled: list[tuple[str, re.Pattern]] | None = None
        self._hints: re.Pattern | None = None
        self._extra_compiled: list[tuple[str, re.Pattern]] = []
        for source in self._extra:
            try:
                self._extra_compiled.append(("custom", re.compile(source)))
            except re.error as exc:
                raise SettingsError("brain.yml", "secrets.patterns", "valid regular expressions",
                                    f"{source!r} ({exc})") from None

    def _patterns(self) -> list[tuple[str, re.Pattern]]:
        if self._compiled is None:
            self._hints = re.compile(_HINTS_RX)
            self._compiled = [(kind, re.compile(rx)) for kind, rx in BUILTIN_PATTERNS]
        return self._compiled

    def redact(self, text: str) -> Redaction:
        if not self.enabled or not text:
            return Redaction(text)
        found: dict[str, int] = {}
        builtin = self._patterns()
        passes = (builtin if self._hints.search(text) else []) + self._extra_compiled
        for kind, pattern in passes:
            text = _apply(pattern, kind, text, found)
        return Redaction(text, found)

    def __call__(self, text: str) -> str:
        return self.redact(text).text


def _apply(pattern: re.Pattern, kind: str, text: str, found: dict[str, int]) -> str:
    placeholder = REDACTED.format(kind=kind)
    count = 0

    def replace(match: re.Match) -> str:
        nonlocal count
        if "secret" in pattern.groupindex and match.group("secret") is not None:
            start, end = match.span("secret")
            inner = match.group(0)
            base = match.start()
            if inner[start - base:end - base] == placeholder:
                return inner
            count += 1
            return inner[:start - base] + placeholder + inner[end - base:]
        if match.group(0) == placeholder or not match.group(0):
            return match.group(0)
        count += 1
        return placeholder

    out = pattern.sub(replace, text)
    if count:
        found[kind] = found.get(kind, 0) + count
    return out


def redactor_from_settings(settings) -> Redactor:
    return Redactor(settings.get("secrets.patterns") or (), enabled=bool(settings.get("secrets.redact")))
