"""Casting the caller's own files over castd's files socket (rpc.proto, "The files socket").

castd never opens a path a client names: the file is opened here, with this process's
permissions, and the open descriptor is handed to castd over a second Unix socket beside the
RPC socket (its path + ".files") with SCM_RIGHTS. castd answers with an opaque handle, which a
Load names (``MediaInformation.file``). castd lets go of handles no call took when that
connection closes, so it stays open until the Load has been answered.

Everything here blocks (bounded by a deadline): :meth:`castd.Client.load_file` runs it in a
thread.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import struct
import time

from google.protobuf.message import DecodeError

from castd._errors import CastdError, Code
from castd.v1 import rpc_pb2

#: castd answers a handover at once: one that takes longer is stuck, not busy (castc's bound).
HANDOVER_TIMEOUT = 10.0

#: The largest FileHandoverResponse read: one handle and a status take far less.
MAX_RESPONSE_BYTES = 64 * 1024

#: The reason of an error about the file itself, found before castd is asked anything.
LOCAL_FILE = "LOCAL_FILE"

_HEADER = struct.Struct(">I")


def _open_code(error: OSError) -> Code:
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return Code.NOT_FOUND
    if error.errno in (errno.EACCES, errno.EPERM):
        return Code.PERMISSION_DENIED
    if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOMEM):
        return Code.RESOURCE_EXHAUSTED
    return Code.INVALID_ARGUMENT


def open_file(path: str) -> int:
    """Opens ``path`` for reading as a regular file; its descriptor, the caller's to close.
    Raises :class:`CastdError` with reason LOCAL_FILE: NOT_FOUND, PERMISSION_DENIED,
    INVALID_ARGUMENT (a directory, or not a regular file)."""
    try:
        # Without blocking: a FIFO would wait here for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as error:
        raise CastdError(
            _open_code(error), f"cannot open {path}: {error.strerror or error}", reason=LOCAL_FILE
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = "a directory, not a file" if stat.S_ISDIR(mode) else "not a regular file"
            raise CastdError(Code.INVALID_ARGUMENT, f"cannot cast {path}: it is {what}", reason=LOCAL_FILE)
        # castd reads through this open file description: its reads may block again.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def file_name(path: str) -> str:
    """The name castd is told: the last path component, with bytes that are not UTF-8 (which
    Python keeps as surrogate escapes) as U+FFFD, since castd.v1 strings are UTF-8."""
    name = os.path.basename(path)
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class FileHandover:
    """A connection to castd's files socket. Close it once the calls naming its handles have
    been answered."""

    def __init__(self, sock: socket.socket, path: str, timeout: float) -> None:
        self._sock = sock
        self.path = path
        self._timeout = timeout
        self._deadline = time.monotonic() + timeout

    @classmethod
    def connect(cls, rpc_socket: str, timeout: float = HANDOVER_TIMEOUT) -> FileHandover:
        """Connects to the files socket beside castd's socket ``rpc_socket``; everything this
        connection does must be done within ``timeout`` seconds."""
        path = rpc_socket + ".files"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # close-on-exec, as Python makes them
        try:
            sock.settimeout(timeout)
            sock.connect(path)
        except OSError as error:
            sock.close()
            why = error.strerror or str(error)
            if isinstance(error, PermissionError):
                raise CastdError(
                    Code.PERMISSION_DENIED,
                    f"cannot reach castd's files socket at {path}: {why} — ask for access to castd's socket (its group)",
                ) from None
            hint = ""
            if error.errno in (errno.ENOENT, errno.ECONNREFUSED):
                hint = " — is castd running, and new enough to take files?"
            raise CastdError(Code.UNAVAILABLE, f"cannot reach castd's files socket at {path}: {why}{hint}") from None
        return cls(sock, path, timeout)

    def close(self) -> None:
        self._sock.close()

    def _left(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise self._timed_out()
        self._sock.settimeout(left)
        return left

    def _timed_out(self) -> CastdError:
        return CastdError(
            Code.DEADLINE_EXCEEDED, f"castd's files socket at {self.path} did not answer within {self._timeout:g} s"
        )

    def hand_over(self, fd: int, name: str) -> str:
        """Hands the open file ``fd`` (named ``name``) to castd; castd's handle for it. The
        descriptor stays the caller's to close."""
        body = rpc_pb2.FileHandover(names=[name]).SerializeToString()
        frame = _HEADER.pack(len(body)) + body
        try:
            self._left()
            sent = socket.send_fds(self._sock, [frame], [fd])
            if sent < len(frame):  # the descriptor went with the first byte
                self._left()
                self._sock.sendall(frame[sent:])
            (length,) = _HEADER.unpack(self._read(_HEADER.size))
            if length > MAX_RESPONSE_BYTES:
                raise CastdError(
                    Code.INTERNAL,
                    f"castd's files socket at {self.path} answered a frame of {length} bytes "
                    f"(at most {MAX_RESPONSE_BYTES} expected)",
                )
            data = self._read(length)
        except TimeoutError:
            raise self._timed_out() from None
        except OSError as error:
            raise CastdError(
                Code.UNAVAILABLE, f"cannot hand a file to castd at {self.path}: {error.strerror or error}"
            ) from None
        response = rpc_pb2.FileHandoverResponse()
        try:
            response.ParseFromString(data)
        except DecodeError:
            raise CastdError(
                Code.INTERNAL, f"castd's files socket at {self.path} answered something that is not a FileHandoverResponse"
            ) from None
        if response.HasField("status") and response.status.code != rpc_pb2.OK:
            raise CastdError.from_status(response.status)
        if len(response.handles) != 1 or not response.handles[0]:
            raise CastdError(Code.INTERNAL, f"castd answered {len(response.handles)} handles for the 1 file handed over")
        return response.handles[0]

    def _read(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            self._left()
            chunk = self._sock.recv(count - len(data))
            if not chunk:
                raise CastdError(Code.UNAVAILABLE, f"castd closed its files socket at {self.path} before it answered")
            data += chunk
        return data


def hand_over_file(path: str, rpc_socket: str, timeout: float) -> tuple[FileHandover, str]:
    """Opens the file at ``path``, connects to castd's files socket and hands it over: the
    connection (to close once the Load is answered) and castd's handle. The file is opened
    first, so that one that cannot be cast is reported before castd is asked anything."""
    fd = open_file(path)
    try:
        handover = FileHandover.connect(rpc_socket, timeout)
        try:
            return handover, handover.hand_over(fd, file_name(path))
        except BaseException:
            handover.close()
            raise
    finally:
        os.close(fd)  # castd holds its own copy now


__all__ = ["HANDOVER_TIMEOUT", "LOCAL_FILE", "MAX_RESPONSE_BYTES", "FileHandover", "hand_over_file", "open_file"]
