"""The synchronous wrapper and ``python3 -m castd``, against a real castd."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

import castd
from castd import cast_pb2 as pb
from conftest import DEVICE, PYTHON, Castd, scaled, wait_for


def test_sync_wrapper(castd_env: Castd) -> None:
    castd_env.load()
    with castd.connect_sync(castd_env.socket) as c:
        assert c.socket_path == castd_env.socket
        assert [d.friendly_name for d in c.list_devices().devices] == [DEVICE]
        paused = c.pause(device=DEVICE)
        assert paused.player_state == pb.PLAYER_STATE_PAUSED
        assert castd_env.media()["playerState"] == "PLAYER_STATE_PAUSED"
        c.seek(device=DEVICE, position=12)
        assert castd_env.media()["currentTime"] == pytest.approx(12, abs=0.5)
        assert c.set_volume(DEVICE, 0.0).level == 0.0
        # A method not spelled out in SyncClient, through attribute lookup.
        assert c.get_log_filter().known_subsystems

        with pytest.raises(castd.CastdError) as error:
            c.play(device="No Such TV")
        assert error.value.code == castd.Code.NOT_FOUND

        with c.watch() as events:
            first = next(events)
            assert first.WhichOneof("kind") == "snapshot"
            castd_env.castc("--device", DEVICE, "play")
            for event in events:
                assert event.sequence > first.sequence
                if event.WhichOneof("kind") == "media" and event.media.player_state == pb.PLAYER_STATE_PLAYING:
                    break
        assert c.client._connection.open_call_ids == []
    assert c.client.closed
    assert not any(t.name == "castd-sync" for t in threading.enumerate())


def test_sync_connect_failure(tmp_path: Path) -> None:
    with pytest.raises(castd.CastdError) as error:
        castd.connect_sync(str(tmp_path / "nope.sock"))
    assert error.value.code == castd.Code.UNAVAILABLE
    assert not any(t.name == "castd-sync" for t in threading.enumerate())


def run_cli(*args: str, socket: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [PYTHON, "-m", "castd", *args]
    if socket is not None:
        command += ["--socket", socket]
    environment = dict(os.environ)
    environment.update(env or {})
    return subprocess.run(command, capture_output=True, text=True, timeout=scaled(30), env=environment)


def test_cli_status_and_devices(castd_env: Castd) -> None:
    castd_env.load(title="Film")
    result = run_cli("status", socket=castd_env.socket)
    assert result.returncode == 0, result.stderr
    assert "connected to Test TV" in result.stdout
    assert "Film" in result.stdout and "playing" in result.stdout

    result = run_cli("--json", "status", socket=castd_env.socket)
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["daemon"]["socketPath"] == castd_env.socket
    assert status["media"][0]["media"]["metadata"]["title"] == "Film"

    result = run_cli("devices", socket=castd_env.socket)
    assert result.returncode == 0 and result.stdout.startswith(f"{DEVICE} (127.0.0.1:{castd_env.port})")
    result = run_cli("devices", "--json", env={"CASTD_SOCKET": castd_env.socket})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["devices"][0]["friendlyName"] == DEVICE


def test_cli_media_commands(castd_env: Castd) -> None:
    castd_env.load()
    result = run_cli("pause", "--device", DEVICE, socket=castd_env.socket)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("paused")
    assert castd_env.media()["playerState"] == "PLAYER_STATE_PAUSED"

    result = run_cli("--json", "play", socket=castd_env.socket)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["playerState"] == "PLAYER_STATE_PLAYING"
    assert castd_env.media()["playerState"] == "PLAYER_STATE_PLAYING"

    run_cli("pause", socket=castd_env.socket)
    assert run_cli("seek", "40", socket=castd_env.socket).returncode == 0
    assert castd_env.media()["currentTime"] == pytest.approx(40, abs=0.5)
    assert run_cli("seek", "-15", socket=castd_env.socket).returncode == 0
    assert castd_env.media()["currentTime"] == pytest.approx(25, abs=0.5)

    result = run_cli("volume", "30%", socket=castd_env.socket)
    assert result.returncode == 0 and "30%" in result.stdout
    assert castd_env.status_json()["devices"][0]["receiver"]["volume"]["level"] == pytest.approx(0.3)
    assert run_cli("volume", "0", socket=castd_env.socket).returncode == 0
    assert "level" not in castd_env.status_json()["devices"][0]["receiver"]["volume"]  # 0.0

    assert run_cli("stop", socket=castd_env.socket).returncode == 0
    assert castd_env.media().get("playerState", "PLAYER_STATE_IDLE") == "PLAYER_STATE_IDLE"


def test_cli_next_previous(castd_env: Castd) -> None:
    castd_env.castc("queue", "load", "http://127.0.0.1/a.mp3", "http://127.0.0.1/b.mp3")
    result = run_cli("--json", "next", socket=castd_env.socket)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["media"]["contentId"] == "http://127.0.0.1/b.mp3"
    assert castd_env.media()["media"]["contentId"] == "http://127.0.0.1/b.mp3"
    result = run_cli("previous", socket=castd_env.socket)
    assert result.returncode == 0, result.stderr
    assert castd_env.media()["media"]["contentId"] == "http://127.0.0.1/a.mp3"


def test_cli_exit_codes(castd_env: Castd, short_tmp: Path) -> None:
    result = run_cli("pause", "--device", "No Such TV", socket=castd_env.socket)
    assert result.returncode == int(castd.Code.NOT_FOUND) == 5
    assert result.stderr.startswith("castd: NOT_FOUND: ") and "No Such TV" in result.stderr
    assert result.stdout == ""

    result = run_cli("status", socket=str(short_tmp / "none.sock"))
    assert result.returncode == 14
    assert "cannot connect to castd at" in result.stderr and "is castd running?" in result.stderr

    for bad in (["frobnicate"], [], ["seek"], ["seek", "soon"], ["volume", "150%"], ["status", "--bogus"]):
        result = run_cli(*bad, socket=castd_env.socket)
        assert result.returncode == 64, (bad, result.stderr)
        assert "usage:" in result.stderr


def _watch_process(socket: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PYTHON, "-m", "castd", "watch", "--socket", socket, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline() if process.stdout else ""))
    reader.start()
    reader.join(timeout)
    if not line:
        pytest.fail(f"no line from python -m castd watch within {timeout} s")
    return line[0]


def test_cli_watch_json(castd_env: Castd) -> None:
    castd_env.load()
    process = _watch_process(castd_env.socket, "--json")
    castc = subprocess.Popen(
        [str(Path(os.environ.get("CASTD_BIN_DIR", "/work/main/.build/debug")) / "castc"), "--socket", castd_env.socket, "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        first = json.loads(_read_line(process, scaled(10)))
        assert "snapshot" in first and int(first["sequence"]) > 0
        theirs = json.loads(_read_line(castc, scaled(10)))
        # The same shape as castc watch --json.
        assert set(first) == set(theirs)
        assert set(first["snapshot"]) == set(theirs["snapshot"])
        assert first["snapshot"]["media"][0]["media"] == theirs["snapshot"]["media"][0]["media"]

        castd_env.castc("--device", DEVICE, "pause")

        def paused_line() -> Any:
            event = json.loads(_read_line(process, scaled(10)))
            assert int(event["sequence"]) > int(first["sequence"])
            return event.get("media", {}).get("playerState") == "PLAYER_STATE_PAUSED"

        wait_for("a PAUSED media event", paused_line, scaled(10), interval=0)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=scaled(10)) == 0
        assert process.stderr is not None and "Traceback" not in process.stderr.read()
    finally:
        for p in (process, castc):
            if p.poll() is None:
                p.kill()
            p.wait()
            for stream in (p.stdout, p.stderr):
                if stream is not None:
                    stream.close()


def test_cli_watch_ends_with_unavailable_when_castd_dies(castd_env: Castd) -> None:
    process = _watch_process(castd_env.socket)
    try:
        assert _read_line(process, scaled(10)).startswith("#")
        castd_env.kill_castd()
        assert process.wait(timeout=scaled(10)) == 14
        assert process.stderr is not None
        assert "castd: UNAVAILABLE: castd closed the connection" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
