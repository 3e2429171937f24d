"""One connection to castd: framing, call multiplexing, deadlines and cancellation."""

from __future__ import annotations

import asyncio
import errno
import math
import os
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from google.protobuf import message as _message
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import DecodeError

from castd._decode_cost import decoded_cost
from castd._errors import CastdError, Code
from castd.v1 import rpc_pb2

#: The largest frame castd sends or accepts, and the largest this client reads or writes.
MAX_FRAME_BYTES = 4 * 1024 * 1024

#: A stream whose consumer falls this many messages behind is ended (RESOURCE_EXHAUSTED).
STREAM_BUFFER_LIMIT = 10_000

#: … or whose unread messages come to more than this many bytes (as castd sent them).
STREAM_BUFFER_BYTES = 16 * 1024 * 1024

#: The most one message from castd may cost to decode (estimated from its wire fields first).
MAX_DECODED_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one connection holds for castd's messages (``castd.connect(limits=...)``).

    - ``stream_messages`` / ``stream_bytes``: a stream's unread messages, at most this many and
      this many bytes together (their encoded size: they are kept encoded until read). A
      stream over either ends with RESOURCE_EXHAUSTED after what it holds, and castd is told
      to cancel it.
    - ``decoded_bytes``: the most one message may cost to decode. A frame's length does not
      bound that: an empty submessage is 2 bytes on the wire and a whole object decoded (4 MiB
      of them, 460 MB). Each message's wire fields are walked first, with its type, adding up
      at least what parsing it would allocate; one over the limit is not parsed: its call or
      stream ends with RESOURCE_EXHAUSTED, castd is told to cancel it, other calls go on.
    """

    stream_messages: int = STREAM_BUFFER_LIMIT
    stream_bytes: int = STREAM_BUFFER_BYTES
    decoded_bytes: int = MAX_DECODED_BYTES

    def __post_init__(self) -> None:
        for name in ("stream_messages", "stream_bytes", "decoded_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"castd.Limits.{name} must be at least 1")

_HEADER = struct.Struct(">I")
_FRAME = cast(Descriptor, rpc_pb2.Frame.DESCRIPTOR)

M = TypeVar("M", bound=_message.Message)


class _End:
    """The end of a call: an error, or None for an OK status."""

    __slots__ = ("error",)

    def __init__(self, error: CastdError | None) -> None:
        self.error = error


class _Call:
    __slots__ = ("call_id", "method", "queue", "queued_bytes")

    def __init__(self, call_id: int, method: str) -> None:
        self.call_id = call_id
        self.method = method
        self.queue: asyncio.Queue[bytes | _End] = asyncio.Queue()
        self.queued_bytes = 0  # of the messages in the queue

    def take(self, item: bytes | _End) -> bytes | _End:
        """Accounts for an item taken from the queue."""
        if isinstance(item, bytes):
            self.queued_bytes -= len(item)
        return item


def connect_error(path: str, error: OSError) -> CastdError:
    """What failing to connect to ``path`` means, for people."""
    if isinstance(error, PermissionError) or error.errno in (errno.EACCES, errno.EPERM):
        why = os.strerror(error.errno) if error.errno else str(error)
        return CastdError(
            Code.PERMISSION_DENIED,
            f"cannot connect to castd at {path}: {why} — ask for access to castd's socket (its group), "
            "or use one you own with --socket / CASTD_SOCKET",
        )
    why = os.strerror(error.errno) if error.errno else (str(error) or type(error).__name__)
    return CastdError(
        Code.UNAVAILABLE,
        f"cannot connect to castd at {path}: {why} — is castd running? "
        "(start it with `castd`, or set --socket / CASTD_SOCKET)",
    )


def method_path(method: str) -> str:
    """"Pause" → "/castd.v1.Cast/Pause"; a full path is kept as it is."""
    return method if method.startswith("/") else f"/castd.v1.Cast/{method}"


class Connection:
    """A connected castd.v1 socket carrying any number of concurrent calls.

    A reader task reads castd's frames and routes each by call id to its call. Use it through
    :class:`castd.Client`.
    """

    def __init__(
        self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limits: Limits | None = None
    ) -> None:
        self.path = path
        self.limits = limits or Limits()
        self._reader = reader
        self._writer = writer
        self._loop = asyncio.get_running_loop()
        self._calls: dict[int, _Call] = {}
        self._next_id = 1
        self._closed: CastdError | None = None
        # The last connection-level status (call id 0) castd sent: why it is about to close.
        self._connection_status: rpc_pb2.Status | None = None
        self._reader_task = self._loop.create_task(self._read_loop(), name=f"castd reader {path}")

    @classmethod
    async def open(cls, path: str, limits: Limits | None = None) -> Connection:
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=MAX_FRAME_BYTES + 8)
        except OSError as error:
            raise connect_error(path, error) from None
        return cls(path, reader, writer, limits)

    @property
    def closed(self) -> bool:
        return self._closed is not None

    @property
    def open_call_ids(self) -> list[int]:
        return sorted(self._calls)

    # -- calls ------------------------------------------------------------------------------

    def start_call(self, method: str, request: bytes, timeout: float | None) -> _Call:
        """Registers a call and sends its start frame."""
        if self._closed is not None:
            raise CastdError(self._closed.code, f"{method}: {self._closed.message}")
        call = _Call(self._next_id, method)
        self._next_id += 1
        timeout_ms = 0
        if timeout is not None:
            timeout_ms = max(1, math.ceil(timeout * 1000))
        frame = rpc_pb2.Frame(
            call_id=call.call_id,
            start=rpc_pb2.CallStart(method=method, request=request, timeout_ms=timeout_ms),
        )
        body = frame.SerializeToString()
        if len(body) > MAX_FRAME_BYTES:
            raise CastdError(
                Code.RESOURCE_EXHAUSTED,
                f"{method}: the request is {len(body)} bytes, over castd's {MAX_FRAME_BYTES}-byte frame limit",
            )
        self._calls[call.call_id] = call
        self._write(body)
        return call

    async def drain(self) -> None:
        try:
            await self._writer.drain()
        except (ConnectionError, OSError) as error:
            self._fail(self._lost_error(f" ({_describe(error)})"))

    async def unary(self, method: str, request: bytes, timeout: float | None) -> bytes:
        """Makes one unary call; returns castd's one response."""
        if timeout is not None and timeout <= 0:
            raise CastdError(Code.DEADLINE_EXCEEDED, f"{method}: the deadline had passed before the call started")
        call = self.start_call(method, request, timeout)
        try:
            return await asyncio.wait_for(self._unary_result(call), timeout)
        except asyncio.TimeoutError:
            self.abandon(call)
            raise CastdError(
                Code.DEADLINE_EXCEEDED, f"{method} did not finish within {_seconds(timeout)}"
            ) from None
        except asyncio.CancelledError:
            self.abandon(call)
            raise

    async def _unary_result(self, call: _Call) -> bytes:
        await self.drain()
        response: bytes | None = None
        while True:
            item = call.take(await call.queue.get())
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                if response is None:
                    raise CastdError(Code.INTERNAL, f"castd ended {call.method} with OK but sent no response")
                return response
            if response is not None:
                self.abandon(call)
                raise CastdError(Code.INTERNAL, f"castd sent more than one response to {call.method}")
            response = item

    def abandon(self, call: _Call) -> None:
        """Ends a call from this side: forgets it, and tells castd if it is still open there."""
        if self._calls.pop(call.call_id, None) is None:
            return
        if self._closed is None:
            self._write(rpc_pb2.Frame(call_id=call.call_id, cancel=rpc_pb2.Cancel()).SerializeToString())

    def abandon_threadsafe(self, call: _Call) -> None:
        """:meth:`abandon` from any thread (a stream garbage-collected elsewhere)."""
        if self._loop.is_closed():
            return
        try:
            if self._loop.is_running() and _running_loop() is self._loop:
                self.abandon(call)
            else:
                self._loop.call_soon_threadsafe(self.abandon, call)
        except RuntimeError:
            pass  # the loop is closing: so is the connection

    def _write(self, body: bytes) -> None:
        if self._writer.is_closing():
            return
        self._writer.write(_HEADER.pack(len(body)) + body)

    # -- reading ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            while True:
                try:
                    header = await self._reader.readexactly(4)
                except asyncio.IncompleteReadError as error:
                    why = "" if not error.partial else " (in the middle of a frame's length)"
                    self._fail(self._lost_error(why))
                    return
                (length,) = _HEADER.unpack(header)
                if length > MAX_FRAME_BYTES:
                    self._fail(
                        CastdError(
                            Code.RESOURCE_EXHAUSTED,
                            f"castd sent a frame of {length} bytes, over this client's "
                            f"{MAX_FRAME_BYTES}-byte limit; connection closed",
                        )
                    )
                    return
                try:
                    body = await self._reader.readexactly(length)
                except asyncio.IncompleteReadError as error:
                    self._fail(
                        self._lost_error(
                            f" in the middle of a frame ({len(error.partial)} of its {length} bytes arrived)"
                        )
                    )
                    return
                # The frame too: a oneof switching member at each field leaves each old one
                # behind (4 MiB of them, 100 MB).
                limit = self.limits.decoded_bytes
                if decoded_cost(body, _FRAME, limit) > limit:
                    self._fail(
                        CastdError(
                            Code.RESOURCE_EXHAUSTED,
                            f"castd sent a castd.v1 frame ({length} bytes) that takes more than {limit} bytes to "
                            "decode, over this client's limit (castd.Limits.decoded_bytes); connection closed",
                        )
                    )
                    return
                frame = rpc_pb2.Frame()
                try:
                    frame.ParseFromString(body)
                except DecodeError as error:
                    self._fail(
                        CastdError(Code.INTERNAL, f"castd sent a malformed castd.v1 frame ({error}); connection closed")
                    )
                    return
                self._receive(frame)
        except (ConnectionError, OSError) as error:
            self._fail(self._lost_error(f" ({_describe(error)})"))
        except asyncio.CancelledError:
            self._fail(CastdError(Code.CANCELLED, "the connection to castd was closed by this client"))
            raise

    def _receive(self, frame: rpc_pb2.Frame) -> None:
        kind = frame.WhichOneof("kind")
        if frame.call_id == 0:
            if kind == "status" and frame.status.code != rpc_pb2.OK:
                self._connection_status = frame.status
            return
        call = self._calls.get(frame.call_id)
        if call is None:
            return  # a call already ended or cancelled by us; its answer was in flight
        if kind == "message":
            message = frame.message
            limits = self.limits
            unread = call.queue.qsize()
            if unread + 1 > limits.stream_messages or call.queued_bytes + len(message) > limits.stream_bytes:
                self.abandon(call)
                call.queue.put_nowait(
                    _End(
                        CastdError(
                            Code.RESOURCE_EXHAUSTED,
                            f"the consumer of {call.method} fell behind: {unread} messages ({call.queued_bytes} "
                            f"bytes) were waiting to be read, and the next ({len(message)} bytes) would pass this "
                            f"client's bound ({limits.stream_messages} messages, {limits.stream_bytes} bytes); "
                            "stream ended",
                        )
                    )
                )
                return
            call.queued_bytes += len(message)
            call.queue.put_nowait(message)
        elif kind == "status":
            del self._calls[frame.call_id]
            if frame.status.code == rpc_pb2.OK:
                call.queue.put_nowait(_End(None))
            else:
                call.queue.put_nowait(_End(CastdError.from_status(frame.status)))
        # start, cancel: client-to-daemon kinds; a kind newer than this client: ignored.

    def _lost_error(self, why: str) -> CastdError:
        status = self._connection_status
        if status is not None:
            error = CastdError.from_status(status)
            error.message = f"castd closed the connection: {error.message}"
            error.args = (error.message,)
            return error
        return CastdError(Code.UNAVAILABLE, f"castd closed the connection{why}")

    def _fail(self, error: CastdError) -> None:
        """Ends the connection: every open call fails with ``error``; later calls fail at once."""
        if self._closed is None:
            self._closed = error
        calls = [self._calls[i] for i in sorted(self._calls)]
        self._calls.clear()
        for call in calls:
            message = error.message
            if error.code == Code.UNAVAILABLE and message.startswith("castd closed the connection"):
                message = message.replace(
                    "castd closed the connection", f"castd closed the connection before {call.method} ended", 1
                )
            call.queue.put_nowait(
                _End(CastdError(error.code, message, reason=error.reason, device_error=error.device_error))
            )
        if not self._writer.is_closing():
            self._writer.close()

    async def close(self) -> None:
        """Closes the connection; open calls fail with CANCELLED."""
        self._fail(CastdError(Code.CANCELLED, "the connection to castd was closed by this client"))
        self._reader_task.cancel()
        await asyncio.gather(self._reader_task, return_exceptions=True)
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass


