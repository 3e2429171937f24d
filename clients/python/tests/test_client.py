"""The asyncio client against a real castd and cast-emulator."""

from __future__ import annotations

import asyncio
import gc
import inspect
import re
import time
import typing
from typing import Any

import pytest
from google.protobuf import json_format

import castd
from castd import cast_pb2 as pb
from castd import rpc_pb2
from conftest import DEVICE, Castd, scaled, wait_for


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _player_state(media: dict[str, Any]) -> str:
    return str(media.get("playerState", "PLAYER_STATE_UNKNOWN"))


# -- the API covers the service ---------------------------------------------------------------------


def test_every_rpc_has_a_typed_method() -> None:
    service = pb.DESCRIPTOR.services_by_name["Cast"]
    assert len(service.methods) >= 30
    for method in service.methods:
        name = _snake(method.name)
        function = getattr(castd.Client, name, None)
        assert function is not None, f"castd.Client has no method {name} for rpc {method.name}"
        hints = typing.get_type_hints(function)
        request_type = getattr(pb, method.input_type.name)
        response_type = getattr(pb, method.output_type.name)
        assert request_type in typing.get_args(hints["request"]), f"{name}: request is not {request_type}"
        parameters = list(inspect.signature(function).parameters.values())
        assert parameters[1].name == "request" and parameters[1].default is None, name
        if method.server_streaming:
            assert not inspect.iscoroutinefunction(function), f"{name} should return a stream"
            assert typing.get_origin(hints["return"]) is castd.CallStream, name
            assert typing.get_args(hints["return"]) == (response_type,), name
        else:
            assert inspect.iscoroutinefunction(function), f"{name} should be async"
            assert hints["return"] is response_type, f"{name}: returns {hints['return']}, not {response_type}"
        assert "timeout" in inspect.signature(function).parameters, name


def test_code_is_grpcs() -> None:
    for value in rpc_pb2.Code.DESCRIPTOR.values:
        assert castd.Code[value.name] == value.number
    assert len(castd.Code) == len(rpc_pb2.Code.DESCRIPTOR.values)
    assert int(castd.Code.UNAVAILABLE) == 14 and int(castd.Code.UNAUTHENTICATED) == 16


def test_error_from_status() -> None:
    status = rpc_pb2.Status(
        code=rpc_pb2.NOT_FOUND,
        message="no device named X",
        reason="DEVICE_ERROR",
        device_error=rpc_pb2.DeviceError(type="LOAD_FAILED", reason="INVALID_PARAMS", detail="d"),
    )
    error = castd.CastdError.from_status(status)
    assert error.code is castd.Code.NOT_FOUND
    assert str(error) == "no device named X" == error.message
    assert error.reason == "DEVICE_ERROR"
    assert error.device_error is not None
    assert (error.device_error.type, error.device_error.reason, error.device_error.detail) == (
        "LOAD_FAILED",
        "INVALID_PARAMS",
        "d",
    )
    assert castd.CastdError.from_status(rpc_pb2.Status(code=rpc_pb2.ABORTED, message="m")).device_error is None


def test_request_or_fields_not_both() -> None:
    from castd._client import _request

    assert _request(pb.SeekRequest, None, {"device": "TV", "position": 30}).position == 30
    with pytest.raises(TypeError, match="not both"):
        _request(pb.MediaRequest, pb.MediaRequest(), {"device": "TV"})
    with pytest.raises(TypeError, match="no_such_field"):
        _request(pb.MediaRequest, None, {"no_such_field": 1})


# -- typed methods, effects checked with castc ------------------------------------------------------


async def test_devices_and_status(castd_env: Castd) -> None:
    async with castd.connect(castd_env.socket) as c:
        assert c.socket_path == castd_env.socket
        devices = await c.list_devices()
        assert [d.friendly_name for d in devices.devices] == [DEVICE]
        assert devices.devices[0].port == castd_env.port
        status = await c.get_status()
        assert status.daemon.socket_path == castd_env.socket
        assert status.daemon.mode == "user"
        assert [d.friendly_name for d in status.devices] == [DEVICE]
        device = await c.get_device(device=DEVICE.lower())
        assert device.friendly_name == DEVICE


