"""A real castd and cast-emulator per test, each in its own temp dir, killed in teardown."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

BIN_DIR = Path(os.environ.get("CASTD_BIN_DIR", "/work/main/.build/debug"))
TIME_SCALE = float(os.environ.get("CASTD_TEST_TIME_SCALE", "1") or "1")
DEVICE = "Test TV"


def scaled(seconds: float) -> float:
    """A deadline for something that should happen, scaled for slow (sanitized) builds."""
    return seconds * TIME_SCALE


def wait_for(what: str, check: Callable[[], Any], timeout: float, interval: float = 0.02) -> Any:
    """Polls ``check`` until it returns something truthy; fails the test after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


class Castd:
    """One castd with one emulated device ("Test TV"), for one test."""

    def __init__(self, directory: Path, emulator_args: list[str]) -> None:
        self.dir = directory
        self.socket = str(directory / "castd.sock")
        self.emulator_args = emulator_args
        self.processes: list[subprocess.Popen[bytes]] = []
        self.castd: subprocess.Popen[bytes] | None = None
        self.port = 0

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.dir / f"{name}.log", "wb")
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        self.processes.append(process)
        return process

    def start(self) -> None:
        ready = self.dir / "ready.json"
        emulator = self._spawn(
            "emulator",
            [
                str(BIN_DIR / "cast-emulator"),
                "--name",
                DEVICE,
                "--port",
                "0",
                "--authority",
                str(self.dir / "ca"),
                "--ready-file",
                str(ready),
                *self.emulator_args,
            ],
        )

        def emulator_ready() -> bool:
            if emulator.poll() is not None:
                pytest.fail(f"cast-emulator exited with {emulator.returncode}: {self.log('emulator')}")
            if not ready.exists():
                return False
            try:
                self.port = int(json.loads(ready.read_text())["port"])
            except (ValueError, KeyError):
                return False  # being written
            return True

        wait_for("cast-emulator's ready file", emulator_ready, scaled(10))
        self.castd = self._spawn(
            "castd",
            [
                str(BIN_DIR / "castd"),
                "--mode",
                "user",
                "--socket",
                self.socket,
                "--state-directory",
                "",
                "--no-discovery",
                "--device",
                f"{DEVICE}=127.0.0.1:{self.port}",
                "--trust-root",
                str(self.dir / "ca" / "root.pem"),
            ],
        )

        def castd_ready() -> bool:
            assert self.castd is not None
            if self.castd.poll() is not None:
                pytest.fail(f"castd exited with {self.castd.returncode}: {self.log('castd')}")
            if not os.path.exists(self.socket):
                return False
            return self.castc("devices", check=False).returncode == 0

        wait_for("castd to answer ListDevices", castd_ready, scaled(10))

    def log(self, name: str) -> str:
        path = self.dir / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def castc(self, *args: str, check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
        """Runs castc against this castd (an independent client)."""
        result = subprocess.run(
            [str(BIN_DIR / "castc"), "--socket", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=timeout or scaled(30),
        )
        if check and result.returncode != 0:
            pytest.fail(f"castc {' '.join(args)} exited with {result.returncode}: {result.stderr}")
        return result

    def status_json(self) -> dict[str, Any]:
        """castc status --json, parsed: what castd says, independently of the client under test."""
        return dict(json.loads(self.castc("status", "--json").stdout))

    def media(self) -> dict[str, Any]:
        media = self.status_json().get("media", [])
        return dict(media[0]) if media else {}

    def load(self, url: str = "http://127.0.0.1/x.mp4", title: str = "hi") -> None:
        self.castc("--device", DEVICE, "load", url, "--title", title)

    def kill_castd(self) -> None:
        assert self.castd is not None
        self.castd.send_signal(signal.SIGKILL)
        self.castd.wait(timeout=scaled(10))

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in reversed(self.processes):
            try:
                process.wait(timeout=scaled(5))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def make_castd() -> Iterator[Callable[..., Castd]]:
    """Starts castd and an emulated device: ``make_castd(reply_delay=3000)``."""
    started: list[Castd] = []
    directories: list[str] = []

    def make(*, reply_delay: int | None = None, queue_window: int | None = None) -> Castd:
        # A short directory: a Unix socket's path is limited to 107 bytes.
        directory = tempfile.mkdtemp(prefix="castd-py-", dir="/tmp")
        directories.append(directory)
        args: list[str] = []
        if reply_delay is not None:
            args += ["--reply-delay", str(reply_delay)]
        if queue_window is not None:
            args += ["--queue-window", str(queue_window)]
        castd = Castd(Path(directory), args)
        started.append(castd)
        castd.start()
        return castd

    try:
        yield make
    finally:
        for castd in started:
            castd.stop()
        for directory in directories:
            shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def castd_env(make_castd: Callable[..., Castd]) -> Castd:
    return make_castd()


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    directory = tempfile.mkdtemp(prefix="castd-py-", dir="/tmp")
    try:
        yield Path(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


PYTHON = sys.executable
