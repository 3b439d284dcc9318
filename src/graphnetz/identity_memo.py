"""Values derived from live objects, found by identity and kept while the object lives."""

from __future__ import annotations

import weakref
from typing import Any


class IdentityMemo:
    """``object -> value``, found by the object's identity and a ``stamp`` the caller gives
    (a tensor's version: a changed object is a miss), dropped when the object dies.

    ``put`` raises ``TypeError`` for an object that takes no weak reference. With
    ``max_entries``, the entry put longest ago is dropped when a new one would exceed it.
    A memo pickles empty (weak references do not pickle; values are rebuilt on demand).
    """

    def __init__(self, max_entries: int | None = None) -> None:
        self.max_entries = max_entries
        self._by_id: dict[int, tuple[weakref.ref, Any, Any]] = {}

    def __getstate__(self) -> dict:
        return {"max_entries": self.max_entries}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["max_entries"])

    def __len__(self) -> int:
        return len(self._by_id)

    def get(self, obj: Any, stamp: Any = None) -> Any | None:
        entry = self._by_id.get(id(obj))
        if entry is None or entry[0]() is not obj or entry[1] != stamp:
            return None
        return entry[2]

    def put(self, obj: Any, value: Any, stamp: Any = None) -> None:
        key, by_id = id(obj), self._by_id

        def forget(ref: weakref.ref, key: int = key) -> None:
            if by_id.get(key, (None,))[0] is ref:
                del by_id[key]

        by_id.pop(key, None)  # a renewed entry counts as the newest
        by_id[key] = (weakref.ref(obj, forget), stamp, value)
        if self.max_entries is not None:
            while len(by_id) > self.max_entries:
                del by_id[next(iter(by_id))]

    def __contains__(self, obj: Any) -> bool:
        entry = self._by_id.get(id(obj))
        return entry is not None and entry[0]() is obj
