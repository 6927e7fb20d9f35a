"""Secret redaction: common secret shapes are replaced before text touches disk.

Why here and not at each caller: memory files, conversation logs, commit messages and
coordination rows are versioned, synced between machines and read by humans and
agents; a key pasted into a note, a chat or a signal must never reach them. Each store
calls ``Redactor.redact`` once, on its own write path. It is pure and idempotent (the
placeholder ``[REDACTED:kind]`` matches no rule) and reports *what* it replaced (kind
and count, never the secret).

Linear time on any input, by construction (Python's ``re`` backtracks, so a pattern
that can start at many places and scan far before failing is quadratic, and nested
quantifiers are exponential; a 64 KB text once took 40 s). Every built-in rule obeys:

- it starts on a literal (``sk-``, ``eyJ``, ``://``, a key word such as ``password``);
- every unbounded repetition is possessive (``*+``, ``++``, ``{n,}+``: never given
  back) and, where something after it can still fail, the rule may only start where
  a run of its characters starts (a look-behind), so no run is scanned twice;
- a PEM block's ``-----END`` is looked for by hand, once per region of the text
  (``_pem``), instead of a lazy ``[\\s\\S]*?`` retried from every ``-----BEGIN``.

``bench/bench_redact.py`` measures the time per KB from 1 KB to 1 MB on adversarial and
normal text; ``tests/test_security_redact.py`` bounds it against normal text.

Assignments (``assigned_secret``): a key whose name ends in a secret word
(``password``, ``passwd``, ``passphrase``, ``pwd``, ``secret``, ``token``, ``api_key``,
``access_key``, ``secret_key``, ``private_key``; any case, any prefix joined by ``_ . -``,
so ``AWS_SECRET_ACCESS_KEY``, ``db.password``, ``GITHUB_TOKEN`` but not ``TOKEN_LIMIT``)
followed by ``=`` or ``:``. A quoted value of 8+ characters is always a secret. An
unquoted value is one when it has at least ``UNQUOTED_MIN`` characters and does not
read as code or a reference: no ``()[]{}<>``, not starting with ``$ % * & ! @ | #``,
not a number, a dotted name (``settings.TOKEN``), a snake_case name (``next_token``), a
literal (``None``, ``true``…), a path (``/``, ``~/``, ``./``), a run of one character
(``******``) or a label (ending in ``:``). Written tight (``KEY=value``: env files, shell,
URLs, flags) any such value is a secret; written loose (``key = value``, ``key: value``:
code, YAML, prose) it must also hold a digit or a symbol and no inner ``=``, so
``password = getpass()``, ``secret = compute``, ``Password: see the vault`` or
``token: LIMIT=10`` stay as they are.

A pattern may name a group ``secret``: only that group is replaced (the user name of
``scheme://user:pass@host`` or the key of ``password = "..."`` stay readable).
Extra patterns come from the ``secrets.patterns`` setting (kind ``custom``): the brain
owner's regular expressions (a versioned brain.yml, so possibly a cloned repository's). They
are linear by construction, checked when the settings are read (``pattern_steps``): every
repeat must be bounded (no ``*``, ``+``, ``{n,}``, possessive or not: ``.*x`` or ``(?:ab)++c``
rescan the rest of the text from every start, quadratic), no back-reference, and the work of one
match attempt -- the longest match times the backtracking choices (the count of each greedy or
lazy repeat, each branch) -- is at most ``PATTERN_STEPS_MAX``. A possessive or atomic repeat
gives no choice back, so ``[A-Za-z0-9]{20,64}+`` costs only its width. ``re`` tries every start
position once, so a text of n characters costs at most n × ``PATTERN_STEPS_MAX`` steps.

``mask_dsn`` is the display side: a connection URL shown by ``brain settings``,
``brain doctor`` or an error message keeps its user and host, never its password.
"""

from __future__ import annotations

import re

from ..errors import InvalidInput, SettingsError

__all__ = ["REDACTED", "UNQUOTED_MIN", "PATTERN_STEPS_MAX", "Redaction", "Redactor", "redactor_from_settings",
           "mask_dsn", "pattern_steps", "redact_fields", "refuse_secret_name"]

REDACTED = "[REDACTED:{kind}]"
UNQUOTED_MIN = 6  # characters of an unquoted assigned value below which it is not taken for a secret