async def test_load_pause_play_stop(castd_env: Castd) -> None:
    async with castd.connect(castd_env.socket) as c:
        loaded = await c.load_url("http://127.0.0.1/movie.mp4", device=DEVICE, title="Movie", content_type="video/mp4")
        assert loaded.media.metadata.title == "Movie"
        media = castd_env.media()
        assert media["media"]["contentId"] == "http://127.0.0.1/movie.mp4"
        assert media["media"]["metadata"]["title"] == "Movie"
        assert _player_state(media) == "PLAYER_STATE_PLAYING"

        paused = await c.pause(device=DEVICE)
        assert paused.player_state == pb.PLAYER_STATE_PAUSED
        assert _player_state(castd_env.media()) == "PLAYER_STATE_PAUSED"

        playing = await c.play(pb.MediaRequest(device=DEVICE))
        assert playing.player_state == pb.PLAYER_STATE_PLAYING
        assert _player_state(castd_env.media()) == "PLAYER_STATE_PLAYING"

        stopped = await c.stop(device=DEVICE)
        assert stopped.player_state == pb.PLAYER_STATE_IDLE
        assert _player_state(castd_env.media()) in ("PLAYER_STATE_IDLE", "PLAYER_STATE_UNKNOWN")


async def test_load_request_message(castd_env: Castd) -> None:
    async with castd.connect(castd_env.socket) as c:
        request = pb.LoadRequest(
            device=DEVICE,
            media=pb.MediaInformation(content_id="http://127.0.0.1/a.mp3", metadata=pb.MediaMetadata(title="Song")),
            autoplay=False,
        )
        status = await c.load(request)
        assert status.media.metadata.title == "Song"
        media = castd_env.media()
        assert media["media"]["metadata"]["title"] == "Song"
        assert _player_state(media) == "PLAYER_STATE_PAUSED"  # autoplay false was sent


async def test_seek(castd_env: Castd) -> None:
    castd_env.load()
    async with castd.connect(castd_env.socket) as c:
        await c.pause(device=DEVICE)
        status = await c.seek(device=DEVICE, position=30)
        assert status.current_time == pytest.approx(30, abs=0.5)
        assert castd_env.media()["currentTime"] == pytest.approx(30, abs=0.5)
        status = await c.seek(pb.SeekRequest(device=DEVICE, position=-10, relative=True))
        assert castd_env.media()["currentTime"] == pytest.approx(20, abs=0.5)


async def test_set_volume_sends_zero(castd_env: Castd) -> None:
    castd_env.load()

    def device_level() -> float:
        volume = castd_env.status_json()["devices"][0]["receiver"]["volume"]
        return float(volume.get("level", 0.0))  # proto3 JSON leaves 0.0 out

    async with castd.connect(castd_env.socket) as c:
        volume = await c.set_volume(DEVICE, 0.4)
        assert volume.level == pytest.approx(0.4)
        assert device_level() == pytest.approx(0.4)
        volume = await c.set_volume(device=DEVICE, level=0.0)
        assert volume.level == 0.0
        assert device_level() == 0.0
        await c.set_volume(pb.SetVolumeRequest(device=DEVICE, level=0.7))
        assert device_level() == pytest.approx(0.7)
        muted = await c.set_volume(device=DEVICE, muted=True)
        assert muted.muted and muted.level == pytest.approx(0.7)


