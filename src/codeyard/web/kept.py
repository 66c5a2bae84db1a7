"""Results kept per process because they are a function of their key (rendered READMEs, files and
comments), bounded in number and in size."""

from __future__ import annotations

import threading
from collections import OrderedDict


class Kept:
    """The last COUNT values by key, dropped oldest first beyond SIZE in all (each value's size is
    given when it is put; a value over SIZE is not kept). Thread-safe."""

    def __init__(self, count: int, size: int = 0):
        self.count, self.size, self._values, self._lock = count, size, OrderedDict(), threading.Lock()
        self._total = 0

    def get(self, key):
        with self._lock:
            held = self._values.get(key)
            if held is None:
                return None
            self._values.move_to_end(key)
            return held[0]

    def put(self, key, value, size: int = 0) -> None:
        if self.size and size > self.size:
            return
        with self._lock:
            if (old := self._values.pop(key, None)) is not None:
                self._total -= old[1]
            self._values[key] = (value, size)
            self._total += size
            while len(self._values) > self.count or (self.size and self._total > self.size):
                self._total -= self._values.popitem(last=False)[1][1]
