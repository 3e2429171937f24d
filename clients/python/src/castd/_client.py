"""The asyncio client: :func:`connect` and :class:`Client`, one method per castd.v1.Cast rpc."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Generator
from types import TracebackType
from typing import Any, TypeVar

from google.protobuf import message as _message

from castd._connection import MAX_FRAME_BYTES, CallStream, Connection, Limits, decode, method_path
from castd._errors import CastdError, Code
from castd._files import HANDOVER_TIMEOUT, FileHandover, hand_over_file
from castd._socket import resolve_socket_path
from castd.v1 import cast_pb2 as pb
from castd.v1.cast_methods import CastMethods

M = TypeVar("M", bound=_message.Message)
R = TypeVar("R", bound=_message.Message)

_SERVICE = pb.DESCRIPTOR.services_by_name["Cast"]


def _request(cls: type[R], request: R | None, fields: dict[str, Any]) -> R:
    if request is not None:
        if fields:
            raise TypeError(f"give a {cls.__name__} or keyword arguments for its fields, not both")
        if not isinstance(request, cls):
            raise TypeError(f"expected a castd.v1.{cls.__name__}, got {type(request).__name__}")
        return request
    try:
        return cls(**fields)
    except ValueError as error:  # protobuf: 'Protocol message X has no "y" field.'
        raise TypeError(f"castd.v1.{cls.__name__}: {error}") from None


class Client(CastMethods):
    """A connection to castd. Every call is multiplexed on it; any number may run at once.

    Unary methods take the request message, or keyword arguments for its fields
    (``await c.seek(device="TV", position=30)``), and an optional ``timeout`` in seconds
    (sent to castd and enforced here: DEADLINE_EXCEEDED, and castd is told to cancel). They
    return the response message or raise :class:`castd.CastdError`. Streaming methods
    (:meth:`watch`, :meth:`listen`, :meth:`stream_logs`) return a :class:`CallStream` to
    ``async for`` over. An empty ``device`` lets castd pick: the device with a session, else
    the only device.
    """

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    @property
    def socket_path(self) -> str:
        """The socket this client is connected to."""
        return self._connection.path

    @property
    def closed(self) -> bool:
        return self._connection.closed

    async def close(self) -> None:
        """Closes the connection. Calls still open fail with CANCELLED; later calls at once."""
        await self._connection.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- generic calls -----------------------------------------------------------------------

    async def unary(
        self, method: str, request: _message.Message, response_type: type[M], *, timeout: float | None = None
    ) -> M:
        """Makes a unary call by name ("Pause" or "/castd.v1.Cast/Pause"): for methods newer
        than this library. Returns the response decoded as ``response_type``."""
        path = method_path(method)
        _check_kind(path, streaming=False)
        body = _serialize(path, request)
        data = await self._connection.unary(path, body, timeout)
        return decode(data, response_type, path, self._connection.limits, "it was not decoded")

    def server_stream(
        self, method: str, request: _message.Message, response_type: type[M], *, timeout: float | None = None
    ) -> CallStream[M]:
        """Opens a server-streaming call by name ("Watch"): for methods newer than this library."""
        path = method_path(method)
        _check_kind(path, streaming=True)
        return CallStream(self._connection, path, _serialize(path, request), response_type, timeout)

    async def _call(
        self,
        method: str,
        request_type: type[R],
        request: R | None,
        fields: dict[str, Any],
        response_type: type[M],
        timeout: float | None,
    ) -> M:
        return await self.unary(method, _request(request_type, request, fields), response_type, timeout=timeout)

    def _stream(
        self,
        method: str,
        request_type: type[R],
        request: R | None,
        fields: dict[str, Any],
        response_type: type[M],
        timeout: float | None,
    ) -> CallStream[M]:
        return self.server_stream(method, _request(request_type, request, fields), response_type, timeout=timeout)

    # -- conveniences ------------------------------------------------------------------------

    async def next(self, device: str = "", *, timeout: float | None = None) -> pb.MediaStatus:
        """Plays the next item of the queue (QueueUpdate jump +1)."""
        return await self.queue_update(device=device, jump=1, timeout=timeout)

    async def previous(self, device: str = "", *, timeout: float | None = None) -> pb.MediaStatus:
        """Plays the previous item of the queue (QueueUpdate jump -1)."""
        return await self.queue_update(device=device, jump=-1, timeout=timeout)

    async def load_url(
        self,
        url: str,
        *,
        device: str = "",
        title: str | None = None,
        content_type: str = "",
        autoplay: bool | None = None,
        start_time: float = 0.0,
        timeout: float | None = None,
    ) -> pb.MediaStatus:
        """Loads one URL (as content id and URL, like castc load), with an optional title."""
        media = pb.MediaInformation(content_id=url, content_url=url, content_type=content_type)
        if title is not None:
            media.metadata.title = title
        request = pb.LoadRequest(device=device, media=media, start_time=start_time)
        if autoplay is not None:
            request.autoplay = autoplay
        return await self.load(request, timeout=timeout)

    async def load_file(
        self,
        path: str | os.PathLike[str],
        *,
        device: str = "",
        title: str | None = None,
        content_type: str = "",
        autoplay: bool | None = None,
        start_time: float = 0.0,
        timeout: float | None = None,
    ) -> pb.MediaStatus:
        """Loads a file on this machine, which castd serves to the device from its own media
        server (the device gets castd's http:// URL, never the path). castd never opens a path:
        the file is opened here, with this process's permissions, and its descriptor handed to
        castd over the files socket beside castd's (``socket_path + ".files"``); the Load
        names the handle castd gave for it. castd takes a content type from the file's first
        bytes or its name's extension, and without ``title`` the name without its extension.
        Options as for :meth:`load_url`.

        A file that cannot be cast raises :class:`castd.CastdError` with reason "LOCAL_FILE"
        before castd is asked anything: NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENT (a
        directory, or not a regular file). The handover fails with UNAVAILABLE (no files
        socket), castd's status (PERMISSION_DENIED without control access), or
        DEADLINE_EXCEEDED (no answer within ``timeout``, at most 10 s).
        """
        bound = HANDOVER_TIMEOUT if timeout is None else min(timeout, HANDOVER_TIMEOUT)
        handover, handle = await _handed_over(os.fspath(path), self.socket_path, bound)
        try:
            media = pb.MediaInformation(file=handle, content_type=content_type)
            if title is not None:
                media.metadata.title = title
            request = pb.LoadRequest(device=device, media=media, start_time=start_time)
            if autoplay is not None:
                request.autoplay = autoplay
            return await self.load(request, timeout=timeout)
        finally:
            # Only now: castd lets go of a handle no call took when this connection closes.
            handover.close()

    # -- castd.v1.Cast: every method is CastMethods's (generated from cast.proto), but this one

    async def set_volume(
        self,
        request: pb.SetVolumeRequest | str | None = None,
        level: float | None = None,
        /,
        *,
        timeout: float | None = None,
        **fields: Any,
    ) -> pb.Volume:
        """SetVolume (Volume; access CONTROL): the device's volume — a level (0.0 … 1.0, sent
        even when 0.0), ``muted``, or ``steps`` of the device's step interval.

        ``set_volume("TV", 0.4)``, ``set_volume(device="TV", level=0.0)``, ``set_volume(muted=True)``
        or ``set_volume(SetVolumeRequest(...))``."""
        if isinstance(request, str) or level is not None:
            if "device" in fields or "level" in fields:
                raise TypeError("give device and level either positionally or as keywords, not both")
            if isinstance(request, str):
                fields["device"] = request
            elif request is not None:
                raise TypeError("give a SetVolumeRequest alone, or a device and a level")
            if level is not None:
                fields["level"] = level
            request = None
        return await self._call("SetVolume", pb.SetVolumeRequest, request, fields, pb.Volume, timeout)


async def _handed_over(path: str, rpc_socket: str, timeout: float) -> tuple[FileHandover, str]:
    # In a thread: asyncio's socket methods (Python 3.11) cannot send a descriptor
    # (SCM_RIGHTS needs sendmsg), and opening the file may block too (a network file system).
    # The handover is one small request, bounded by `timeout`.
    task = asyncio.ensure_future(asyncio.to_thread(hand_over_file, path, rpc_socket, timeout))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        # The thread cannot be stopped: what it opened is closed when it ends (within timeout).
        task.add_done_callback(_close_handover)
        raise


def _close_handover(task: asyncio.Future[tuple[FileHandover, str]]) -> None:
    if not task.cancelled() and task.exception() is None:
        task.result()[0].close()


def _check_kind(path: str, *, streaming: bool) -> None:
    prefix = "/castd.v1.Cast/"
    if not path.startswith(prefix):
        return
    descriptor = _SERVICE.methods_by_name.get(path[len(prefix) :])
    if descriptor is None:
        return  # newer than this library: castd says UNIMPLEMENTED if it does not know it either
    if descriptor.server_streaming and not streaming:
        raise CastdError(Code.INVALID_ARGUMENT, f"{path} is a streaming method; use server_stream()")
    if streaming and not descriptor.server_streaming:
        raise CastdError(Code.INVALID_ARGUMENT, f"{path} is a unary method; use unary()")


def _serialize(path: str, request: _message.Message) -> bytes:
    try:
        return request.SerializeToString()
    except _message.EncodeError as error:
        raise CastdError(
            Code.INVALID_ARGUMENT, f"cannot encode the {request.DESCRIPTOR.full_name} for {path}: {error}"
        ) from None


class _Connector:
    """What :func:`connect` returns: ``async with`` it, or ``await`` it for a :class:`Client`."""

    def __init__(self, socket: str | None, limits: Limits | None) -> None:
        self._socket = socket
        self._limits = limits
        self._client: Client | None = None

    async def _open(self) -> Client:
        path = resolve_socket_path(self._socket)
        return Client(await Connection.open(path, self._limits))

    def __await__(self) -> Generator[Any, None, Client]:
        return self._open().__await__()

    async def __aenter__(self) -> Client:
        self._client = await self._open()
        return self._client

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def connect(socket: str | None = None, *, limits: Limits | None = None) -> _Connector:
    """Connects to castd: ``async with castd.connect() as c: ...`` or ``c = await castd.connect()``.

    ``socket`` None finds it: $CASTD_SOCKET, else $XDG_RUNTIME_DIR/castd/castd.sock (or
    /run/castd/castd.sock if only that exists), else /run/castd/castd.sock. Raises
    :class:`castd.CastdError` UNAVAILABLE when nobody listens there, PERMISSION_DENIED when the
    socket is not ours to use. ``limits`` bounds what the connection holds and decodes
    (:class:`castd.Limits`: by default 10,000 messages / 16 MiB unread per stream, 64 MiB to
    decode one message).
    """
    return _Connector(socket, limits)


__all__ = ["MAX_FRAME_BYTES", "CallStream", "Client", "connect"]