async def test_next_and_previous(castd_env: Castd) -> None:
    castd_env.castc(
        "--device", DEVICE, "queue", "load", "http://127.0.0.1/a.mp3", "http://127.0.0.1/b.mp3", "http://127.0.0.1/c.mp3"
    )

    def current_content() -> str:
        media = castd_env.media()
        current = media.get("currentItemId")
        for item in media.get("items", []):
            if item.get("itemId") == current:
                return str(item["media"]["contentId"])
        return str(media.get("media", {}).get("contentId", ""))

    assert current_content() == "http://127.0.0.1/a.mp3"
    async with castd.connect(castd_env.socket) as c:
        status = await c.next(DEVICE)
        assert status.media.content_id == "http://127.0.0.1/b.mp3"
        assert current_content() == "http://127.0.0.1/b.mp3"
        await c.next()
        assert current_content() == "http://127.0.0.1/c.mp3"
        status = await c.previous(device=DEVICE)
        assert status.media.content_id == "http://127.0.0.1/b.mp3"
        assert current_content() == "http://127.0.0.1/b.mp3"
        queue = await c.get_queue(device=DEVICE)
        assert [i.media.content_id for i in queue.items] == [
            "http://127.0.0.1/a.mp3",
            "http://127.0.0.1/b.mp3",
            "http://127.0.0.1/c.mp3",
        ]


async def test_generic_calls(castd_env: Castd) -> None:
    async with castd.connect(castd_env.socket) as c:
        device = await c.unary("GetDevice", pb.GetDeviceRequest(device=DEVICE), pb.Device)
        assert device.friendly_name == DEVICE and device.port == castd_env.port
        response = await c.unary("/castd.v1.Cast/ListDevices", pb.ListDevicesRequest(), pb.ListDevicesResponse)
        assert [d.friendly_name for d in response.devices] == [DEVICE]
        log_filter = await c.get_log_filter()
        assert log_filter.known_subsystems

        with pytest.raises(castd.CastdError) as error:
            await c.unary("/castd.v1.Cast/NoSuchMethod", pb.GetStatusRequest(), pb.StatusResponse)
        assert error.value.code == castd.Code.UNIMPLEMENTED

        with pytest.raises(castd.CastdError) as error:
            await c.unary("Watch", pb.WatchRequest(), pb.Event)
        assert error.value.code == castd.Code.INVALID_ARGUMENT and "streaming" in error.value.message

        stream = c.server_stream("StreamLogs", pb.StreamLogsRequest(recent=5), pb.LogRecord)
        records = [record async for record in stream]
        assert 0 < len(records) <= 5
        assert all(r.sequence > 0 for r in records)

        # The connection is still good after all that.
        assert (await c.get_status()).daemon.socket_path == castd_env.socket


# -- errors -----------------------------------------------------------------------------------------


async def test_not_found(castd_env: Castd) -> None:
    async with castd.connect(castd_env.socket) as c:
        with pytest.raises(castd.CastdError) as error:
            await c.pause(device="No Such TV")
        assert error.value.code == castd.Code.NOT_FOUND
        assert "No Such TV" in str(error.value)
        assert str(error.value) == error.value.message


async def test_invalid_argument(castd_env: Castd) -> None:
    castd_env.load()
    async with castd.connect(castd_env.socket) as c:
        with pytest.raises(castd.CastdError) as error:
            await c.set_playback_rate(device=DEVICE, rate=9.0)
        assert error.value.code == castd.Code.INVALID_ARGUMENT
        assert error.value.message


async def test_deadline_exceeded(make_castd: Any) -> None:
    env = make_castd(reply_delay=3000)
    async with castd.connect(env.socket) as c:
        started = time.monotonic()
        with pytest.raises(castd.CastdError) as error:
            await c.start_session(device=DEVICE, timeout=0.3)
        elapsed = time.monotonic() - started
        assert error.value.code == castd.Code.DEADLINE_EXCEEDED
        assert elapsed < 0.3 + scaled(1.5), f"the deadline was enforced after {elapsed:.2f} s"
        assert c._connection.open_call_ids == []  # forgotten here, and castd was told
        # The connection carries on.
        assert [d.friendly_name for d in (await c.list_devices()).devices] == [DEVICE]
        with pytest.raises(castd.CastdError) as error:
            await c.get_status(timeout=0)
        assert error.value.code == castd.Code.DEADLINE_EXCEEDED

        # A stream's deadline too.
        with pytest.raises(castd.CastdError) as error:
            async for _ in c.watch(timeout=0.3):
                pass
        assert error.value.code == castd.Code.DEADLINE_EXCEEDED


