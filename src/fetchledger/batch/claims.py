"""Inputs claimed through a shared ledger, so that several batch processes (on several
machines) given the same input list fetch each URL once between them.

On a ledger whose store claims inputs (PostgreSQL), a batch takes its inputs in
rounds, in input order, a little ahead of its fetches. Each claim is a lease,
renewed at every round while the batch runs, that lapses if the batch dies;
another batch then takes the input over. A batch of the same machine takes it over
at once: a holder's name tells its machine and process, and a process of this
machine that is gone holds nothing (a batch killed and run again does not wait
for the lease; on other machines the lease is the only sign of death). An input
another batch holds is asked for again each round until that batch reports it
finished (this one then reports the source that batch registered, or its failure)
or its lease lapses.
An input finished before this batch started is claimed again (a re-run retries
failures; known sources were skipped before claiming).
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from ..store.protocol import ClaimRound

__all__ = ["Claimer", "new_holder"]

J = TypeVar("J")

ClaimCall = Callable[[str, Sequence[str], Sequence[tuple[str, str, str]], float,
                      "datetime | None", Sequence[str]], "ClaimRound | None"]


def this_machine() -> str:
    """This machine (host name) and PID namespace, as holder names give them: two
    containers of one name have pids of their own."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return f"{socket.gethostname()}/{namespace}"


def new_holder() -> str:
    """A name for one batch process that no other process anywhere shares: its
    machine, its pid, and a random part (a pid is reused)."""
    return f"{this_machine()}:{os.getpid()}:{secrets.token_hex(4)}"


def gone_here(holder: str) -> bool:
    """Whether ``holder`` names a process of this machine that has ended (or is a
    zombie, killed but not yet waited for). A live process of that pid, perhaps
    another one, counts as the holder: its claims then wait for their lease."""
    machine, _, rest = holder.partition(":")
    pid, _, _ = rest.partition(":")
    if machine != this_machine() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[:1] == [b"Z"]
    except FileNotFoundError:
        return True
    except OSError:  # no /proc here: ask the kernel
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except OSError:
            pass
        return False


@dataclass
class Claimer(Generic[J]):
    """The claim side of one batch run: which of its jobs (each known by its canonical
    locator) it may fetch, which another batch finished, which it waits for."""

    claim: ClaimCall
    locator_of: Callable[[J], str]
    lease: float
    poll: float
    round_size: int
    holder: str = field(default_factory=new_holder)
    unclaimed: deque[J] = field(default_factory=deque)
    waiting: dict[str, J] = field(default_factory=dict)  # held by another batch
    finished: list[tuple[str, str, str]] = field(default_factory=list)  # to report
    gone: set[str] = field(default_factory=set)  # dead batches of this machine, to free
    since: datetime | None = None
    last_round: float = 0.0

    def due(self, queued: int) -> bool:
        """Whether a round is worth a transaction now: more work is wanted, peers wait
        for what was finished, inputs held elsewhere are to be asked again, or leases
        are to be renewed."""
        elapsed = time.monotonic() - self.last_round
        if self.unclaimed and queued < self.round_size:
            return True
        return bool(self.gone) or (
            elapsed >= self.poll and bool(self.waiting or self.finished)) or (
            elapsed >= self.lease / 3)

    def round(self, queued: int) -> tuple[list[J], list[tuple[J, str, str]]] | None:
        """One round (in the claims thread): the jobs now this batch's, and the jobs
        another batch finished (job, status, message); None when the ledger does
        not claim inputs (one machine: everything is this batch's)."""
        wanted: list[J] = []
        if queued < self.round_size:
            while self.unclaimed and len(wanted) < self.round_size:
                wanted.append(self.unclaimed.popleft())
        asked = [*self.waiting.values(), *wanted]
        by_locator = {self.locator_of(job): job for job in asked}
        # The event loop appends while this runs (in the claims thread): take a copy
        # and remove exactly that many from the front, so no report is lost.
        reported = self.finished[:]
        del self.finished[: len(reported)]
        gone, self.gone = sorted(self.gone), set()
        answer = self.claim(self.holder, list(by_locator), reported, self.lease, self.since,
                            gone)
        self.last_round = time.monotonic()
        if answer is None:
            return None
        self.gone = {holder for holder in answer.holders if gone_here(holder)}
        self.since = answer.since
        granted = [by_locator[locator] for locator in answer.granted]
        done = [(by_locator[locator], status, message)
                for locator, status, message in answer.finished]
        self.waiting = {locator: by_locator[locator] for locator in answer.held}
        return granted, done
