"""A build's log as the runner keeps it: bytes in memory up to a limit, secrets masked.

Output arrives in arbitrary chunks, so a secret may be split between two of them: the part of the
log that could still be the start of a secret is held back until more output (or the end) decides.
"""

from __future__ import annotations

import threading

MASK = b"[MASKED]"
DEFAULT_LIMIT = 4 * 1024 * 1024


class Trace:
    def __init__(self, limit: int = DEFAULT_LIMIT, secrets: tuple[str, ...] = ()):
        self.limit = limit
        self._secrets = [secret.encode() for secret in secrets if secret]
        self._data = bytearray()
        self._held = b""
        self._lock = threading.Lock()
        self.truncated = False

    def write(self, data: bytes) -> None:
        with self._lock:
            buffer = self._held + data
            for secret in self._secrets:
                buffer = buffer.replace(secret, MASK)
            keep = self._partial_secret(buffer)
            self._held = buffer[len(buffer) - keep:] if keep else b""
            self._append(buffer[: len(buffer) - keep])

    def line(self, text: str) -> None:
        """A line of the runner's own (not the build's) output."""
        self.write(text.encode() + b"\n")

    def flush(self) -> None:
        """The held-back tail, once no more output can complete a secret."""
        with self._lock:
            held, self._held = self._held, b""
            self._append(held)

    def since(self, offset: int, limit: int | None = None) -> bytes:
        with self._lock:
            end = len(self._data) if limit is None else min(len(self._data), offset + limit)
            return bytes(self._data[offset:end])

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def text(self) -> str:
        return self.since(0).decode("utf-8", "replace")

    def _partial_secret(self, buffer: bytes) -> int:
        """The length of the longest tail of BUFFER that begins some secret."""
        longest = 0
        for secret in self._secrets:
            for size in range(min(len(secret) - 1, len(buffer)), longest, -1):
                if secret.startswith(buffer[-size:]):
                    longest = size
                    break
        return longest

    def _append(self, data: bytes) -> None:
        if self.truncated or not data:
            return
        room = self.limit - len(self._data)
        if len(data) <= room:
            self._data += data
            return
        self._data += data[:room]
        self._data += f"\nJob's log exceeded limit of {self.limit} bytes.\n".encode()
        self.truncated = True