async def test_unavailable_when_castd_is_not_there(short_tmp: Any) -> None:
    missing = str(short_tmp / "missing.sock")
    with pytest.raises(castd.CastdError) as error:
        async with castd.connect(missing):
            pass
    assert error.value.code == castd.Code.UNAVAILABLE
    assert str(error.value).startswith(f"cannot connect to castd at {missing}: No such file or directory")
    assert "is castd running?" in str(error.value) and "CASTD_SOCKET" in str(error.value)

    # A socket file nobody listens on: ECONNREFUSED.
    import socket as _socket

    stale = str(short_tmp / "stale.sock")
    listener = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    listener.bind(stale)
    listener.close()
    with pytest.raises(castd.CastdError) as error:
        await castd.connect(stale)
    assert error.value.code == castd.Code.UNAVAILABLE
    assert "Connection refused" in str(error.value)


def test_permission_denied_wording() -> None:
    from castd._connection import connect_error

    error = connect_error("/run/castd/castd.sock", PermissionError(13, "Permission denied"))
    assert error.code == castd.Code.PERMISSION_DENIED
    assert error.message == (
        "cannot connect to castd at /run/castd/castd.sock: Permission denied — ask for access to castd's "
        "socket (its group), or use one you own with --socket / CASTD_SOCKET"
    )


def test_socket_path_rules(short_tmp: Any) -> None:
    resolve = castd.resolve_socket_path
    assert resolve("/x.sock", {"CASTD_SOCKET": "/y.sock"}) == "/x.sock"
    assert resolve(None, {"CASTD_SOCKET": "/y.sock", "XDG_RUNTIME_DIR": str(short_tmp)}) == "/y.sock"
    runtime = str(short_tmp)
    expected_user = f"{runtime}/castd/castd.sock"
    import os

    system_exists = os.path.exists("/run/castd/castd.sock")
    user = resolve(None, {"CASTD_SOCKET": "", "XDG_RUNTIME_DIR": runtime})
    assert user == ("/run/castd/castd.sock" if system_exists else expected_user)
    (short_tmp / "castd").mkdir()
    (short_tmp / "castd" / "castd.sock").touch()
    assert resolve(None, {"XDG_RUNTIME_DIR": runtime}) == expected_user
    assert resolve(None, {"XDG_RUNTIME_DIR": ""}) == "/run/castd/castd.sock"
    assert resolve(None, {}) == "/run/castd/castd.sock"


async def test_unavailable_when_castd_dies_during_a_unary_call(make_castd: Any) -> None:
    env = make_castd(reply_delay=3000)
    async with castd.connect(env.socket) as c:
        call = asyncio.create_task(c.start_session(device=DEVICE))

        def castd_is_at_the_device() -> bool:
            link = env.status_json()["devices"][0].get("linkState", "LINK_STATE_DISCONNECTED")
            return bool(link != "LINK_STATE_DISCONNECTED")

        await asyncio.to_thread(wait_for, "castd to contact the device", castd_is_at_the_device, scaled(10))
        assert not call.done()
        env.kill_castd()
        with pytest.raises(castd.CastdError) as error:
            await asyncio.wait_for(call, scaled(5))
        assert error.value.code == castd.Code.UNAVAILABLE
        assert "castd closed the connection" in str(error.value)
        assert "StartSession" in str(error.value)
        # Later calls fail at once, the same way.
        with pytest.raises(castd.CastdError) as error:
            await c.get_status()
        assert error.value.code == castd.Code.UNAVAILABLE


async def test_unavailable_when_castd_dies_during_a_watch(castd_env: Castd) -> None:
    async with castd.connect(castd_env.socket) as c:
        events = c.watch()
        first = await events.__anext__()
        assert first.WhichOneof("kind") == "snapshot"
        castd_env.kill_castd()
        with pytest.raises(castd.CastdError) as error:
            await asyncio.wait_for(events.__anext__(), scaled(5))
        assert error.value.code == castd.Code.UNAVAILABLE
        assert "castd closed the connection" in str(error.value)


# -- streams and multiplexing -----------------------------------------------------------------------


