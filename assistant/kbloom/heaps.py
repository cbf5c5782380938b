"""The four bounded min-heaps of K-Bloom's tuple search (methods.md §5, step 2).

Candidates are split by shape, one-word or two-word head x one-word or two-word tail, because a sum of
token log-probabilities favours short entities: each shape competes only with its own kind. Each heap
keeps its ``capacity`` best candidates by score (a sum of log-probabilities, so adding evidence only
lowers it). That makes pruning exact: once a heap is full, a candidate whose *running* score is already
below the heap's smallest kept score can never enter it, and its remaining prompts need not be scored.

An entity may appear in at most ``entity_cap`` kept tuples (as head or tail), so one prolific entity
("water", "people") cannot fill the heaps; a candidate over the cap is refused, and an evicted tuple
frees its entities' places.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field

Shape = tuple[int, int]
SHAPES: tuple[Shape, ...] = ((1, 1), (1, 2), (2, 1), (2, 2))


def words(entity: str) -> int:
    return len(entity.split())


def shape_of(head: str, tail: str) -> Shape | None:
    """The heap a pair belongs to, or None for entities of more than two words."""
    h, t = words(head), words(tail)
    return (h, t) if 1 <= h <= 2 and 1 <= t <= 2 else None


@dataclass(order=True)
class _Entry:
    score: float
    order: int  # later candidates lose ties: the heap top is the worst score, latest arrival
    pair: tuple[str, str] = field(compare=False)


@dataclass
class TupleHeaps:
    capacity: int = 1000
    entity_cap: int = 10
    heaps: dict[Shape, list[_Entry]] = field(default_factory=lambda: {s: [] for s in SHAPES})
    counts: Counter = field(default_factory=Counter)
    _pushed: int = 0

    def bound(self, shape: Shape) -> float:
        """The score a candidate of ``shape`` must beat to enter (-inf while the heap has room)."""
        heap = self.heaps[shape]
        return heap[0].score if len(heap) >= self.capacity else float("-inf")

    def can_prune(self, shape: Shape, running_score: float) -> bool:
        """True when a candidate whose score can only fall from ``running_score`` can never enter."""
        return running_score < self.bound(shape)

    def at_cap(self, pair: tuple[str, str]) -> bool:
        return any(self.counts[e] >= self.entity_cap for e in pair)

    def push(self, pair: tuple[str, str], score: float) -> bool:
        """Offer a fully scored pair; True if it was kept."""
        shape = shape_of(*pair)
        if shape is None or self.at_cap(pair) or self.can_prune(shape, score):
            return False
        heap = self.heaps[shape]
        if any(e.pair == pair for e in heap):
            return False
        self._pushed += 1
        entry = _Entry(score, -self._pushed, pair)
        if len(heap) >= self.capacity:
            if entry <= heap[0]:
                return False
            evicted = heapq.heapreplace(heap, entry)
            self.counts.subtract(evicted.pair)
        else:
            heapq.heappush(heap, entry)
        self.counts.update(pair)
        return True

    def items(self) -> list[tuple[tuple[str, str], float]]:
        """Every kept (pair, score), best first (ties: earlier first)."""
        entries = [e for heap in self.heaps.values() for e in heap]
        return [(e.pair, e.score) for e in sorted(entries, reverse=True)]

    def __len__(self) -> int:
        return sum(len(h) for h in self.heaps.values())
