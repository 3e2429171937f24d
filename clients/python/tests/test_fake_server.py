"""Misbehaviour a real castd cannot be made to show, from a tiny server written here."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

import castd
from castd import cast_pb2 as pb
from castd import rpc_pb2
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
