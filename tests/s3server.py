"""A real S3-compatible server (moto, server mode) on 127.0.0.1 for the test session.

Every test gets its own key prefix (`fresh_uri`), so tests never see each other's
objects. The server runs through `moto_server.py`, which makes moto's conditional PUTs
atomic as real S3's are (moto alone let two concurrent creates of one key both win).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
BUCKET = "graphlake-test"
_SERVER_SCRIPT = Path(__file__).with_name("moto_server.py")


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    bucket: str

    @property
    def options(self) -> dict[str, str]:
        return {
            "endpoint": self.endpoint,
            "allow_http": "true",
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "region": "us-east-1",
        }

    def fresh_uri(self) -> str:
        return f"s3://{self.bucket}/t-{uuid.uuid4().hex}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _wait_until_up(endpoint: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"moto server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.05)
    raise RuntimeError(f"moto server did not answer on {endpoint} within {timeout}s")


def run_s3_server() -> Iterator[S3Server]:
    port = _free_port()
    endpoint = f"http://{HOST}:{port}"
    proc = subprocess.Popen(
        [sys.executable, str(_SERVER_SCRIPT), "-H", HOST, "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_up(endpoint, proc)
        request = urllib.request.Request(f"{endpoint}/{BUCKET}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
        yield S3Server(endpoint, BUCKET)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
