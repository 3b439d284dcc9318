"""How many torch CPU threads a run uses when the config leaves ``num_threads: null``.

Small graphs train on one thread: their kernels are too short for a thread team to pay
for its synchronisation, and on a busy machine a team waiting for a descheduled thread
is an order of magnitude slower (Karate, 2 cores shared with other jobs: 0.2-0.6 s per
run on one thread, 2.8-8.1 s on two; same metrics). Graphs with at least
``SMALL_GRAPH_NODES`` nodes get every thread torch started with, or fewer when a
launcher capped the job's threads (:func:`cap_threads`: one per job under joblib).
"""

from __future__ import annotations

import torch

from graphnetz.tasks.base import TaskData

#: Node count from which a run's graph is worth several threads.
SMALL_GRAPH_NODES = 20_000
#: torch's own choice, taken before any run changed it (a sweep runs many in one process).
INITIAL_THREADS = torch.get_num_threads()
#: The most threads this process may use, set by a launcher's job-start hook (None: no cap).
_CAP: list[int | None] = [None]


def cap_threads(threads: int | None) -> None:
    """Let no run of this process use more than ``threads`` threads (None lifts the cap)."""
    _CAP[0] = threads


def default_threads(data: TaskData) -> int:
    """One thread for graph-level tasks (mini-batches of small graphs) and graphs under
    ``SMALL_GRAPH_NODES`` nodes; torch's initial thread count otherwise."""
    graph = data.graph
    nodes = getattr(graph, "num_nodes", None) if graph is not None else None
    if nodes is None or nodes < SMALL_GRAPH_NODES:
        return 1
    cap = _CAP[0]
    return INITIAL_THREADS if cap is None else min(INITIAL_THREADS, cap)