class CallStream(Generic[M], AsyncIterator[M]):
    """A server-streaming call (Watch, Listen, StreamLogs): an async iterator of castd's messages.

    The call starts at the first ``__anext__``. It ends when castd ends it (the iteration stops;
    with an error status it raises :class:`castd.CastdError`), or when this side is done with it:
    :meth:`aclose`, leaving ``async with``, breaking out of ``async for`` (the stream is released),
    the deadline passing (DEADLINE_EXCEEDED), or the iterating task being cancelled — each of
    which sends castd a cancel.
    """

    def __init__(
        self,
        connection: Connection,
        method: str,
        request: bytes,
        response_type: type[M],
        timeout: float | None,
    ) -> None:
        self._connection = connection
        self.method = method
        self._request = request
        self._response_type = response_type
        self._timeout = timeout
        self._deadline: float | None = None
        self._call: _Call | None = None
        self._finished = False

    @property
    def call_id(self) -> int | None:
        """The call's id on the connection once started."""
        return None if self._call is None else self._call.call_id

    def __aiter__(self) -> CallStream[M]:
        return self

    async def __anext__(self) -> M:
        if self._finished:
            raise StopAsyncIteration
        loop = asyncio.get_running_loop()
        if self._call is None:
            if self._timeout is not None:
                if self._timeout <= 0:
                    self._finished = True
                    raise CastdError(
                        Code.DEADLINE_EXCEEDED, f"{self.method}: the deadline had passed before the call started"
                    )
                self._deadline = loop.time() + self._timeout
            try:
                self._call = self._connection.start_call(self.method, self._request, self._timeout)
            except CastdError:
                self._finished = True
                raise
            await self._connection.drain()
        call = self._call
        remaining = None if self._deadline is None else max(0.0, self._deadline - loop.time())
        try:
            item = call.take(await asyncio.wait_for(call.queue.get(), remaining))
        except asyncio.TimeoutError:
            self._finished = True
            self._connection.abandon(call)
            raise CastdError(
                Code.DEADLINE_EXCEEDED, f"{self.method} did not finish within {_seconds(self._timeout)}"
            ) from None
        except asyncio.CancelledError:
            self._finished = True
            self._connection.abandon(call)
            raise
        if isinstance(item, _End):
            self._finished = True
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        try:
            return decode(item, self._response_type, self.method, self._connection.limits, "the stream was cancelled")
        except CastdError:
            self._finished = True
            self._connection.abandon(call)
            raise

    async def aclose(self) -> None:
        """Ends the stream; castd is told if the call is still open."""
        self._finished = True
        if self._call is not None:
            self._connection.abandon(self._call)

    async def __aenter__(self) -> CallStream[M]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        call = self._call
        if call is not None and not self._finished:
            self._connection.abandon_threadsafe(call)


