"""Agent profiles, chosen by the session's role, the task and the feature flags.

Tiers: `always` profiles come into every boot; `hot` ones into boots of their roles
(a profile without roles is for every role); `warm` ones only when the task mentions
one of their triggers (or their name); `cold` ones never, they are listed as
fetchable in the manifest (those of the session's role). A profile that does not
parse is skipped and named in the manifest with what is wrong. A role's `tiers` setting narrows what it loads; a profile that
`requires` a feature flag comes in only when that flag is on for the role.
"""

from __future__ import annotations

from ..parts import Part

_TIER_ORDER = {"always": 0, "hot": 1, "warm": 2, "cold": 3}


def _wanted(profile, role: str | None, task: str, tiers: tuple[str, ...], brain) -> bool:
    if profile.tier not in tiers or profile.tier == "cold":
        return False
    if profile.requires and not brain.settings.feature(profile.requires, role):
        return False
    if profile.tier == "always":
        return True
    if profile.roles and role not in profile.roles:
        return False
    if profile.tier == "warm":
        words = profile.triggers + (profile.name.lower(),)
        return any(word and word in task for word in words)
    return True


def collect(brain, request) -> list[Part]:
    profiles = brain.profiles()
    skipped = [Part("profiles", bad["source"], "", "", _fetch(bad["source"]), listed_only=True, why="unparsable",
                    detail=bad["problem"]) for bad in brain.profile_problems()]
    if not profiles:
        return skipped
    tiers = brain.settings.tiers_for(request.role)
    task = (request.task or "").lower()
    chosen = [p for p in profiles if _wanted(p, request.role, task, tiers, brain)]
    chosen.sort(key=lambda p: (_TIER_ORDER[p.tier], p.name))
    cold = [p for p in profiles if p.tier == "cold" and (not p.roles or request.role in p.roles)]
    return ([Part("profiles", p.source, f"Agent profile: {p.name} ({p.tier})", p.body, _fetch(p.source))
             for p in chosen]
            + [Part("profiles", p.source, f"Agent profile: {p.name} (cold)", p.body,
                    _fetch(p.source), listed_only=True, why="cold_profile") for p in cold]
            + skipped)


def _fetch(source: str) -> str:
    if source.startswith("kernel:"):
        return f"brain read --layer kernel {source.removeprefix('kernel:')}"
    return f"brain read {source}"
