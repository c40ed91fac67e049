"""Untrusted work in pre-started worker processes, bounded in memory and time.

DuckDB's `memory_limit` covers its buffer manager, not the lists and strings a query
builds (`range(1, 10^9)`, `repeat(...)`), and Lance lookups cannot be interrupted, so a
thread in the server cannot bound either. A `Workers` pool runs each job ("module:function"
and picklable arguments) in a process of its own:

- a worker is a fresh interpreter (`python -m graphlake.isolation`, never a fork: Lance
  is not fork-safe; not multiprocessing's spawn either, which re-imports the parent's
  main module) talking over a socket pair. It imports and warms up (`warm`, run once
  before the limit is set), then sets `RLIMIT_AS` to its address space at that moment
  plus `memory_mb`; glibc is held to two malloc arenas (`MALLOC_ARENA_MAX`) so threads
  do not reserve address space of their own. An allocation past the limit fails inside
  the worker (Python's `MemoryError`, DuckDB's out-of-memory error, or an abort). It
  ignores SIGINT (the parent decides its life) and exits when the parent goes away;
- the parent also reads the worker's resident set (`/proc/<pid>/statm`) while it waits
  and kills it past its resident set when ready plus `memory_mb`, so the memory a job can
  hold is bounded even inside address space reserved before the limit;
- the parent kills the worker at the deadline or when `cancelled()` turns true (a client
  that went away), and starts a replacement in the background. A worker that died, ran
  out of memory or was killed is never reused.

One job runs in a worker at a time; at most `count` workers exist, so the memory of the
whole pool is bounded by `count x (a worker's resident set when ready + memory_mb)`.
A job returns a picklable value (for tables: Arrow IPC bytes); a `GraphLakeError` it
raises is raised again in the caller.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from graphlake.errors import GraphLakeError, QueryError, QueryTimeoutError, QueryTooLargeError

_POLL_S = 0.02  # how often the parent checks the deadline, cancellation and memory
_READY_TIMEOUT_S = 120.0  # a worker's start-up (imports) on a loaded machine
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Stopped:
    """How a job's failures read: `timeout(seconds)` and `memory()` give the messages."""

    timeout: Callable[[float], str]
    memory: Callable[[], str]


