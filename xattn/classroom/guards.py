"""What guards a class store's rooms: the limits per client (`Guards.allow`), the join
bucket of a room (`Guards.take_join`) and the servers' keys that sign students' ids and
browsers' tokens (`Guards.signing_keys`); a part of `xattn.classroom.store.ClassStore`."""

from __future__ import annotations

import hashlib
import hmac
import os
import time

from xattn._checks import quote
from xattn.classroom.codes import normalize_code
from xattn.classroom.rules import SECRET_ENV, client_digest

__all__ = ["Guards"]


class Guards:
    """The limits and the signing keys of `ClassStore`."""

    def take_join(self, code: str, who: str) -> float:
        """Take one join of room ``code`` from client ``who`` (an address, kept as a hash)
        out of their token bucket (``Limits.join_bucket``: a burst, then one join every so
        many seconds): 0.0 if taken, else the seconds until one is (nothing taken). A hall
        behind one address joins within the burst; a script then mints one voter per
        refill, in that room, from that address."""
        code = normalize_code(code)
        if not isinstance(who, str):
            raise TypeError(f"who must be a str; received {type(who).__name__}.")
        burst, every = self.limits.join_bucket
        return self._take_join(code, client_digest(who), int(burst), float(every))

    def allow(self, kind: str, who: str, *, peek: bool = False) -> bool:
        """Count one ``kind`` of action (``"new_students"``, ``"failed_joins"``,
        ``"new_rooms"``) by the client ``who`` (an address, kept as a hash); False once it
        passed its `Limits` bound in the current window. ``peek``: only say whether one more
        would be allowed (a join is refused unheard once the client's failures ran out)."""
        kinds = ("new_students", "failed_joins", "new_rooms", "browser_failed_joins")
        if kind not in kinds:
            raise ValueError(f"kind must be one of {', '.join(kinds)}; received {quote(kind)}.")
        if not isinstance(who, str):
            raise TypeError(f"who must be a str; received {type(who).__name__}.")
        limit, window = getattr(self.limits, kind)
        return self._allow(kind, client_digest(who), limit, float(window), peek)

    def signing_key(self) -> bytes:
        """The key students' ids are signed with now (`signing_keys`' first)."""
        return self.signing_keys()[0]

    def signing_keys(self) -> list[bytes]:
        """Every key a student's id may be signed with, the one to sign with first.

        One source for every process: ``$XATTN_SECRET`` (a deployer's secret: the key is
        derived from it, stored nowhere), else the store's own key, made once and shared by
        every process that opens the store, and kept with every key this process signed
        with before (`refresh_signing_keys`): a store that restarted empty takes them back,
        so no restart ever splits the students of two processes."""
        if self._signing is None:
            secret = os.environ.get(SECRET_ENV, "").strip()
            if secret:
                self._signing = [hmac.new(secret.encode(), b"xattn signing key",
                                          hashlib.sha256).digest()]
                self._fixed = True
            else:
                self._signing = self._signing_keys([])
        return self._signing

    def refresh_signing_keys(self) -> list[bytes]:
        """Read the store's keys again, handing it those this process knows (call when a
        signature fails: another process may sign with a key made after a store restart);
        at most once a second."""
        if self._fixed or self._signing is None:
            return self.signing_keys()
        now = time.monotonic()
        if now - self._refreshed >= 1.0:
            self._refreshed = now
            self._signing = self._signing_keys(list(self._signing))
        return self._signing
