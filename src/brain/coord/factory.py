"""Build the coordination objects of an opened Brain from its settings (composition helper)."""

from __future__ import annotations

import time
from typing import Callable

from ..livestate.store import LiveLimits
from .rules import CoordConfig, resolve_ask_timeout
from .service import Coordinator

__all__ = ["config_from_settings", "coordinator_for"]


def config_from_settings(settings, env: dict[str, str]) -> tuple[CoordConfig, LiveLimits]:
    config = CoordConfig(
        stall_seconds=float(settings["coord.stall_seconds"]),
        gone_seconds=float(max(settings["coord.gone_seconds"], settings["coord.stall_seconds"])),
        claim_ttl=float(settings["coord.claim_ttl"]) or CoordConfig.claim_ttl,
        signal_ttl=float(settings["coord.signal_ttl"]) or CoordConfig.signal_ttl,
        signal_max=int(settings["coord.signal_max"]) or CoordConfig.signal_max,
        ask_timeout=resolve_ask_timeout(env.get("BRAIN_ASK_TIMEOUT"),
                                        float(settings["coord.ask_timeout"]) or CoordConfig.ask_timeout),
        prune_idle_seconds=float(settings["coord.prune_idle_seconds"]),
        prune_gone_seconds=float(settings["coord.prune_gone_seconds"]),
    )
    limits = LiveLimits(ttl=float(settings["livestate.ttl"]) or LiveLimits.ttl,
                        max_keys=int(settings["livestate.max_keys"]) or LiveLimits.max_keys)
    return config, limits


def coordinator_for(brain, backend, clock: Callable[[], float] = time.time) -> Coordinator:
    config, limits = config_from_settings(brain.settings, brain.env)
    coordinator = Coordinator(backend, brain_name=brain.name, machine=brain.settings.machine, clock=clock,
                              config=config, live_limits=limits, redact=brain.redactor,
                              worktree=brain.worktree(), repo_root=str(brain.repo))

    def record(kind: str, event: dict) -> None:  # every ask and reply lands in the pair's conversation log
        brain.record_turn(None, event["speaker"], event["text"], to=event["to"], kind=kind, ref=event["ticket"])

    coordinator.observer = record
    return coordinator
