"""A quantile sketch in bounded memory: exact for small samples, log buckets beyond.

Up to ``exact_max`` values are kept as they are (exact p50/p95 for ordinary
sessions); past that they move into buckets whose bounds grow by 2 % each, so a
quantile is off by at most 2 % whatever the number of values, in a few hundred
counters.
"""

from __future__ import annotations

import math

__all__ = ["Sketch"]

_GAMMA = 1.02
_LOG_GAMMA = math.log(_GAMMA)


class Sketch:
    __slots__ = ("values", "buckets", "count", "max", "exact_max", "total")

    def __init__(self, exact_max: int = 1024) -> None:
        self.values: list[int] | None = []
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.max = 0
        self.total = 0
        self.exact_max = exact_max

    def add(self, value: int) -> None:
        value = max(0, int(value))
        self.count += 1
        self.total += value
        self.max = max(self.max, value)
        if self.values is not None:
            self.values.append(value)
            if len(self.values) > self.exact_max:
                for v in self.values:
                    self._bucket(v)
                self.values = None
        else:
            self._bucket(value)

    def _bucket(self, value: int) -> None:
        key = -1 if value <= 0 else int(math.log(value) / _LOG_GAMMA)
        self.buckets[key] = self.buckets.get(key, 0) + 1

    def merge(self, other: "Sketch") -> None:
        if other.values is not None:
            for v in other.values:
                self.add(v)
            return
        if self.values is not None:
            for v in self.values:
                self._bucket(v)
            self.values = None
        for key, n in other.buckets.items():
            self.buckets[key] = self.buckets.get(key, 0) + n
        self.count += other.count
        self.total += other.total
        self.max = max(self.max, other.max)

    def quantile(self, q: float) -> int:
        """Nearest-rank quantile (q in 0..1); 0 for an empty sketch."""
        if not self.count:
            return 0
        rank = max(1, math.ceil(q * self.count))
        if self.values is not None:
            return sorted(self.values)[rank - 1]
        seen = 0
        for key in sorted(self.buckets):
            seen += self.buckets[key]
            if seen >= rank:
                if key < 0:
                    return 0
                return min(self.max, round(_GAMMA ** (key + 0.5)))
        return self.max

    def summary(self) -> dict:
        return {"calls": self.count, "p50": self.quantile(0.5), "p95": self.quantile(0.95), "max": self.max}