# a secret word ending a key name, any case; not preceded by a letter or digit (``MYTOKEN`` is not a key
# ending in ``TOKEN``). One character class first, the checks after it: ``re`` then skips every
# character that cannot start such a word instead of trying each alternative at every position.
_KEY = (r"[PpSsTtAa](?<![A-Za-z0-9].)"
        r"(?:(?<=[Pp])(?i:ass(?:word|wd|phrase)|wd|rivate[_-]?key)"
        r"|(?<=[Ss])(?i:ecret(?:[_-]?key)?)"
        r"|(?<=[Tt])(?i:oken)"
        r"|(?<=[Aa])(?i:(?:pi|ccess)[_-]?key))")
_SEPARATOR = r"[\"']?(?P<lead>[ \t]{0,8}+)(?P<sep>[:=])(?![=>~:])(?P<trail>[ \t]{0,8}+)"

# (kind, regex). Each starts with its literal and checks what precedes it with a fixed-width
# look-behind placed after the literal (``(?<!\w...)`` reads "the literal starts a word"): a
# pattern that starts with a literal lets ``re`` jump between occurrences of it instead of
# trying every position, which is what keeps a pass over clean text at well under 1 us/KB.
_RULES: tuple[tuple[str, str], ...] = (
    ("jwt", r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"),
    ("api_key", r"sk-(?<!\wsk-)[A-Za-z0-9_-]{16,}+"),
    ("api_key", r"k_(?<=[rs]k_)(?<!\w[rs]k_)(?:live|test)_[A-Za-z0-9]{16,}+"),
    ("api_key", r"AIza(?<!\wAIza)[0-9A-Za-z_-]{35}"),
    ("aws_access_key", r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)(?<!\wA[A-Z]{3})[A-Z0-9]{16}\b"),
    ("github_token", r"g(?:h[pousr]_(?<!\wgh[pousr]_)[A-Za-z0-9]{36,}+|ithub_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{22,}+)"),
    ("slack_token", r"xox[abposre]-(?<!\wxox[abposre]-)[A-Za-z0-9-]{10,}+"),
    ("brain_token", r"brn_(?<!\wbrn_)[A-Za-z0-9_-]{20,}+"),
    ("url_password", r"://(?<=[A-Za-z0-9+.-]://)[^\s:/@]++:(?P<secret>[^\s@/]++)@"),
    # quoted (8+ characters, always a secret) or unquoted (judged by ``_assigned_span``)
    ("assigned_secret", _KEY + _SEPARATOR + r"(?:[\"'](?P<quoted>[^\"'\s]{8,}+)[\"']|(?P<value>[^\s\"'`]++))"),
)
_ASSIGNED = len(_RULES) - 1  # index of the rule whose matches ``_assigned_span`` judges

_PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----"
# an unterminated block keeps losing lines while they read as base64 (16+ characters)
_PEM_BODY = r"(?:[ \t]*+\r?\n[ \t]*+[A-Za-z0-9+/=]{16,}+)*+"

_CODE_CHARS = frozenset("()[]{}<>")
_REFERENCE_STARTS = frozenset("$%*&!@|#")
_PATH_STARTS = ("/", "~/", "./", "../")  # `PWD=/home/me`, `SSH_PRIVATE_KEY=~/.ssh/id_rsa`: a path, not the secret
_LITERALS = frozenset({"none", "null", "nil", "true", "false", "yes", "no", "undefined", "required", "optional",
                       "string", "bytes", "secret", "password", "redacted", "changeme"})
_NOT_SECRET_RX = (r"[+-]?[0-9]++(?:\.[0-9]++)?+"                        # a number
                  r"|[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)++"  # a dotted name
                  r"|[a-z]++(?:_[a-z]++)++[0-9]{0,2}")                   # a snake_case name (``next_token``)


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


class _Compiled:
    """The built-in rules, compiled once per process on first use (``import brain`` compiles nothing)."""

    def __init__(self) -> None:
        from ..lazyre import compile  # re.compile's patterns, from their kept programs (lazyre)

        self.rules = [(kind, compile(rx)) for kind, rx in _RULES]
        self.pem_begin = compile(_PEM_BEGIN)
        self.pem_end = compile(_PEM_END)
        self.pem_body = compile(_PEM_BODY)
        self.not_secret = compile(_NOT_SECRET_RX)


_COMPILED: _Compiled | None = None


def _compiled() -> _Compiled:
    global _COMPILED
    if _COMPILED is None:
        _COMPILED = _Compiled()
    return _COMPILED


_CLEAN_TEXT_MAX = 200   # characters of a text kept as known clean
_CLEAN_KEPT_MAX = 4096  # texts kept as known clean


class Redactor:
    """Replaces secret shapes in text; built once per brain, patterns compiled on first use."""

    def __init__(self, extra: list[str] | tuple[str, ...] = (), *, enabled: bool = True) -> None:
        self.enabled = enabled
        # short texts found clean, kept so the next one is a lookup: a team server redacts the same audit
        # keys, session ids and items on every claim. Only clean texts are kept: never a secret
        self._clean: dict[str, None] = {}
        self._extra = tuple(extra)
        self._extra_compiled: list[tuple[str, re.Pattern]] = []
        for source in self._extra:
            try:
                compiled = re.compile(source)
            except re.error as exc:
                raise SettingsError("brain.yml", "secrets.patterns", "valid regular expressions",
                                    f"{source!r} ({exc})") from None
            steps = pattern_steps(source)
            if steps > PATTERN_STEPS_MAX:
                raise SettingsError("brain.yml", "secrets.patterns",
                                    f"expressions with every repeat bounded and at most {PATTERN_STEPS_MAX} steps "
                                    "per position (linear time)",
                                    f"{source!r} ({'an unbounded repeat' if steps == _UNBOUNDED else f'{steps} steps'})"
                                    "; bound each repeat, e.g. [0-9A-Za-z]{20,64}, and make long ones possessive "
                                    "({20,64}+)")
            self._extra_compiled.append(("custom", compiled))

    def redact(self, text: str) -> Redaction:
        if not self.enabled or not text or not isinstance(text, str) or text in self._clean:
            return Redaction(text)
        original = text
        found: dict[str, int] = {}
        compiled = _compiled()
        text = _pem(compiled, text, found)
        for index, (kind, pattern) in enumerate(compiled.rules):
            text = _apply(pattern, kind, text, found, _assigned_span if index == _ASSIGNED else None)
        for kind, pattern in self._extra_compiled:
            text = _apply(pattern, kind, text, found)
        if not found and text == original and len(text) <= _CLEAN_TEXT_MAX:
            if len(self._clean) >= _CLEAN_KEPT_MAX:
                self._clean.clear()  # bounded memory; refilled by the texts still in use
            self._clean[text] = None
        return Redaction(text, found)

    def __call__(self, text: str) -> str:
        return self.redact(text).text


def refuse_secret_name(redact, value, field: str) -> None:
    """Refuse an identifier holding a secret shape (InvalidInput on ``field``, the value never echoed).

    A name outlives any redaction of text: it becomes a file or folder name (a note, a thread), a
    session id, a live-state key, a token's session prefix, and is copied into every record that
    points to it; redacting it would silently make another name. ``redact`` is the store's redactor
    (the built-in one when None)."""
    if not isinstance(value, str) or not value:
        return
    if redact is None:
        redact = Redactor()
    if redact(value) != value:
        raise InvalidInput(f"the {field} holds a secret shape (an API key, a token, a password); choose a name "
                           "without it", field=field)


def redact_fields(value, redact):
    """``value`` (a JSON-able record: dicts, lists, strings...) with every string, keys included, passed
    through ``redact``. For the stores that keep records rather than text (boot and report lines, the
    coordination audit, hook states): each field is redacted before it is encoded, so a secret in any
    field, present or added later, never reaches the line, and the JSON stays valid (redacting the
    encoded line could cut through an escaped quote)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_fields(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_fields(v, redact) for v in value]
    return value


def _pem(compiled: _Compiled, text: str, found: dict[str, int]) -> str:
    """Replace every PEM private-key block: to its ``-----END`` line, else its base64 lines.

    Each ``-----END`` search starts after the previous block, and once none is left no
    later ``-----BEGIN`` searches again: every character is scanned a bounded number of times."""
    placeholder = REDACTED.format(kind="private_key")
    out: list[str] = []
    pos = 0
    count = 0
    end_searched_to: int | None = None  # set once a search found no -----END after this point
    while True:
        begin = compiled.pem_begin.search(text, pos)
        if begin is None:
            break
        stop = None
        if end_searched_to is None:
            end = compiled.pem_end.search(text, begin.end())
            if end is not None:
                stop = end.end()
            else:
                end_searched_to = begin.end()
        if stop is None:
            stop = compiled.pem_body.match(text, begin.end()).end()
        out.append(text[pos:begin.start()])
        out.append(placeholder)
        count += 1
        pos = stop
    if not count:
        return text
    out.append(text[pos:])
    found["private_key"] = found.get("private_key", 0) + count
    return "".join(out)


def _assigned_span(match: re.Match) -> tuple[int, int] | None:
    """The span of an assigned value that reads as a secret, or None (see the module docstring)."""
    if match.group("quoted") is not None:
        return match.span("quoted")
    start, end = match.span("value")
    value = match.group("value")
    stripped = value.rstrip(",;")
    end -= len(value) - len(stripped)
    value = stripped
    if len(value) < UNQUOTED_MIN or value[0] in _REFERENCE_STARTS or not _CODE_CHARS.isdisjoint(value):
        return None
    if value.endswith(":") or value.startswith(_PATH_STARTS) or value.lower() in _LITERALS \
            or value == value[0] * len(value):  # `key: other_key:` is a label, not a value
        return None
    if _compiled().not_secret.fullmatch(value):
        return None
    tight = match.group("sep") == "=" and not match.group("lead") and not match.group("trail")
    if not tight and (value.isalpha() or "=" in value.rstrip("=")):
        # `key = word` / `key: word` reads as code or prose, `key: X=1` as another assignment;
        # only a digit or a symbol (base64 padding included) makes such a value a secret
        return None
    return start, end


def _nested_repeat(source: str) -> bool:
    """Whether a configured pattern repeats, without bound, something that itself repeats without bound.

    ``(a+)+`` or ``(?:x*)*`` take exponential time on a near miss: one such pattern in
    ``secrets.patterns`` would stall every write of a team server. Possessive repeats and
    atomic groups never backtrack and are allowed. (Reads the parse tree of ``re``'s own
    parser; where that private module is missing, nothing is checked.)"""
    try:
        from re import _constants as sre, _parser as parser
    except ImportError:  # pragma: no cover - a future Python without it
        return False
    backtracking = (sre.MAX_REPEAT, sre.MIN_REPEAT)

    def walk(items, inside: bool) -> bool:
        """``inside``: under an unbounded repeat that backtracks."""
        for op, arg in items:
            if op in backtracking:
                unbounded = arg[1] == sre.MAXREPEAT
                if (unbounded and inside) or walk(arg[2], inside or unbounded):
                    return True
            elif op == sre.POSSESSIVE_REPEAT and walk(arg[2], False):
                return True
            elif op == sre.ATOMIC_GROUP and walk(arg, False):
                return True
            elif op == sre.SUBPATTERN and walk(arg[3], inside):
                return True
            elif op == sre.BRANCH and any(walk(branch, inside) for branch in arg[1]):
                return True
            elif op in (sre.ASSERT, sre.ASSERT_NOT) and walk(arg[1], inside):
                return True
        return False

    return walk(parser.parse(source).data, False)


PATTERN_STEPS_MAX = 4096  # work of one match attempt of a configured pattern (see the module docstring)
_UNBOUNDED = 1 << 62


def pattern_steps(source: str) -> int:
    """An upper bound on the steps of one match attempt of ``source``: longest match × backtracking choices.

    ``_UNBOUNDED`` when the pattern has an unbounded repeat or a back-reference (a match attempt
    may then scan the rest of the text, and a search from every position is quadratic). Reads the
    parse tree of ``re``'s own parser; where that private module is missing every pattern is
    taken as unbounded (refused) rather than run unchecked."""
    try:
        from re import _constants as sre, _parser as parser
    except ImportError:  # pragma: no cover - a future Python without it
        return _UNBOUNDED
    cap = _UNBOUNDED
    one_char = {sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN, sre.CATEGORY, sre.RANGE}

    def walk(items, choose: bool) -> tuple[int, int]:
        """(longest match, backtracking choices) of a sequence; ``choose``: repeats here give back."""
        width, choices = 0, 1
        for op, arg in items:
            if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
                low, high, body = arg
                if high == sre.MAXREPEAT:
                    return cap, cap
                backtracks = choose and op != sre.POSSESSIVE_REPEAT
                body_width, body_choices = walk(body, backtracks)
                width += body_width * high
                if backtracks:
                    choices *= (high - low + 1) * body_choices ** min(high, 64)
            elif op == sre.SUBPATTERN:
                w, c = walk(arg[3], choose)
                width, choices = width + w, choices * c
            elif op == sre.ATOMIC_GROUP:
                width += walk(arg, False)[0]
            elif op == sre.BRANCH:
                parts = [walk(branch, choose) for branch in arg[1]]
                width += max(w for w, _ in parts)
                choices *= sum(c for _, c in parts) if choose else 1
            elif op in (sre.ASSERT, sre.ASSERT_NOT):
                w, c = walk(arg[1], choose)
                width, choices = width + w, choices * c
            elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS, sre.GROUPREF_IGNORE, sre.GROUPREF_LOC_IGNORE,
                        sre.GROUPREF_UNI_IGNORE):
                return cap, cap
            elif op in one_char:
                width += 1
            width, choices = min(width, cap), min(choices, cap)
        return width, choices

    width, choices = walk(parser.parse(source).data, True)
    return cap if cap in (width, choices) else min(max(width, 1) * choices, cap)


def _is_placeholder(value: str) -> bool:
    return value.startswith("[REDACTED:") and value.endswith("]") and "]" not in value[10:-1]


def _apply(pattern: re.Pattern, kind: str, text: str, found: dict[str, int], judge=None) -> str:
    placeholder = REDACTED.format(kind=kind)
    count = 0
    narrowed = "secret" in pattern.groupindex

    def replace(match: re.Match) -> str:
        nonlocal count
        whole = match.group(0)
        if judge is not None:
            span = judge(match)
        elif narrowed and match.group("secret") is not None:
            span = match.span("secret")
        else:
            span = match.span()
        if span is None or span[0] == span[1]:
            return whole
        base = match.start()
        start, end = span[0] - base, span[1] - base
        if _is_placeholder(whole[start:end]):
            return whole  # already redacted (by this rule or another): idempotent, counted once
        count += 1
        return whole[:start] + placeholder + whole[end:]

    out = pattern.sub(replace, text)
    if count:
        found[kind] = found.get(kind, 0) + count
    return out


_DSN_PASSWORD = None


def mask_dsn(value):
    """``value`` with the password of a connection URL or DSN shown as ``***`` (anything else unchanged).

    ``postgresql://app:pw@db/x`` -> ``postgresql://app:***@db/x``; ``…?password=pw`` and the
    key/value form ``host=db password=pw`` likewise. Non-text values come back as they are."""
    global _DSN_PASSWORD
    if not isinstance(value, str) or not value:
        return value
    scheme, sep, rest = value.partition("://")
    if sep:
        # the user info ends at the last "@" before the query: a password with an unencoded "/" or
        # "@" is masked whole (the connection would fail, the display must still not leak it)
        cut = len(rest)
        for mark in "?#":
            at = rest.find(mark)
            if at != -1:
                cut = min(cut, at)
        head, tail = rest[:cut], rest[cut:]
        if "@" in head:
            userinfo, host = head.rsplit("@", 1)
            user, colon, _ = userinfo.partition(":")
            head = f"{user}:***@{host}" if colon and "/" not in user else head
        value = f"{scheme}://{head}{tail}"
    if "password" in value.lower():
        if _DSN_PASSWORD is None:
            _DSN_PASSWORD = re.compile(r"(?i)(?<![A-Za-z0-9_])((?:ssl)?password[ \t]*+=[ \t]*+)"
                                       r"(?:'(?:[^'\\]|\\.)*+'|[^\s&;#]++)")
        value = _DSN_PASSWORD.sub(lambda m: m.group(1) + "***", value)
    return value


def redactor_from_settings(settings) -> Redactor:
    return Redactor(settings.get("secrets.patterns") or (), enabled=bool(settings.get("secrets.redact")))
