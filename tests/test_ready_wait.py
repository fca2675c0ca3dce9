"""The test servers' readiness wait (issue 33): generous by default, failing early only when the
server process has died."""

import socket
import subprocess
import sys

import pytest

from tests.conftest import READY_TIMEOUT, free_port, wait_for_port


def test_the_default_wait_is_generous_and_a_setting():
    # REDLINE_TEST_READY_TIMEOUT (180 s unless set): never the old fixed 20 s.
    assert READY_TIMEOUT >= 120


def test_a_dead_server_fails_the_wait_at_once_with_its_exit_code_and_log(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("Error: That port is already in use.\n")
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait()
    with pytest.raises(RuntimeError, match="exited with 3 before it listened.*already in use"):
        wait_for_port(free_port(), timeout=3600, process=proc, log=log)


def test_a_listening_server_ends_the_wait():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            wait_for_port(sock.getsockname()[1], process=proc)
        finally:
            proc.kill()
            proc.wait()