def decode(data: bytes, response_type: type[M], method: str, limits: Limits, outcome: str) -> M:
    """Parses castd's message for ``method``, unless decoding it would cost more than the limit:
    then RESOURCE_EXHAUSTED, its message ending with ``outcome``; INTERNAL if malformed."""
    descriptor = cast(Descriptor, response_type.DESCRIPTOR)  # the stubs also name upb's class
    cost = decoded_cost(data, descriptor, limits.decoded_bytes)
    if cost > limits.decoded_bytes:
        raise CastdError(
            Code.RESOURCE_EXHAUSTED,
            f"the {descriptor.full_name} castd sent for {method} ({len(data)} bytes) takes more than "
            f"{limits.decoded_bytes} bytes to decode, over this client's limit (castd.Limits.decoded_bytes); "
            f"{outcome}",
        )
    response = response_type()
    try:
        response.ParseFromString(data)
    except DecodeError as error:
        raise CastdError(
            Code.INTERNAL, f"cannot decode the {descriptor.full_name} castd sent for {method}: {error}"
        ) from None
    return response


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.errno:
        return os.strerror(error.errno).lower()
    return str(error) or type(error).__name__


def _seconds(timeout: float | None) -> str:
    return f"{timeout:g} s" if timeout is not None else "its deadline"


__all__ = [
    "MAX_DECODED_BYTES",
    "MAX_FRAME_BYTES",
    "STREAM_BUFFER_BYTES",
    "STREAM_BUFFER_LIMIT",
    "CallStream",
    "Connection",
    "Limits",
    "connect_error",
    "decode",
    "method_path",
]
