"""CPU seconds of every child process of this one, sampled from /proc (Linux).

`getrusage(RUSAGE_CHILDREN)` gives only the sum over reaped children; to show what each
worker process spent, a thread reads /proc/<pid>/stat of every child every `every_s`
while a run goes on and keeps the last reading per process. A process's CPU after the
last sample before it exits is missed (at most `every_s` of it); the exact total of all
children still comes from getrusage, and the report prints both.
"""

from __future__ import annotations

import glob
import os
import threading
import time
from dataclasses import dataclass, field

_TICK = os.sysconf("SC_CLK_TCK")
_KINDS = ("worker", "resource tracker")


@dataclass
class ChildCpu:
    pid: int
    cmdline: str
    cpu_s: float


@dataclass
class ChildCpuSampler:
    every_s: float = 0.02
    children: dict[int, ChildCpu] = field(default_factory=dict)
    own_cpu_s: float = 0.0  # the sampling thread's own CPU (to subtract from this process)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> ChildCpuSampler:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            time.sleep(self.every_s)
        self._sample()
        self.own_cpu_s = time.thread_time()

    def _sample(self) -> None:
        me = os.getpid()
        for path in glob.glob(f"/proc/{me}/task/*/children"):
            try:
                with open(path) as f:
                    pids = [int(p) for p in f.read().split()]
            except OSError:
                continue
            for pid in pids:
                cpu = _cpu_of(pid)
                if cpu is None:
                    continue
                known = self.children.get(pid)
                if known is None:
                    self.children[pid] = ChildCpu(pid, _cmdline(pid), cpu)
                    continue
                known.cpu_s = max(known.cpu_s, cpu)
                if known.cmdline not in _KINDS:  # seen between fork and exec: look again
                    known.cmdline = _cmdline(pid)


def _cpu_of(pid: int) -> float | None:
    """utime + stime of `pid` in seconds, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # Fields after the command name (which may hold spaces) start after the last ')'.
    rest = stat[stat.rindex(")") + 2 :].split()
    return (int(rest[11]) + int(rest[12])) / _TICK  # fields 14 and 15: utime, stime


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            parts = f.read().split(b"\0")
    except OSError:
        return "?"
    text = " ".join(p.decode(errors="replace") for p in parts if p)
    if "resource_tracker" in text:
        return "resource tracker"
    if "spawn_main" in text or "multiprocessing" in text:
        return "worker"
    return text[:40]