async def test_watch_snapshot_then_deltas(castd_env: Castd) -> None:
    castd_env.load()
    async with castd.connect(castd_env.socket) as c:
        async with c.watch() as events:
            snapshot = await events.__anext__()
            assert snapshot.WhichOneof("kind") == "snapshot"
            assert [d.friendly_name for d in snapshot.snapshot.devices] == [DEVICE]
            assert snapshot.snapshot.media[0].player_state == pb.PLAYER_STATE_PLAYING
            await asyncio.to_thread(castd_env.castc, "--device", DEVICE, "pause")
            async with asyncio.timeout(scaled(10)):
                async for event in events:
                    assert event.sequence > snapshot.sequence
                    if event.WhichOneof("kind") == "media" and event.media.player_state == pb.PLAYER_STATE_PAUSED:
                        break
            call_id = events.call_id
            assert call_id is not None
        assert call_id not in c._connection.open_call_ids


async def test_breaking_out_of_async_for_cancels_the_watch(castd_env: Castd) -> None:
    async with castd.connect(castd_env.socket) as c:
        async for event in c.watch():
            assert event.WhichOneof("kind") == "snapshot"
            assert len(c._connection.open_call_ids) == 1
            break
        gc.collect()
        await asyncio.sleep(0)  # a cancel from another thread would arrive with call_soon_threadsafe
        assert c._connection.open_call_ids == []

        # Cancelling the task iterating a watch cancels the call too.
        got_snapshot = asyncio.Event()

        async def consume() -> None:
            async for _ in c.watch():
                got_snapshot.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(got_snapshot.wait(), scaled(5))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert c._connection.open_call_ids == []
        # castd answers on the same connection afterwards (it got cancels, not garbage).
        assert (await c.get_status()).daemon.socket_path == castd_env.socket


async def test_watch_open_while_unary_calls_run(castd_env: Castd) -> None:
    castd_env.load()
    async with castd.connect(castd_env.socket) as c:
        events = c.watch()
        snapshot = await events.__anext__()
        assert snapshot.WhichOneof("kind") == "snapshot"

        statuses = await asyncio.gather(*(c.get_status() for _ in range(20)))
        assert all(s.daemon.socket_path == castd_env.socket for s in statuses)
        paused = await c.pause(device=DEVICE)
        assert paused.player_state == pb.PLAYER_STATE_PAUSED

        seen_paused = False
        async with asyncio.timeout(scaled(10)):
            async for event in events:
                if event.WhichOneof("kind") == "media" and event.media.player_state == pb.PLAYER_STATE_PAUSED:
                    seen_paused = True
                    break
        assert seen_paused
        # The watch is still open while another unary call runs.
        playing, devices = await asyncio.gather(c.play(device=DEVICE), c.list_devices())
        assert playing.player_state == pb.PLAYER_STATE_PLAYING
        assert devices.devices[0].friendly_name == DEVICE
        async with asyncio.timeout(scaled(10)):
            async for event in events:
                if event.WhichOneof("kind") == "media" and event.media.player_state == pb.PLAYER_STATE_PLAYING:
                    break
        await events.aclose()


async def test_close_fails_open_calls_with_cancelled(castd_env: Castd) -> None:
    c = await castd.connect(castd_env.socket)
    events = c.watch()
    await events.__anext__()
    waiting = asyncio.create_task(events.__anext__())
    await asyncio.sleep(0)
    await c.close()
    with pytest.raises(castd.CastdError) as error:
        await waiting
    assert error.value.code == castd.Code.CANCELLED
    with pytest.raises(castd.CastdError) as error:
        await c.get_status()
    assert error.value.code == castd.Code.CANCELLED
    assert c.closed


async def test_json_matches_castc(castd_env: Castd) -> None:
    castd_env.load()
    async with castd.connect(castd_env.socket) as c:
        status = await c.get_status()
    ours = json_format.MessageToDict(status)
    theirs = castd_env.status_json()
    assert set(ours["devices"][0]) <= set(theirs["devices"][0]) | {"nextRetryAtMs"}
    assert ours["media"][0]["media"] == theirs["media"][0]["media"]
