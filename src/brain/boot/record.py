"""The audit record of each boot: what went in, what was left out, token counts.

Appended as one JSON line to runtime/boots.jsonl. Timestamps live here, in the
record for humans, never in the boot text an agent reads.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..appendonly import append_line
from ..memory.files import content_hash
from .parts import BootRequest, BootResult

__all__ = ["record_boot", "read_boot_records"]

MAX_RECORD_BYTES = 64 * 1024 * 1024


def record_boot(runtime: Path, request: BootRequest, result: BootResult, redact=None) -> None:
    """Append the record of one boot; every field passes through ``redact`` (the brain's redactor; the
    built-in one when None): a module or session a caller made up is text like any other."""
    from ..memory.private import ensure_private_dir, open_private

    ensure_private_dir(runtime)
    path = runtime / "boots.jsonl"
    if redact is None:
        from ..security.redact import Redactor

        redact = Redactor()
    from ..security.redact import redact_fields

    line = json.dumps(redact_fields({
        "at": time.time(),
        "session": request.session,
        "role": request.role,
        "module": request.module,
        "task_sha256": content_hash(request.task.encode("utf-8")) if request.task else None,
        "budget": result.budget,
        "tokens": result.tokens,
        "sections": result.sections,
        "omitted": [{"source": o.source, "tokens": o.tokens, "reason": o.reason} for o in result.omitted],
    }, redact), sort_keys=True) + "\n"
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            os.replace(path, path.with_suffix(".jsonl.1"))
    except FileNotFoundError:
        pass
    # one whole line with O_APPEND under the file's lock, or none (IncompleteWrite): never a torn record
    append_line(path, line.encode("utf-8"))  # created 0600 (memory.private)


def read_boot_records(runtime: Path, limit: int = 20) -> list[dict]:
    path = runtime / "boots.jsonl"
    if not path.exists():
        return []
    records = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines()[-limit:]:
        try:
            records.append(json.loads(raw))
        except json.JSONDecodeError:
            continue
    return records
