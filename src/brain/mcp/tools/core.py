"""The core MCP tools: boot, read, write, focus, workflows, decisions, state.

Each tool is one call to the library (``brain.workspace.Brain``) plus formatting.
Descriptions are written for the agent: what the tool returns and when to use it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..access import LAYER_READ, LAYER_WRITE, MEMORY_PATH, SESSION, ActsAs
from .. import outputs
from ..registry import ToolOutput, ToolRegistry

__all__ = ["register"]

Layer = Literal["project", "kernel", "instance", "personal"]


def _hash_note(path: str, digest: str) -> str:
    return (f"[{path} sha256 {digest[:16]}: to change this file, call brain_write with "
            f"expected_hash=\"{digest[:16]}\" so a newer version is never overwritten]")


def _boot_session(brain, session: str | None) -> str | None:
    """The session brain_boot boots: the one given, else this connection's own (started at its handshake,
    or by this call when the handshake could not start it).

    Without a reachable coordination backend the boot still answers, without a session: the
    memory is files, and a boot must never fail for want of the database."""
    from ...team.identity import current_principal
    from .coord import connection_session

    if session or current_principal() is not None:
        return connection_session(brain, session)  # the team server checks a token's sessions here
    try:
        return connection_session(brain)
    except Exception as exc:  # noqa: BLE001 - coordination down: boot without a session
        import logging

        logging.getLogger("brain.mcp").warning("brain_boot without a session: %s", exc)
        return None


def register(tools: ToolRegistry) -> None:
    @tools.tool(title="Boot context", read_only=True, heavy=True, output=outputs.Boot)
    def brain_boot(
        brain,
        task: Annotated[str | None, Field(description="What you are about to do, in your own words or pasted "
                                                      "from the issue: it selects the module cards, decisions "
                                                      "and search hits that come in.")] = None,
        module: Annotated[str | None, Field(description="The module the task is about, when you know it.")] = None,
        role: Annotated[str | None, Field(description="Your role (e.g. backend, reviewer): selects agent profiles "
                                                      "and feature flags. Default: your session's role.")] = None,
        session: Annotated[str | None, Field(description="Your session id (sess-YYYYMMDD-HHMM-role@machine): "
                                                         "brings in your checkpoint and thread handoff. Default: "
                                                         "this connection's own session, so a call without "
                                                         "arguments after a compaction sees your checkpoint."),
                           ActsAs(SESSION)] = None,
        budget: Annotated[int | None, Field(description="Token budget of the message (default: the setting "
                                                         "boot.budget, 8000).")] = None,
    ) -> ToolOutput:
        """Get the boot context of this project: now.md first (what is happening now), then your checkpoint,
        focus, the relevant module cards, decisions and agent profiles, under a hard token budget.
        Call it once at the start of a session, after a context compaction, or when you switch to a different
        task. Parts that did not fit are listed at the end with the tool or path to fetch them.
        Structured content: {text, tokens, budget, sections, files, omitted, functions}."""
        session = _boot_session(brain, session)
        result = brain.boot(task, module=module, role=role, session=session, budget=budget)
        return ToolOutput(result.text, result.to_dict())

    @tools.tool(title="Read a memory file", read_only=True, inline=True, output=outputs.MemoryFile)
    def brain_read(
        brain,
        path: Annotated[str, Field(description="Path relative to .brain/, e.g. now.md, focus.md, notes/setup.md, "
                                               "modules/auth.md, decisions/0003-use-postgres.md."),
                        ActsAs(MEMORY_PATH)],
        layer: Annotated[Layer | None, Field(description="Read from a user-level layer instead of the project "
                                                         "(kernel: shared agent profiles; personal: your own "
                                                         "notes)."), ActsAs(LAYER_READ)] = None,
    ) -> ToolOutput:
        """Read one file of the project's memory (.brain/): a note, a module card, a decision record, a workflow.
        Use it to fetch a part the boot named but left out, or to get a file's current hash before you change it
        with brain_write. Returns the text; the last block gives the sha256 to pass as expected_hash."""
        doc = brain.read(path, layer=None if layer == "project" else layer)
        if layer in (None, "project"):
            brain.record_use("read", [doc.path])  # for `brain notes --stale`
        return ToolOutput(doc.text, {"path": doc.path, "hash": doc.hash, "text": doc.text},
                          _hash_note(doc.path, doc.hash))

    @tools.tool(title="Write a memory file", destructive=True, idempotent=True, output=outputs.Written)
    def brain_write(
        brain,
        path: Annotated[str, Field(description="Path relative to .brain/: now.md (what is happening now, "
                                               "overwritten at the end of each session), focus.md, notes/NAME.md, "
                                               "workflows/NAME.md. No '..', no absolute paths."),
                        ActsAs(MEMORY_PATH)],
        text: Annotated[str, Field(description="The whole new content of the file (markdown, UTF-8).")],
        expected_hash: Annotated[str | None, Field(description="The sha256 (or its first 8+ hex digits) brain_read "
                                                               "gave you: the write is refused if the file changed "
                                                               "since. \"\" means the file must not exist yet.")] = None,
        layer: Annotated[Layer | None, Field(description="Write to a user-level layer instead of the project (on "
                                                         "the team server: kernel only for the kernel-scribe role, "
                                                         "instance and personal only for a token allowed them)."),
                         ActsAs(LAYER_WRITE)] = None,
    ) -> ToolOutput:
        """Replace one memory file atomically (the whole file; readers never see half a write).
        Update now.md before you stop so the next session resumes where you are; record durable knowledge in
        notes/. Pass expected_hash from brain_read to avoid overwriting a change made by someone else meanwhile:
        on a conflict, read the file again, merge, and write with the new hash."""
        from ...team.identity import writer_role

        doc = brain.write(path, text, expected_hash=expected_hash, role=writer_role(brain),
                          layer=None if layer == "project" else layer)
        data = {"path": doc.path, "hash": doc.hash, "bytes": doc.size,
                "redacted": [{"kind": k, "count": n} for k, n in doc.redacted]}
        note = ("redacted " + ", ".join(f"{n} {k}" for k, n in doc.redacted) + ": secrets never reach memory"
                if doc.redacted else None)
        return ToolOutput(f"wrote {doc.path} ({doc.size} bytes, sha256 {doc.hash[:16]})", data, note)

    @tools.tool(title="List memory files", read_only=True, output=outputs.Notes)
    def brain_notes(
        brain,
        everything: Annotated[bool, Field(description="Also list the module cards and the local thread "
                                                      "handoffs.")] = False,
    ) -> ToolOutput:
        """List the project's memory files (now.md, focus.md, notes/, workflows/, decisions/, agents/, promoted
        handoffs/) with their titles and sizes, to find a note before you read, rename or delete it.
        Structured content: {notes: [{path, title, bytes}]}."""
        from ...team.identity import memory_visible

        notes = [n.to_dict() for n in brain.notes(everything=everything) if memory_visible(brain, n.path)]
        text = "\n".join(f"{n['path']} ({n['bytes']} bytes): {n['title']}" for n in notes)
        return ToolOutput(text or "no memory files", {"notes": notes})

    @tools.tool(title="Delete a memory file", destructive=True, output=outputs.Removed)
    def brain_delete(
        brain,
        path: Annotated[str, Field(description="Path relative to .brain/, e.g. notes/old-setup.md. now.md and "
                                               "focus.md cannot be deleted."), ActsAs(MEMORY_PATH)],
        expected_hash: Annotated[str | None, Field(description="The sha256 (or its first 8+ hex digits) brain_read "
                                                               "gave you: refused if the file changed since.")] = None,
        reason: Annotated[str | None, Field(description="Why it goes: recorded in the commit when the project "
                                                         "commits memory changes.")] = None,
    ) -> dict:
        """Delete one memory file that is wrong or obsolete (a note, a workflow). Pass expected_hash from brain_read
        so you never delete a version you did not see. Structured content: {removed, linked_from: [paths whose
        [[links]] pointed to it]}."""
        from ...team.identity import writer_role

        return brain.remove(path, expected_hash=expected_hash, role=writer_role(brain), reason=reason)

    @tools.tool(title="Rename a memory file", destructive=True, output=outputs.Moved)
    def brain_move(
        brain,
        path: Annotated[str, Field(description="The memory file to rename, relative to .brain/."),
                        ActsAs(MEMORY_PATH)],
        to: Annotated[str, Field(description="The new path relative to .brain/; it must not exist."),
                      ActsAs(MEMORY_PATH)],
        expected_hash: Annotated[str | None, Field(description="The sha256 (or 8+ hex digits) brain_read gave you: "
                                                               "refused if the file changed since.")] = None,
        reason: Annotated[str | None, Field(description="Why it moves: recorded in the commit when the project "
                                                         "commits memory changes.")] = None,
    ) -> dict:
        """Rename (move) one memory file, e.g. to give a note a clearer name or file it under another folder.
        The search index follows, and the [[links]] that named the old path are rewritten to name the new one.
        Structured content: {moved, to, hash, linked_from, links_rewritten, links_left: [{path, error, message}]
        for linking files that could not be rewritten (another role's territory, a concurrent change)}."""
        from ...team.identity import writer_role

        return brain.move(path, to, expected_hash=expected_hash, role=writer_role(brain), reason=reason)

    @tools.tool(title="Edit a memory file in place", destructive=True, output=outputs.Edited)
    def brain_edit(
        brain,
        path: Annotated[str, Field(description="Path relative to .brain/, e.g. now.md or notes/setup.md."),
                        ActsAs(MEMORY_PATH)],
        operation: Annotated[Literal["append", "prepend", "section", "replace"],
                             Field(description="append: add text as the last lines; prepend: as the first lines "
                                               "of the body (after front matter and a leading # Title); section: "
                                               "replace the body under `heading`; replace: replace the literal "
                                               "`text` with `new`.")],
        text: Annotated[str, Field(description="The lines to add, the section's new body, or (replace) the "
                                               "literal text to find.")],
        heading: Annotated[str | None, Field(description="With section: the heading whose body is replaced, "
                                                         "e.g. 'Next action'.")] = None,
        new: Annotated[str | None, Field(description="With replace: the new text ('' deletes).")] = None,
        count: Annotated[int | None, Field(ge=1, le=10000, description="With replace: how many times `text` must "
                                                                       "occur (default 1).")] = None,
        expected_hash: Annotated[str | None, Field(description="The sha256 (or 8+ hex digits) brain_read gave "
                                                               "you: refused if the file changed since.")] = None,
        reason: Annotated[str | None, Field(description="Why: recorded in the commit when the project commits "
                                                         "memory changes.")] = None,
    ) -> ToolOutput:
        """Change one memory file in place instead of rewriting it whole: add a line to now.md's "Next action",
        replace one section, fix a fact in a note. Atomic over the version read (or expected_hash's): a file
        that changed meanwhile is never overwritten (conflict: read again). append and prepend create a missing
        file. Territories and secret redaction apply as for brain_write."""
        from ...team.identity import writer_role

        if operation == "replace" and new is None:
            from ...errors import InvalidInput

            raise InvalidInput("replace needs `new`: the text that takes the place of `text`", field="new")
        doc, changes = brain.edit(path, operation, value=text, heading=heading, new=new or "",
                                  count=count or 1, expected_hash=expected_hash, role=writer_role(brain),
                                  reason=reason)
        data = {"path": doc.path, "operation": operation, "changes": changes, "hash": doc.hash, "bytes": doc.size,
                "redacted": [{"kind": k, "count": n} for k, n in doc.redacted]}
        return ToolOutput(f"edited {doc.path} ({operation}, sha256 {doc.hash[:16]})", data)

    @tools.tool(title="Remember a fact", destructive=False, output=outputs.Remembered)
    def brain_remember(
        brain,
        text: Annotated[str, Field(description="One line to keep: a fact, a pitfall, a convention (at most 500 "
                                               "characters).")],
    ) -> ToolOutput:
        """File one line of memory without choosing a path: it goes at the end of the note already about its
        subject (sharing most of its words), else into notes/inbox.md for a person to sort. Use it for a fact
        the next session must know; use brain_write or brain_edit for whole notes and now.md."""
        from ...team.identity import writer_role

        data = brain.remember(text, role=writer_role(brain))
        return ToolOutput(f"remembered in {data['path']}: {data['why']}", data)

    @tools.tool(title="Focus", read_only=True, inline=True, output=outputs.MemoryFile)
    def brain_focus(brain) -> ToolOutput:
        """Read focus.md: what the humans running this project say matters now (priorities, what not to touch).
        It is part of brain_boot already; call this to re-read it alone, e.g. before choosing what to do next."""
        doc = brain.read("focus.md")
        return ToolOutput(doc.text, {"path": doc.path, "hash": doc.hash, "text": doc.text})

    @tools.tool(title="Workflows", read_only=True, inline=True, output=outputs.Workflows)
    def brain_workflows(
        brain,
        name: Annotated[str | None, Field(description="A workflow name as listed (e.g. release): returns its "
                                                      "text. Leave out to list the names.")] = None,
    ) -> ToolOutput:
        """List the project's workflows (named procedures such as release, deploy, review), or read one by name.
        Call it before doing one of those procedures and follow the steps it gives."""
        if name:
            doc = brain.workflow(name)
            return ToolOutput(doc.text, {"name": name, "path": doc.path, "hash": doc.hash, "text": doc.text})
        names = brain.workflows()
        text = "\n".join(f"- {n}" for n in names) if names else "No workflow is recorded yet (.brain/workflows/)."
        return ToolOutput(text, {"workflows": names})

    @tools.tool(title="Decisions", read_only=True, output=outputs.Decisions)
    def brain_decisions(
        brain,
        query: Annotated[str | None, Field(description="Words the decision must mention (all of them), e.g. "
                                                       "'postgres locking'. Superseded decisions are included "
                                                       "only when a query names them.")] = None,
        module: Annotated[str | None, Field(description="Only decisions that concern this module.")] = None,
    ) -> ToolOutput:
        """Find the project's architecture decisions that stand (one line each: number, status, title) before you
        change how something is built, so you follow what was decided instead of reopening it. Read a full record
        with brain_read at the path each one gives."""
        records = brain.decisions(query=query, module=module)
        if not records:
            what = " ".join(x for x in (query, module) if x)
            return ToolOutput(f"No decision matches {what!r}." if what else "No decision is recorded yet.",
                              {"decisions": []})
        return ToolOutput("\n".join(r["line"] for r in records), {"decisions": records})

    @tools.tool(title="Environment state", read_only=True, output=outputs.State)
    def brain_state(brain) -> ToolOutput:
        """The environment right now, computed at call time: git branch and head, number of changed files,
        recent commit subjects, and whether each declared service listens on its port. Use it to check where
        the working tree stands or whether the dev server is up, instead of running several shell commands."""
        from ...state import render_state

        state = brain.state()
        return ToolOutput(render_state(state), state)
