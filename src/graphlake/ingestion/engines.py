"""Where workers run: spawned processes (default) or Ray tasks.

Both engines run `graphlake.ingestion.worker.run_slice` and hand back `WorkerReport`s as
workers finish; the orchestrator polls them (`poll`) and refreshes progress in between.

* `process`: one spawned process per worker (lance is not fork-safe, so never fork).
  Each worker has its own single-process `ProcessPoolExecutor`: when a process dies
  abruptly, CPython marks its whole pool broken and terminates the pool's other
  processes, which would kill healthy workers too.
* `ray`: the optional extra `graphlake[ray]`, imported only here and only when chosen.
  Without an `address` and without a running Ray, a local Ray is started that listens
  on 127.0.0.1 only (see `start_local_ray`) and is shut down again afterwards.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import ipaddress
import logging
import multiprocessing
import os
import threading
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol

from graphlake.ingestion.errors import ErrorInfo, IngestError
from graphlake.ingestion.guard import ADVICE, MainGuardError, clear_marker, marker_left
from graphlake.ingestion.worker import WorkerReport, WorkerTask, run_slice

ENGINES = ("process", "ray")
RAY_MISSING = "engine='ray' needs Ray: pip install 'graphlake[ray]'"
# Ray replaces 127.0.0.1 with the machine's address and listens on every interface
# unless this is "0" (measured with Ray 2.60; see the substrate notes).
_RAY_LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
_RAY_DEFAULT_ENV = {"RAY_AUTH_MODE": "disabled"}
_RAY_CLUSTER_FLAG = "ENABLE_RAY_CLUSTER"  # ray._private.ray_constants, read at import


class Engine(Protocol):
    def start(self, tasks: list[WorkerTask]) -> None: ...

    def poll(self, timeout: float) -> list[WorkerReport]: ...

    def close(self) -> None: ...


def check_engine(engine: str) -> None:
    """Refuse an unknown engine, or Ray when it is not installed (without importing it)."""
    if engine not in ENGINES:
        raise IngestError(f"unknown ingest engine {engine!r} (use one of: {', '.join(ENGINES)})")
    if engine == "ray" and importlib.util.find_spec("ray") is None:
        raise IngestError(RAY_MISSING)


def make_engine(engine: str, workers: int, ray_address: str | None = None) -> Engine:
    check_engine(engine)
    if engine == "ray":
        return RayEngine(workers, ray_address)
    return ProcessEngine()


def _crashed(task: WorkerTask, why: str) -> WorkerReport:
    err = IngestError(
        f"ingest worker {task.worker} ({task.branch}) did not finish: {why}; "
        f"rerun with run_id={task.run_id!r} to resume"
    )
    return WorkerReport(task.worker, task.phase, task.branch, task.size, error=ErrorInfo.of(err))


# --- processes --------------------------------------------------------------------------


class ProcessEngine:
    """Workers in spawned processes. A process that finished its task stays for the next
    one (JSONL's edge phase reuses the node phase's processes instead of paying start-up
    again); `close` lets idle processes exit in the background."""

    def __init__(self) -> None:
        self._idle: list[ProcessPoolExecutor] = []
        self._busy: dict[Future[WorkerReport], tuple[WorkerTask, ProcessPoolExecutor]] = {}

    def start(self, tasks: list[WorkerTask]) -> None:
        clear_marker()  # left by an earlier run of this process
        ctx = multiprocessing.get_context("spawn")
        for task in tasks:
            pool = (
                self._idle.pop()
                if self._idle
                else ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=ctx,
                    initializer=exit_with_parent,
                    initargs=(os.getpid(),),
                )
            )
            self._busy[pool.submit(run_slice, task)] = (task, pool)

    def poll(self, timeout: float) -> list[WorkerReport]:
        if not self._busy:
            return []
        done, _ = wait(list(self._busy), timeout=timeout, return_when=FIRST_COMPLETED)
        out = []
        for fut in done:
            task, pool = self._busy.pop(fut)
            try:
                out.append(fut.result())
            except Exception as exc:  # a dead process (BrokenProcessPool)
                if marker_left():  # it died re-running the caller's unguarded script
                    out.append(
                        WorkerReport(
                            task.worker,
                            task.phase,
                            task.branch,
                            task.size,
                            error=ErrorInfo.of(MainGuardError(ADVICE)),
                        )
                    )
                else:
                    out.append(_crashed(task, f"its process died ({type(exc).__name__}: {exc})"))
                pool.shutdown(wait=False)
            else:
                self._idle.append(pool)
        return out

    def close(self) -> None:
        # Idle processes have reported everything; what is left is their interpreter's
        # exit (~0.4 CPU-s each: freeing caches and buffers), which need not delay the
        # caller. Processes still working (after an error elsewhere) are waited for, so
        # none writes after `ingest` has returned or raised.
        for pool in self._idle:
            pool.shutdown(wait=False)
        for _, pool in self._busy.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._idle.clear()
        self._busy.clear()
        clear_marker()


def exit_with_parent(parent: int, every_s: float = 1.0) -> None:
    """Worker initializer: exit when the orchestrator is gone (killed or crashed).

    A pool's worker otherwise waits for work forever once its parent dies, or finishes
    a slice nobody will merge. Exiting at once is a crash like any other: the slice's
    last commit stands, and a rerun with the same run id resumes after it.
    """

    def watch() -> None:
        while True:
            time.sleep(every_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="graphlake-parent-watch", daemon=True).start()


# --- Ray --------------------------------------------------------------------------------


def import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise IngestError(RAY_MISSING) from None


class LocalRay:
    """A local Ray this process started; `stop()` shuts it down and undoes the settings."""

    def __init__(self, ray: Any, saved_env: dict[str, str | None], saved_flag: Any) -> None:
        self._ray = ray
        self._saved_env = saved_env
        self._saved_flag = saved_flag

    def stop(self) -> None:
        self._ray.shutdown()
        _restore(self._saved_env, self._saved_flag)


def start_local_ray(num_cpus: int, temp_dir: str | None = None) -> LocalRay:
    """Start a local Ray that listens on 127.0.0.1 only, without a dashboard.

    Ray swaps 127.0.0.1 for the machine's address (and its daemons then listen on every
    interface) unless clusters are disabled: `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` in the
    environment of Ray's processes, and the flag Ray derived from it when it was
    imported (Ray may have been imported before this call). The node address is checked
    afterwards. `temp_dir` defaults to $RAY_TMPDIR when set.
    """
    saved_env = {k: os.environ.get(k) for k in (*_RAY_LOOPBACK_ENV, *_RAY_DEFAULT_ENV)}
    os.environ.update(_RAY_LOOPBACK_ENV)
    for key, value in _RAY_DEFAULT_ENV.items():
        os.environ.setdefault(key, value)
    ray = import_ray()
    constants = importlib.import_module("ray._private.ray_constants")
    saved_flag = getattr(constants, _RAY_CLUSTER_FLAG, None)
    setattr(constants, _RAY_CLUSTER_FLAG, False)
    kwargs: dict[str, Any] = {
        "num_cpus": num_cpus,
        "include_dashboard": False,
        "_node_ip_address": "127.0.0.1",
        "log_to_driver": False,
        "logging_level": logging.WARNING,
    }
    temp_dir = temp_dir or os.environ.get("RAY_TMPDIR")
    if temp_dir:
        kwargs["_temp_dir"] = temp_dir
    try:
        with warnings.catch_warnings():
            # Ray starts its daemons with fork+exec; lance's fork warning is about forked
            # children that go on using lance.
            warnings.filterwarnings("ignore", message="lance is not fork-safe")
            ray.init(**kwargs)
    except Exception:
        _restore(saved_env, saved_flag)
        raise
    local = LocalRay(ray, saved_env, saved_flag)
    node_ip = ray.util.get_node_ip_address()
    if not ipaddress.ip_address(node_ip).is_loopback:
        local.stop()
        raise IngestError(
            f"the local Ray came up on {node_ip}, not on 127.0.0.1; refusing "
            f"to run workers on a Ray that listens beyond loopback"
        )
    return local


def _restore(saved_env: dict[str, str | None], saved_flag: Any) -> None:
    for key, value in saved_env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    if saved_flag is not None:
        constants = importlib.import_module("ray._private.ray_constants")
        setattr(constants, _RAY_CLUSTER_FLAG, saved_flag)


class RayEngine:
    """Ray tasks; starts (and later stops) a loopback-only local Ray when none is running."""

    def __init__(self, workers: int, address: str | None = None) -> None:
        self._ray = import_ray()
        self._workers = workers
        self._address = address
        self._connected = False
        self._local: LocalRay | None = None
        self._pending: dict[Any, WorkerTask] = {}

    def _ensure_ray(self) -> None:
        ray = self._ray
        if ray.is_initialized():
            return
        if self._address is not None:
            ray.init(address=self._address, log_to_driver=False, logging_level=logging.WARNING)
            self._connected = True
        else:
            self._local = start_local_ray(max(self._workers, os.cpu_count() or 1))

    def start(self, tasks: list[WorkerTask]) -> None:
        self._ensure_ray()
        remote = self._ray.remote(num_cpus=1, max_retries=0)(run_slice)
        for task in tasks:
            self._pending[remote.remote(task)] = task

    def poll(self, timeout: float) -> list[WorkerReport]:
        if not self._pending:
            return []
        ready, _ = self._ray.wait(
            list(self._pending), num_returns=len(self._pending), timeout=timeout
        )
        out = []
        for ref in ready:
            task = self._pending.pop(ref)
            try:
                out.append(self._ray.get(ref))
            except Exception as exc:  # a crashed Ray worker or task
                out.append(_crashed(task, f"its Ray task failed ({type(exc).__name__}: {exc})"))
        return out

    def close(self) -> None:
        for ref in self._pending:
            with contextlib.suppress(Exception):
                self._ray.cancel(ref, force=True)
        self._pending.clear()
        if self._local is not None:
            self._local.stop()
            self._local = None
        elif self._connected:
            self._ray.shutdown()  # disconnects; the cluster keeps running
            self._connected = False
