"""load_file: a file on this machine, handed to castd over its files socket and served by castd.

Against a real castd (the device gets castd's http:// URL, the title is the file's name), and
against a fake files socket in a thread for what goes over the socket and what the client makes
of castd's answers.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import socket
import stat
import struct
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import castd
from castd import rpc_pb2
from castd._files import open_file
from conftest import DEVICE, Castd, scaled


def mp4_bytes(count: int) -> bytes:
    """An MP4 file's start (an ftyp box), then ``count`` bytes that vary."""
    data = bytearray(b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2")
    state = 12345
    for _ in range(count):
        state = (state * 1103515245 + 12345) & 0xFFFFFFFF
        data.append((state >> 16) & 0xFF)
    return bytes(data)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=scaled(20)) as response:  # noqa: S310 - castd's http:// URL
        body: bytes = response.read()
        return body


async def test_load_file_served_by_castd(castd_env: Castd) -> None:
    movie = castd_env.dir / "Holiday 2024.mp4"
    data = mp4_bytes(300_000)
    movie.write_bytes(data)
    async with castd.connect(castd_env.socket) as c:
        before = open_fds()
        status = await c.load_file(str(movie), device=DEVICE, timeout=scaled(20))
        assert status.media.metadata.title == "Holiday 2024"
        assert open_fds() == before  # the file and the files connection are closed

    # What castd says, through castc: its own URL at the address it reaches the device from,
    # never the path; and the file's bytes there.
    media = castd_env.media()["media"]
    assert media["contentId"].startswith("http://127.0.0.1:"), media
    assert "Holiday" not in media["contentId"]
    assert media["metadata"]["title"] == "Holiday 2024"
    assert media["contentType"] == "video/mp4"
    assert fetch(media["contentId"]) == data


def test_load_file_sync_with_title(castd_env: Castd) -> None:
    clip = castd_env.dir / "clip.mp4"
    clip.write_bytes(mp4_bytes(1000))
    with castd.connect_sync(castd_env.socket) as c:
        status = c.load_file(clip, device=DEVICE, title="Given title", content_type="video/mp4")
        assert status.media.metadata.title == "Given title"
    media = castd_env.media()["media"]
    assert media["metadata"]["title"] == "Given title" and media["contentId"].startswith("http://")


@pytest.fixture
def fake_castd(short_tmp: Path) -> Iterator[tuple[socket.socket, Path]]:
    """A listening socket where castd's would be (nobody answers on it), and its path."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = short_tmp / "castd.sock"
    listener.bind(str(path))
    listener.listen(4)
    try:
        yield listener, path
    finally:
        listener.close()


def quiet(listener: socket.socket) -> bool:
    """Nothing arrived on the client's RPC connection (accepted now, the client closed)."""
    conn, _ = listener.accept()
    with conn:
        conn.settimeout(scaled(5))
        return conn.recv(1) == b""


async def test_a_file_that_cannot_be_cast_is_reported_before_castd_is_asked(
    fake_castd: tuple[socket.socket, Path],
) -> None:
    listener, sock = fake_castd
    directory = sock.parent
    async with castd.connect(str(sock)) as c:
        missing = directory / "nope.mp4"
        with pytest.raises(castd.CastdError) as error:
            await c.load_file(missing, device=DEVICE)
        assert error.value.code == castd.Code.NOT_FOUND and error.value.reason == "LOCAL_FILE"
        assert error.value.message == f"cannot open {missing}: No such file or directory"

        with pytest.raises(castd.CastdError) as error:
            await c.load_file(directory)
        assert error.value.code == castd.Code.INVALID_ARGUMENT
        assert error.value.message == f"cannot cast {directory}: it is a directory, not a file"

        fifo = directory / "fifo"
        os.mkfifo(fifo)
        with pytest.raises(castd.CastdError) as error:
            await c.load_file(fifo)  # not waited on for a writer
        assert error.value.code == castd.Code.INVALID_ARGUMENT and "not a regular file" in error.value.message

        secret = directory / "secret.mp4"
        secret.write_bytes(mp4_bytes(10))
        secret.chmod(0)
        if os.geteuid() != 0:  # root reads any file
            with pytest.raises(castd.CastdError) as error:
                await c.load_file(secret)
            assert error.value.code == castd.Code.PERMISSION_DENIED and "Permission denied" in error.value.message

        # A readable file, and no files socket beside castd's.
        with pytest.raises(castd.CastdError) as error:
            await c.load_file(secret)
        assert error.value.code == castd.Code.UNAVAILABLE
        assert f"{sock}.files" in error.value.message and "is castd running" in error.value.message
    assert quiet(listener)


