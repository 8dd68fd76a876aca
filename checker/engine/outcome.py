"""What a search returns before traces are rebuilt, and the bounds it runs under."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ordercheck.checker.api.result import LevelTiming
from ordercheck.checker.engine.fingerprint import collision_probability


@dataclass(frozen=True)
class Bounds:
    """Limits on a search. Hitting one ends the search with ``unknown`` verdicts."""

    max_states: int | None = None
    max_depth: int | None = None
    time_limit: float | None = None


NO_BOUNDS = Bounds()


@dataclass
class Decision:
    """A property decided at state number ``index`` with an explanation."""

    index: int
    explanation: str
    store: Any = None  # the store ``index`` numbers a state of, when not the outcome's own


class StatePaths(Protocol):
    """What an outcome's store offers once the search is over: the number of states
    and the path to a decided state. The one-process engine's is its
    :class:`~ordercheck.checker.engine.table.CompactStore`, the shard workers'
    :class:`~ordercheck.checker.engine.sharded.ShardedPaths` (the decided states' paths only),
    Spark's its own; none is asked whether it holds a state."""

    def __len__(self) -> int: ...

    def path(self, index: int) -> tuple[int, list[int]]: ...


@dataclass
class SearchOutcome:
    """The raw outcome of a search, before traces are rebuilt."""

    store: StatePaths | None  # set when the search is over (LevelLoop.finish)
    decisions: dict[str, Decision] = field(default_factory=dict)
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    peak_memory_bytes: int = 0
    bound: str | None = None
    complete: bool = True
    maybe_cyclic: bool = False  # an edge leads back to a level at or above its source
    fired: dict[str, int] | None = None  # transitions generated per action name; None: not recorded
    edges: Any = None  # the graph searched (an ordercheck.checker.engine.edges.EdgeLog), where the engine kept it

    @property
    def distinct_states(self) -> int:
        return len(self.store)

    @property
    def collision_probability(self) -> float:
        return collision_probability(self.distinct_states, self.transitions + self.initial_states)

    initial_states: int = 0
    store_bytes: int = 0
    memory: Any = None  # the ordercheck.checker.engine.budget.MemoryBoundReached that stopped the search, if one did
    levels: list[LevelTiming] = field(default_factory=list)  # each level's time split, in order
