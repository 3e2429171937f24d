"""Misbehaviour a real castd cannot be made to show, from a tiny server written here."""

from __future__ import annotations

import asyncio
import json
import os
import struct
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

import castd
from castd import cast_pb2 as pb
from castd import rpc_pb2
from castd._cli import visible
from conftest import scaled

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_frame(reader: asyncio.StreamReader) -> rpc_pb2.Frame:
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    frame = rpc_pb2.Frame()
    frame.ParseFromString(await reader.readexactly(length))
    return frame


def encode(frame: rpc_pb2.Frame) -> bytes:
    body = frame.SerializeToString()
    return struct.pack(">I", len(body)) + body


async def serve(path: Path, handler: Handler) -> asyncio.Server:
    return await asyncio.start_unix_server(handler, path=str(path))


async def test_a_frame_over_4_mib_is_refused_before_reading_it(short_tmp: Path) -> None:
    sent_header = asyncio.Event()
    peer_closed = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        start = await read_frame(reader)
        assert start.start.method == "/castd.v1.Cast/GetDevice"
        # Only the length: a client waiting for the body would hang here until the test times out.
        writer.write(struct.pack(">I", castd.MAX_FRAME_BYTES + 1))
        await writer.drain()
        sent_header.set()
        await reader.read()  # until the client closes its end
        peer_closed.set()
        writer.close()

    server = await serve(short_tmp / "big.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "big.sock")) as c:
            with pytest.raises(castd.CastdError) as error:
                await asyncio.wait_for(c.get_device(device="TV"), scaled(5))
            assert error.value.code == castd.Code.RESOURCE_EXHAUSTED
            assert f"{castd.MAX_FRAME_BYTES + 1} bytes" in str(error.value)
            assert "4194304-byte limit" in str(error.value)
            assert sent_header.is_set()
            await asyncio.wait_for(peer_closed.wait(), scaled(5))  # the client failed the connection
            with pytest.raises(castd.CastdError) as later:
                await c.get_status()
            assert later.value.code == castd.Code.RESOURCE_EXHAUSTED


async def test_a_frame_of_exactly_4_mib_is_read(short_tmp: Path) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        start = await read_frame(reader)
        # A Device whose id fills the frame to exactly the limit.
        size = castd.MAX_FRAME_BYTES - 64
        while True:
            message = pb.Device(id="x" * size).SerializeToString()
            frame = rpc_pb2.Frame(call_id=start.call_id, message=message)
            excess = frame.ByteSize() - castd.MAX_FRAME_BYTES
            if excess == 0:
                break
            size -= excess
        writer.write(encode(frame))
        writer.write(encode(rpc_pb2.Frame(call_id=start.call_id, status=rpc_pb2.Status(code=rpc_pb2.OK))))
        await writer.drain()
        await reader.read()
        writer.close()

    server = await serve(short_tmp / "max.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "max.sock")) as c:
            device = await asyncio.wait_for(c.get_device(), scaled(10))
            assert len(device.id) > castd.MAX_FRAME_BYTES - 64


@pytest.mark.parametrize("cut", ["body", "length"])
async def test_a_close_in_the_middle_of_a_frame(short_tmp: Path, cut: str) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        start = await read_frame(reader)
        whole = encode(rpc_pb2.Frame(call_id=start.call_id, message=pb.Device(id="abc").SerializeToString()))
        writer.write(whole[:2] if cut == "length" else whole[:7])
        await writer.drain()
        writer.close()

    server = await serve(short_tmp / "cut.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "cut.sock")) as c:
            with pytest.raises(castd.CastdError) as error:
                await asyncio.wait_for(c.get_device(), scaled(5))
            assert error.value.code == castd.Code.UNAVAILABLE
            assert "castd closed the connection before /castd.v1.Cast/GetDevice ended" in str(error.value)
            assert "in the middle of a frame" in str(error.value)


async def test_a_connection_level_status_is_what_open_calls_fail_with(short_tmp: Path) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_frame(reader)
        await read_frame(reader)
        status = rpc_pb2.Status(code=rpc_pb2.RESOURCE_EXHAUSTED, message="too many calls on this connection")
        writer.write(encode(rpc_pb2.Frame(call_id=0, status=status)))
        await writer.drain()
        writer.close()

    server = await serve(short_tmp / "status.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "status.sock")) as c:
            events = c.watch()
            results = await asyncio.wait_for(
                asyncio.gather(c.get_status(), events.__anext__(), return_exceptions=True), scaled(5)
            )
            for result in results:
                assert isinstance(result, castd.CastdError)
                assert result.code == castd.Code.RESOURCE_EXHAUSTED
                assert "too many calls on this connection" in str(result)


async def test_frames_are_routed_by_call_id(short_tmp: Path) -> None:
    """Answers in the reverse order of the calls still reach the right callers."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        starts = [await read_frame(reader) for _ in range(3)]
        assert [s.call_id for s in starts] == [1, 2, 3]
        for start in reversed(starts):
            request = pb.GetDeviceRequest()
            request.ParseFromString(start.start.request)
            reply = pb.Device(id=f"answer to {request.device}").SerializeToString()
            writer.write(encode(rpc_pb2.Frame(call_id=start.call_id, message=reply)))
            writer.write(encode(rpc_pb2.Frame(call_id=start.call_id, status=rpc_pb2.Status(code=rpc_pb2.OK))))
        # A frame for a call nobody has open is dropped.
        writer.write(encode(rpc_pb2.Frame(call_id=99, message=b"")))
        await writer.drain()
        await reader.read()
        writer.close()

    server = await serve(short_tmp / "route.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "route.sock")) as c:
            answers = await asyncio.wait_for(
                asyncio.gather(*(c.get_device(device=name, timeout=5) for name in ("a", "b", "c"))), scaled(5)
            )
            assert [a.id for a in answers] == ["answer to a", "answer to b", "answer to c"]


async def test_timeout_is_sent_and_cancel_follows_expiry(short_tmp: Path) -> None:
    got: list[rpc_pb2.Frame] = []
    cancelled = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got.append(await read_frame(reader))
        got.append(await read_frame(reader))
        cancelled.set()
        await reader.read()
        writer.close()

    server = await serve(short_tmp / "deadline.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "deadline.sock")) as c:
            with pytest.raises(castd.CastdError) as error:
                await c.pause(device="TV", timeout=0.25)
            assert error.value.code == castd.Code.DEADLINE_EXCEEDED
            await asyncio.wait_for(cancelled.wait(), scaled(5))
    assert got[0].start.timeout_ms == 250
    assert got[0].start.method == "/castd.v1.Cast/Pause"
    assert got[1].call_id == got[0].call_id and got[1].WhichOneof("kind") == "cancel"


# -- what a stream holds and what decoding costs ---------------------------------------------------


def _rss_mark() -> int:
    """Resets the peak resident size to the current one ("5" to clear_refs, Linux 4.0); returns
    the current one, in kB."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_kb("VmRSS")


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {key} in /proc/self/status")


def _peak_growth_mb(mark: int) -> float:
    return (_status_kb("VmHWM") - mark) / 1024


async def read_start(reader: asyncio.StreamReader) -> rpc_pb2.Frame:
    """The next call the client starts (its cancels of other calls are passed over)."""
    while True:
        frame = await read_frame(reader)
        if frame.WhichOneof("kind") == "start":
            return frame


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _flood(tag: int, outer: int | None = None, size: int = castd.MAX_FRAME_BYTES - 64) -> bytes:
    """A message of empty submessages (field ``tag``), inside submessage ``outer`` if given: 2
    bytes each on the wire, a whole message object each once parsed."""
    inner = bytes([tag, 0]) * (size // 2)
    return inner if outer is None else bytes([outer]) + _varint(len(inner)) + inner


async def test_unread_stream_frames_are_bounded_by_bytes(short_tmp: Path) -> None:
    """200 unread Watch frames of 1 MiB: the stream ends at 16 MiB, not at 10,000 messages."""
    chunk = pb.Event(device_added=pb.Device(id="x" * (1 << 20))).SerializeToString()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        watch = await read_frame(reader)
        writer.write(encode(rpc_pb2.Frame(call_id=watch.call_id, message=pb.Event(sequence=1).SerializeToString())))
        status = await read_frame(reader)  # the GetStatus, sent after the first event
        for _ in range(200):
            writer.write(encode(rpc_pb2.Frame(call_id=watch.call_id, message=chunk)))
            await writer.drain()
        writer.write(encode(rpc_pb2.Frame(call_id=status.call_id, message=b"")))
        writer.write(encode(rpc_pb2.Frame(call_id=status.call_id, status=rpc_pb2.Status(code=rpc_pb2.OK))))
        await writer.drain()
        await reader.read()
        writer.close()

    server = await serve(short_tmp / "unread.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "unread.sock")) as c:
            events = c.watch()
            first = await asyncio.wait_for(events.__anext__(), scaled(5))
            assert first.sequence == 1
            mark = _rss_mark()
            # While nobody reads the Watch, a unary call: its answer comes after the 200 frames.
            await asyncio.wait_for(c.get_status(), scaled(30))
            growth = _peak_growth_mb(mark)
            print(f"200 unread 1 MiB frames: peak RSS +{growth:.1f} MB")
            assert growth < 80, f"memory stays bounded: +{growth:.1f} MB"
            delivered = 0
            with pytest.raises(castd.CastdError) as error:
                while True:
                    await asyncio.wait_for(events.__anext__(), scaled(5))
                    delivered += 1
            assert error.value.code == castd.Code.RESOURCE_EXHAUSTED
            assert "the consumer of /castd.v1.Cast/Watch fell behind: " in str(error.value)
            assert f"this client's bound (10000 messages, {16 * 1024 * 1024} bytes)" in str(error.value)
            assert delivered == 15  # 16 × (1 MiB and its fields) would be over 16 MiB


async def test_a_message_that_would_decode_too_big_is_not_parsed(short_tmp: Path) -> None:
    """4 MiB of empty submessages is 460 MB once parsed: a Watch's and a unary call's are refused
    from their wire fields; the connection and other calls go on."""
    watch_flood = _flood(0x1A, outer=0x1A)  # Event { snapshot { media {} media {} … } }
    status_flood = _flood(0x22)  # StatusResponse { media {} media {} … }

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        watch = await read_frame(reader)
        for _ in range(4):
            writer.write(encode(rpc_pb2.Frame(call_id=watch.call_id, message=watch_flood)))
            await writer.drain()
        for message in (status_flood, pb.StatusResponse(cast_state=pb.CAST_STATE_CONNECTED).SerializeToString()):
            call = await read_start(reader)
            writer.write(encode(rpc_pb2.Frame(call_id=call.call_id, message=message)))
            writer.write(encode(rpc_pb2.Frame(call_id=call.call_id, status=rpc_pb2.Status(code=rpc_pb2.OK))))
            await writer.drain()
        await reader.read()
        writer.close()

    server = await serve(short_tmp / "decode.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "decode.sock")) as c:
            mark = _rss_mark()
            events = c.watch()
            try:
                with pytest.raises(castd.CastdError) as error:
                    await asyncio.wait_for(events.__anext__(), scaled(30))
            finally:
                print(f"4 Watch frames of empty submessages: peak RSS +{_peak_growth_mb(mark):.1f} MB")
            assert error.value.code == castd.Code.RESOURCE_EXHAUSTED
            assert str(error.value).startswith(
                f"the castd.v1.Event castd sent for /castd.v1.Cast/Watch ({len(watch_flood)} bytes) takes more than "
                f"{castd.MAX_DECODED_BYTES} bytes to decode, over this client's limit (castd.Limits.decoded_bytes); "
                "the stream was cancelled"
            )
            with pytest.raises(castd.CastdError) as unary:
                await asyncio.wait_for(c.get_status(), scaled(30))
            assert unary.value.code == castd.Code.RESOURCE_EXHAUSTED
            assert "the castd.v1.StatusResponse castd sent for /castd.v1.Cast/GetStatus" in str(unary.value)
            growth = _peak_growth_mb(mark)
            print(f"… and a GetStatus response of them: peak RSS +{growth:.1f} MB")
            assert growth < 100, f"memory stays bounded: +{growth:.1f} MB"
            # Only those calls ended.
            status = await asyncio.wait_for(c.get_status(), scaled(10))
            assert status.cast_state == pb.CAST_STATE_CONNECTED


async def test_limits_are_the_connections(short_tmp: Path) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        watch = await read_frame(reader)
        writer.write(encode(rpc_pb2.Frame(call_id=watch.call_id, message=pb.Event(sequence=1).SerializeToString())))
        call = await read_start(reader)  # sent once the client has read the first event
        for sequence in range(2, 6):
            event = pb.Event(sequence=sequence).SerializeToString()
            writer.write(encode(rpc_pb2.Frame(call_id=watch.call_id, message=event)))
        big = pb.Event(sequence=9, device_added=pb.Device(id="x" * 2000)).SerializeToString()
        writer.write(encode(rpc_pb2.Frame(call_id=call.call_id, message=big)))
        writer.write(encode(rpc_pb2.Frame(call_id=call.call_id, status=rpc_pb2.Status(code=rpc_pb2.OK))))
        await writer.drain()
        await reader.read()
        writer.close()

    with pytest.raises(ValueError):
        castd.Limits(stream_bytes=0)
    limits = castd.Limits(stream_messages=3, decoded_bytes=1000)
    server = await serve(short_tmp / "limits.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "limits.sock"), limits=limits) as c:
            events = c.watch()
            assert (await asyncio.wait_for(events.__anext__(), scaled(5))).sequence == 1
            # A unary call answered with an Event over 1000 bytes decoded; meanwhile the Watch
            # got its other 4 events: 3 wait to be read, the fourth is one too many.
            with pytest.raises(castd.CastdError) as error:
                await asyncio.wait_for(c.unary("GetStatus", pb.GetStatusRequest(), pb.Event), scaled(5))
            assert error.value.code == castd.Code.RESOURCE_EXHAUSTED
            assert "takes more than 1000 bytes to decode" in str(error.value)
            assert [(await events.__anext__()).sequence for _ in range(3)] == [2, 3, 4]
            with pytest.raises(castd.CastdError) as behind:
                await events.__anext__()
            assert "(3 messages, 16777216 bytes)" in str(behind.value)


async def test_a_frame_that_would_decode_too_big_ends_the_connection(short_tmp: Path) -> None:
    """A frame whose oneof switches member at every field: each old member stays allocated."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_frame(reader)
        body = b"\x12\x00\x22\x00" * 40_000  # start {} status {} …: 160 KB
        writer.write(struct.pack(">I", len(body)) + body)
        await writer.drain()
        await reader.read()
        writer.close()

    server = await serve(short_tmp / "frame.sock", handler)
    async with server:
        async with castd.connect(str(short_tmp / "frame.sock"), limits=castd.Limits(decoded_bytes=1 << 20)) as c:
            with pytest.raises(castd.CastdError) as error:
                await asyncio.wait_for(c.get_status(), scaled(5))
            assert error.value.code == castd.Code.RESOURCE_EXHAUSTED
            assert "castd sent a castd.v1 frame (160000 bytes) that takes more than 1048576 bytes to decode" in str(
                error.value
            )
            assert c.closed


# -- text from castd on a terminal -----------------------------------------------------------------

EVIL_NAME = "TV\x1b]52;c;aGk=\x07\x1b[2J\u009b31m"  # an OSC 52 clipboard write, a screen clear, a C1 CSI
EVIL_SHOWN = "TV\\u001b]52;c;aGk=\\u0007\\u001b[2J\\u009b31m"


def test_visible_follows_castc() -> None:
    assert visible("Living Room TV") == "Living Room TV"
    assert visible("a\tb\nc") == "a\tb\nc"  # newline and tab stay, as in castc
    assert visible(EVIL_NAME) == EVIL_SHOWN
    assert visible("\r\b\x00\x1f\x7f\x80\x9f") == "\\u000d\\u0008\\u0000\\u001f\\u007f\\u0080\\u009f"
    assert visible("café \u00a0 \u202e 📺") == "café \u00a0 \u202e 📺"  # not controls: castc keeps them too


async def _cli(socket: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "castd",
        *args,
        "--socket",
        str(socket),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
    )
    out, err = await asyncio.wait_for(process.communicate(), scaled(30))
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("command", ["devices", "status", "devices --json", "error"])
async def test_the_cli_writes_control_characters_out(short_tmp: Path, command: str) -> None:
    """A device named with escape sequences (mDNS names are anyone's on the LAN): python3 -m castd
    prints them written out, never raw, and --json stays JSON."""
    device = pb.Device(id="d1", friendly_name=EVIL_NAME, host="127.0.0.1", port=8009)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        start = await read_frame(reader)
        if command == "error":
            status = rpc_pb2.Status(code=rpc_pb2.NOT_FOUND, message=f"no device named {EVIL_NAME}")
            writer.write(encode(rpc_pb2.Frame(call_id=start.call_id, status=status)))
        else:
            response: pb.ListDevicesResponse | pb.StatusResponse = (
                pb.StatusResponse(devices=[device]) if command == "status" else pb.ListDevicesResponse(devices=[device])
            )
            writer.write(encode(rpc_pb2.Frame(call_id=start.call_id, message=response.SerializeToString())))
            writer.write(encode(rpc_pb2.Frame(call_id=start.call_id, status=rpc_pb2.Status(code=rpc_pb2.OK))))
        await writer.drain()
        await reader.read()
        writer.close()

    server = await serve(short_tmp / "cli.sock", handler)
    async with server:
        args = {"devices": ["devices"], "status": ["status"], "devices --json": ["devices", "--json"], "error": ["pause"]}
        code, out, err = await _cli(short_tmp / "cli.sock", *args[command])
    if command == "error":
        assert code == int(castd.Code.NOT_FOUND), err
        assert err == f"castd: NOT_FOUND: no device named {EVIL_SHOWN}\n"
        text = err
    else:
        assert code == 0, err
        text = out
        if command == "devices --json":
            assert json.loads(out)["devices"][0]["friendlyName"] == EVIL_NAME  # the escapes are JSON's
        else:
            assert f"{EVIL_SHOWN} (127.0.0.1:8009)" in out
    assert not any(ord(c) < 0x20 and c not in "\t\n" or 0x7F <= ord(c) < 0xA0 for c in text), repr(text)