class _Worker:
    def __init__(self, memory_mb: int, warm: str | None, threads: int | None = None):
        parent, child = socket.socketpair()
        with child:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "graphlake.isolation",
                    str(child.fileno()),
                    str(memory_mb),
                    warm or "",
                ],
                pass_fds=(child.fileno(),),
                stdin=subprocess.DEVNULL,
                env={**os.environ, "MALLOC_ARENA_MAX": "2", **_thread_env(threads)},
            )
        self.conn = Connection(parent.detach())
        self.rss_cap = 0  # bytes; set when the worker reports ready

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, memory_mb: int) -> None:
        if not self.conn.poll(_READY_TIMEOUT_S):
            self.kill()
            raise RuntimeError("a query worker did not start")
        kind, rss = self.conn.recv()
        if kind != "ready":
            self.kill()
            raise RuntimeError(f"a query worker failed to start: {rss}")
        self.rss_cap = rss + memory_mb * 2**20

    def rss(self) -> int:
        try:
            with open(f"/proc/{self.proc.pid}/statm") as f:
                return int(f.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return 0

    def kill(self) -> None:
        self.proc.kill()
        self.conn.close()
        with contextlib.suppress(subprocess.TimeoutExpired):  # reaped later by the OS
            self.proc.wait(5)


class Workers:
    """At most `count` worker processes, each job bounded by `memory_mb` above the
    worker's own size once ready; `warm` ("module:function") runs once in each new worker
    before its limit is set; `threads`: the worker's `OMP_NUM_THREADS` (and OpenBLAS's),
    the thread count of the OpenMP and BLAS code it runs unless a job sets its own."""

    def __init__(
        self, count: int, memory_mb: int, warm: str | None = None, threads: int | None = None
    ):
        self.count, self.memory_mb, self.warm = count, memory_mb, warm
        self.threads = threads
        self._lock = threading.Condition()
        self._idle: list[_Worker] = []
        self._live = 0  # started or starting, idle or busy
        self._closed = False

    # --- workers
    def start(self, n: int = 1) -> None:
        """Start up to `n` more workers in the background (the pool's warm start)."""
        for _ in range(n):
            with self._lock:
                if self._live >= self.count or self._closed:
                    return
                self._live += 1
            threading.Thread(
                target=self._spawn_idle, daemon=True, name="graphlake-worker-start"
            ).start()

    def _spawn(self) -> _Worker:
        worker = _Worker(self.memory_mb, self.warm, self.threads)
        try:
            worker.wait_ready(self.memory_mb)
        except BaseException:
            with self._lock:
                self._live -= 1
                self._lock.notify_all()
            raise
        return worker

    def _spawn_idle(self) -> None:
        try:
            worker = self._spawn()
        except Exception:  # the next job starts one itself and reports the error
            return
        self._put_back(worker)

    def _put_back(self, worker: _Worker) -> None:
        with self._lock:
            if self._closed:
                self._live -= 1
                worker.kill()
                return
            self._idle.append(worker)
            self._lock.notify_all()

    def _discard(self, worker: _Worker) -> None:
        """Kill `worker` and start its replacement in the background."""
        worker.kill()
        with self._lock:
            self._live -= 1
            self._lock.notify_all()
        self.start(1)

    def _take(self, deadline: float | None) -> _Worker:
        with self._lock:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        if not self._idle:  # the next job should not wait for start-up
                            self.start(1)  # (the condition's lock is reentrant)
                        return worker
                    self._live -= 1
                if self._live < self.count:
                    self._live += 1
                    break
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise QueryTimeoutError("no query worker became free in time; retry")
                self._lock.wait(left)
        return self._spawn()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
        for worker in idle:
            worker.kill()

    # --- jobs
    def run(
        self,
        job: str,
        args: tuple,
        *,
        timeout_s: float | None,
        stopped: Stopped,
        cancelled: Callable[[], bool] | None = None,
    ) -> Any:
        """The value of `job(*args)` in a worker; `QueryTimeoutError` after `timeout_s`,
        `QueryTooLargeError` past the memory limit, `QueryError("cancelled")` once
        `cancelled()` is true. The worker is killed in all three cases."""
        # Waiting for a worker (its start-up, on a cold pool) is not the job's time.
        worker = self._take(time.monotonic() + _READY_TIMEOUT_S)
        started = time.monotonic()
        deadline = None if timeout_s is None else started + timeout_s
        try:
            worker.conn.send((job, args))
        except (OSError, ValueError, pickle.PicklingError):
            self._discard(worker)
            raise
        while not worker.conn.poll(_POLL_S):
            failure: GraphLakeError | None = None
            if deadline is not None and time.monotonic() > deadline:
                failure = QueryTimeoutError(stopped.timeout(time.monotonic() - started))
            elif cancelled is not None and cancelled():
                failure = QueryError("the query was cancelled (the client went away)")
            elif worker.rss() > worker.rss_cap:
                failure = QueryTooLargeError(stopped.memory())
            if failure is not None:
                self._discard(worker)
                raise failure
        try:
            kind, value = worker.conn.recv()
        except (EOFError, OSError):  # died: an abort on a failed allocation, or killed
            self._discard(worker)
            raise QueryTooLargeError(stopped.memory()) from None
        if kind == "ok":
            self._put_back(worker)
            return value
        if kind == "memory":
            self._discard(worker)
            raise QueryTooLargeError(stopped.memory())
        self._put_back(worker)
        raise value


_POOLS: dict[tuple[int, int, str | None, int | None], Workers] = {}
_POOLS_LOCK = threading.Lock()


def shared_workers(
    count: int, memory_mb: int, warm: str | None = None, threads: int | None = None
) -> Workers:
    """The process's pool for these settings (servers in one process share it)."""
    key = (count, memory_mb, warm, threads)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = Workers(count, memory_mb, warm, threads)
        return pool


def _thread_env(threads: int | None) -> dict[str, str]:
    if threads is None:
        return {}
    return {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}


@atexit.register
def _close_all() -> None:
    for pool in list(_POOLS.values()):
        pool.close()


# --- the worker's side


def _serve(conn: Connection, memory_mb: int, warm: str | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if warm is not None:
            _function(warm)()
        limit = _vm_size() + memory_mb * 2**20
        _, hard = resource.getrlimit(resource.RLIMIT_AS)  # inherited: only ever lower it
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        conn.send(("ready", _rss()))
    except Exception as exc:  # reported to the parent, which refuses this worker
        conn.send(("failed", repr(exc)))
        return
    while True:
        try:
            job, args = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        try:
            conn.send(("ok", _function(job)(*args)))
        except MemoryError:
            _send_or_exit(conn, ("memory", None))
            return  # its state after a failed allocation is not to be trusted
        except GraphLakeError as exc:
            _send_or_exit(conn, ("error", _picklable(exc)))
        except Exception as exc:
            if _out_of_memory(exc):
                _send_or_exit(conn, ("memory", None))
                return  # as after a MemoryError
            _send_or_exit(conn, ("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


def _out_of_memory(exc: Exception) -> bool:
    """A failed allocation under the limit that surfaced as another error: a thread whose
    stack did not fit (`RuntimeError: can't start new thread`), or DuckDB's
    `OutOfMemoryException` outside a query's own error handling (a connection that could
    not be made, seen with a worker's headroom of 129 MB)."""
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return True
    return type(exc).__name__ == "OutOfMemoryException"


def _send_or_exit(conn: Connection, message: tuple) -> None:
    try:
        conn.send(message)
    except Exception:
        os._exit(1)


def _picklable(exc: GraphLakeError) -> Exception:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return QueryError(str(exc))


def _function(ref: str) -> Callable[..., Any]:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def _vm_size() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * _PAGE


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


if __name__ == "__main__":  # a worker: FD MEMORY_MB WARM
    _serve(Connection(int(sys.argv[1])), int(sys.argv[2]), sys.argv[3] or None)
