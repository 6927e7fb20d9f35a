"""The one place numbers from outside are bounded: ids, counts, pages, seconds, budgets.

Every integer or duration that comes from a caller (CLI argument, MCP argument, HTTP
query or form field, environment variable, settings file) is checked here before it
reaches SQLite, PostgreSQL or arithmetic: Python integers have no upper limit, the
stores' do (64 bits), and a page number of 10**22 must be a clear ``InvalidInput``
(exit code 2, HTTP 400, an MCP ``invalid_input``), never an ``OverflowError``.

The limits are deliberately generous; they only cut what no real use reaches.
"""

from __future__ import annotations

import argparse
import math

from .errors import InvalidInput

__all__ = ["MAX_ID", "MAX_COUNT", "MAX_PAGE", "MAX_SECONDS", "MAX_ASK_TIMEOUT", "MAX_SETTING_INT", "MAX_BUDGET",
           "MAX_TURN_BYTES", "bounded_int", "bounded_seconds", "cli_int", "cli_seconds", "query_int"]

MAX_ID = 2**63 - 1  # claim ids, fencing numbers, revisions: a signed 64-bit integer in SQLite and PostgreSQL
MAX_COUNT = 1_000_000  # limits, sizes, counts of rounds
MAX_PAGE = 1_000_000_000  # page numbers (negative: from the end)
MAX_SECONDS = 10 * 366 * 86400.0  # leases and TTLs: ten years
MAX_ASK_TIMEOUT = 86400.0  # the absolute ask timeout (BRAIN_ASK_TIMEOUT, coord.ask_timeout): one day
MAX_SETTING_INT = 2**53  # any integer setting: exact in a double, far below 64 bits
MAX_BUDGET = 10_000_000  # boot token budgets
MAX_TURN_BYTES = 1024 * 1024  # one log turn line, and a boot's task text (here: the CLI reads it without the log package)
_DIGITS = 40  # longer text is refused before it is parsed (int() of a huge string is quadratic)


def bounded_int(value, field: str, *, low: int, high: int) -> int:
    """``value`` (an int or its decimal text) as an int within [low, high]; InvalidInput otherwise."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) > _DIGITS or not text.lstrip("+-").isdigit() or not text.isascii():
            raise InvalidInput(f"{field} must be an integer from {low} to {high}, not {value[:50]!r}", field=field)
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = repr(value) if len(repr(value)) <= 50 else repr(value)[:47] + "..."
        raise InvalidInput(f"{field} must be an integer from {low} to {high}, not {shown}", field=field)
    return value


def bounded_seconds(value, field: str, *, high: float, low: float = 0.0, allow_zero: bool = False) -> float:
    """``value`` seconds (an int or float, not text) as a finite float in (low, high] ([low, high] with
    ``allow_zero``); InvalidInput otherwise."""
    number = value  # text is parsed by the callers that take text (cli_seconds); the library takes numbers
    if isinstance(number, bool) or not isinstance(number, (int, float)) or (isinstance(number, float) and (
            math.isnan(number) or math.isinf(number))):
        raise InvalidInput(f"{field} must be a number of seconds up to {high:g}, not {str(value)[:50]!r}", field=field)
    if isinstance(number, int) and abs(number) > 2**63:
        number = float("inf")
    ok = (low <= number <= high) if allow_zero else (low < number <= high)
    if not ok:
        raise InvalidInput(f"{field} must be {'from' if allow_zero else 'above'} {low:g} "
                           f"{'to' if allow_zero else 'and at most'} {high:g} seconds, not {str(value)[:50]}",
                           field=field)
    return float(number)


def cli_int(low: int, high: int, field: str = "value"):
    """An argparse ``type=``: a bounded int, refused by argparse (exit 2, one line) otherwise."""

    def parse(text: str) -> int:
        try:
            return bounded_int(text, field, low=low, high=high)
        except InvalidInput as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    parse.__name__ = "integer"
    return parse


def cli_seconds(high: float, field: str = "seconds", *, allow_zero: bool = False):
    """An argparse ``type=``: a bounded number of seconds."""

    def parse(text: str) -> float:
        try:
            number = float(text) if len(text) <= _DIGITS else float("inf")
        except ValueError:
            raise argparse.ArgumentTypeError(f"{field} must be a number of seconds, not {text[:50]!r}") from None
        try:
            return bounded_seconds(number, field, high=high, allow_zero=allow_zero)
        except InvalidInput as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    parse.__name__ = "seconds"
    return parse


def query_int(value, field: str, default: int, *, low: int, high: int) -> int:
    """An HTTP query or form integer: ``default`` when absent, InvalidInput (HTTP 400) when out of bounds."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    return bounded_int(value, field, low=low, high=high)