class FakeFiles(threading.Thread):
    """castd's files socket for one request: records it, answers ``answer`` (raw bytes)."""

    def __init__(self, listener: socket.socket, answer: bytes) -> None:
        super().__init__(daemon=True)
        self.listener = listener
        self.answer = answer
        self.names: list[str] = []
        self.fds: list[os.stat_result] = []
        self.received = threading.Event()
        self.client_closed = False

    def run(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            conn.settimeout(scaled(10))
            data, fds, _, _ = socket.recv_fds(conn, 65536, 4)
            for fd in fds:
                self.fds.append(os.fstat(fd))
                os.close(fd)
            (length,) = struct.unpack(">I", data[:4])
            self.names = list(rpc_pb2.FileHandover.FromString(data[4 : 4 + length]).names)
            self.received.set()
            if self.answer:
                conn.sendall(self.answer)
            self.client_closed = conn.recv(1) == b""


def frame(response: rpc_pb2.FileHandoverResponse) -> bytes:
    body = response.SerializeToString()
    return struct.pack(">I", len(body)) + body


async def test_handover_and_castds_answers(fake_castd: tuple[socket.socket, Path]) -> None:
    listener, sock = fake_castd
    files = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    files.bind(f"{sock}.files")
    files.listen(4)
    clip = sock.parent / "clip one.mp4"
    clip.write_bytes(mp4_bytes(100))
    with files:
        async with castd.connect(str(sock)) as c:
            # castd refuses (a client without control access): its status, and no Load.
            denied = rpc_pb2.Status(code=rpc_pb2.PERMISSION_DENIED, message="handing files to castd needs control access")
            fake = FakeFiles(files, frame(rpc_pb2.FileHandoverResponse(status=denied)))
            fake.start()
            with pytest.raises(castd.CastdError) as error:
                await c.load_file(clip, device=DEVICE)
            await asyncio.to_thread(fake.join)
            assert error.value.code == castd.Code.PERMISSION_DENIED and error.value.message == denied.message
            assert error.value.reason == "" and fake.client_closed
            # What went over: the file's name, and the file itself, open for reading.
            assert fake.names == ["clip one.mp4"]
            assert [(s.st_ino, s.st_dev) for s in fake.fds] == [(clip.stat().st_ino, clip.stat().st_dev)]

            # A length over the bound is refused before it is read.
            fake = FakeFiles(files, b"\x7f\xff\xff\xff")
            fake.start()
            with pytest.raises(castd.CastdError) as error:
                await c.load_file(clip)
            await asyncio.to_thread(fake.join)
            assert error.value.code == castd.Code.INTERNAL and "a frame of 2147483647 bytes" in error.value.message

            # Cancelled while castd is silent: the handover thread ends within its timeout, and
            # what it opened is closed then (the fake sees its connection close).
            before = open_fds()
            fake = FakeFiles(files, b"")
            fake.start()
            task = asyncio.ensure_future(c.load_file(clip, timeout=0.5))
            assert await asyncio.to_thread(fake.received.wait, scaled(10))
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.to_thread(fake.join)
            assert fake.client_closed and open_fds() == before

            # No answer within the call's timeout (nobody accepts: last, as the
            # connection stays in the listener's backlog).
            with pytest.raises(castd.CastdError) as error:
                await c.load_file(clip, timeout=0.3)
            assert error.value.code == castd.Code.DEADLINE_EXCEEDED, error.value
            assert "did not answer within 0.3 s" in error.value.message
            assert open_fds() == before
    assert quiet(listener)


def test_mode_of_handed_over_file_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "a.mp4"
    path.write_bytes(b"x")
    fd = open_file(str(path))
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        assert flags & os.O_ACCMODE == os.O_RDONLY and not flags & os.O_NONBLOCK
        assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
        assert stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
