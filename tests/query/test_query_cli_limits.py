"""`graphlake sql` and `graphlake query` stop on time (`--timeout`) and on Ctrl-C: SIGINT
to a real process ends it within a second with one line and exit code 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import graphlake as gl
from tests.cli.helpers import error, run

LONG_SQL = "SELECT count(*) FROM range(100000000000)"
LONG_CYPHER = "UNWIND range(1, 100000) AS x UNWIND range(1, 1000000) AS y RETURN count(*) AS n"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    uri = str(tmp_path_factory.mktemp("cli-limits") / "g")
    gl.Graph.init(uri, "node Person { name: String @key }")
    return uri


@pytest.mark.slow  # over 10 s: outside `make test-fast`
def test_sql_and_query_take_a_timeout(root) -> None:
    for command, text in (("sql", LONG_SQL), ("query", LONG_CYPHER)):
        started = time.monotonic()
        proc = run(command, root, text, "--timeout", "1")
        message = error(proc)
        assert time.monotonic() - started < 30  # start-up included; the query stops at 1 s
        assert "timed out after 1 s" in message and "--timeout" in message, message


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow  # over 10 s: outside `make test-fast`
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("command,text", [("sql", LONG_SQL), ("query", LONG_CYPHER)])
def test_ctrl_c_stops_a_running_query_within_a_second(root, command, text) -> None:
    # Start-up (imports) costs about as much CPU as a trivial command: wait until the
    # process has spent that plus a little, so SIGINT lands while the query runs.
    started = time.monotonic()
    quick = subprocess.run(
        [sys.executable, "-m", "graphlake.cli.app", "sql", root, "SELECT 1"],
        capture_output=True,
        timeout=120,
    )
    assert quick.returncode == 0, quick.stderr
    startup_wall = time.monotonic() - started
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphlake.cli.app", command, root, text, "--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(startup_wall + 1.0)
        assert proc.poll() is None, proc.communicate()
        spent = _cpu_s(proc.pid)
        time.sleep(0.3)
        assert _cpu_s(proc.pid) > spent, "the query is not running"
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err)
    assert took < 1.0, took
    assert err.decode().strip() == "interrupted"
    assert out == b""
