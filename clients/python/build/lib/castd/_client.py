"""The asyncio client: :func:`connect` and :class:`Client`, one method per castd.v1.Cast rpc."""

from __future__ import annotations

from collections.abc import Generator
from types import TracebackType
from typing import Any, TypeVar

from google.protobuf import message as _message

from castd._connection import MAX_FRAME_BYTES, CallStream, Connection, method_path
from castd._errors import CastdError, Code
from castd._socket import resolve_socket_path
from castd.v1 import cast_pb2 as pb

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


class Client:
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
        response = response_type()
        try:
            response.ParseFromString(data)
        except _message.DecodeError as error:
            raise CastdError(
                Code.INTERNAL,
                f"cannot decode the {response_type.DESCRIPTOR.full_name} castd sent for {path}: {error}",
            ) from None
        return response

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

    # -- castd.v1.Cast ---------------------------------------------------------------------------

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

    async def list_devices(
        self, request: pb.ListDevicesRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.ListDevicesResponse:
        """ListDevices (ListDevicesResponse; access READ). Devices known to the daemon,
        discovered or static, sorted by friendly name; with criteria, only those that can
        run the given apps and have the given capabilities."""
        return await self._call("ListDevices", pb.ListDevicesRequest, request, fields, pb.ListDevicesResponse, timeout)

    async def get_status(
        self, request: pb.GetStatusRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.StatusResponse:
        """GetStatus (StatusResponse; access READ). The daemon, its devices, sessions and
        media, in one consistent snapshot."""
        return await self._call("GetStatus", pb.GetStatusRequest, request, fields, pb.StatusResponse, timeout)

    async def get_app_availability(
        self, request: pb.AppAvailabilityRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.AppAvailabilityResponse:
        """GetAppAvailability (AppAvailabilityResponse; access READ). Which of the given
        apps a device can run (GET_APP_AVAILABILITY)."""
        return await self._call("GetAppAvailability", pb.AppAvailabilityRequest, request, fields, pb.AppAvailabilityResponse, timeout)

    async def start_session(
        self, request: pb.StartSessionRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.Session:
        """StartSession (Session; access CONTROL). Joins the app's session on a device if it
        runs, else launches it (see StartSessionRequest)."""
        return await self._call("StartSession", pb.StartSessionRequest, request, fields, pb.Session, timeout)

    async def end_session(
        self, request: pb.EndSessionRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.EndSessionResponse:
        """EndSession (EndSessionResponse; access CONTROL). Leaves the session (the app
        keeps running), or ends it with stop_app."""
        return await self._call("EndSession", pb.EndSessionRequest, request, fields, pb.EndSessionResponse, timeout)

    async def load(
        self, request: pb.LoadRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """Load (MediaStatus; access CONTROL). Loads media into the session's media player
        (starting a session with the Default Media Receiver first if there is none)."""
        return await self._call("Load", pb.LoadRequest, request, fields, pb.MediaStatus, timeout)

    async def play(
        self, request: pb.MediaRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """Play (MediaStatus; access CONTROL)."""
        return await self._call("Play", pb.MediaRequest, request, fields, pb.MediaStatus, timeout)

    async def pause(
        self, request: pb.MediaRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """Pause (MediaStatus; access CONTROL)."""
        return await self._call("Pause", pb.MediaRequest, request, fields, pb.MediaStatus, timeout)

    async def stop(
        self, request: pb.MediaRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """Stop (MediaStatus; access CONTROL)."""
        return await self._call("Stop", pb.MediaRequest, request, fields, pb.MediaStatus, timeout)

    async def seek(
        self, request: pb.SeekRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """Seek (MediaStatus; access CONTROL)."""
        return await self._call("Seek", pb.SeekRequest, request, fields, pb.MediaStatus, timeout)

    async def set_playback_rate(
        self, request: pb.SetPlaybackRateRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """SetPlaybackRate (MediaStatus; access CONTROL)."""
        return await self._call("SetPlaybackRate", pb.SetPlaybackRateRequest, request, fields, pb.MediaStatus, timeout)

    async def edit_tracks(
        self, request: pb.EditTracksRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """EditTracks (MediaStatus; access CONTROL). Active tracks and text track style
        (EDIT_TRACKS_INFO)."""
        return await self._call("EditTracks", pb.EditTracksRequest, request, fields, pb.MediaStatus, timeout)

    async def set_stream_volume(
        self, request: pb.SetVolumeRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """SetStreamVolume (MediaStatus; access CONTROL). The stream's volume (not the
        device's)."""
        return await self._call("SetStreamVolume", pb.SetVolumeRequest, request, fields, pb.MediaStatus, timeout)

    async def skip_ad(
        self, request: pb.MediaRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """SkipAd (MediaStatus; access CONTROL)."""
        return await self._call("SkipAd", pb.MediaRequest, request, fields, pb.MediaStatus, timeout)

    async def request_media_status(
        self, request: pb.MediaRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """RequestMediaStatus (MediaStatus; access CONTROL). Asks the device for its media
        status now (GET_STATUS) rather than waiting for an update."""
        return await self._call("RequestMediaStatus", pb.MediaRequest, request, fields, pb.MediaStatus, timeout)

    async def queue_load(
        self, request: pb.QueueLoadRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """QueueLoad (MediaStatus; access CONTROL). The queue: load, insert, remove,
        reorder, update (jump, next, previous, repeat mode, items)."""
        return await self._call("QueueLoad", pb.QueueLoadRequest, request, fields, pb.MediaStatus, timeout)

    async def queue_insert(
        self, request: pb.QueueInsertRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """QueueInsert (MediaStatus; access CONTROL)."""
        return await self._call("QueueInsert", pb.QueueInsertRequest, request, fields, pb.MediaStatus, timeout)

    async def queue_remove(
        self, request: pb.QueueRemoveRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """QueueRemove (MediaStatus; access CONTROL)."""
        return await self._call("QueueRemove", pb.QueueRemoveRequest, request, fields, pb.MediaStatus, timeout)

    async def queue_reorder(
        self, request: pb.QueueReorderRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """QueueReorder (MediaStatus; access CONTROL)."""
        return await self._call("QueueReorder", pb.QueueReorderRequest, request, fields, pb.MediaStatus, timeout)

    async def queue_update(
        self, request: pb.QueueUpdateRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.MediaStatus:
        """QueueUpdate (MediaStatus; access CONTROL)."""
        return await self._call("QueueUpdate", pb.QueueUpdateRequest, request, fields, pb.MediaStatus, timeout)

    async def get_queue(
        self, request: pb.GetQueueRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.Queue:
        """GetQueue (Queue; access READ). The media session's whole queue, in play order,
        each item with its media: what the device's MEDIA_STATUS leaves out (receivers send
        a few items around the current one), castd asks the device for (QUEUE_GET_ITEM_IDS,
        then QUEUE_GET_ITEMS in batches, items near the current one first). Watch's `queue`
        events say how it changes."""
        return await self._call("GetQueue", pb.GetQueueRequest, request, fields, pb.Queue, timeout)

    async def send_message(
        self, request: pb.SendMessageRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.SendMessageResponse:
        """SendMessage (SendMessageResponse; access CONTROL). Custom channels: a string or
        JSON message to the session's app on a namespace it declares."""
        return await self._call("SendMessage", pb.SendMessageRequest, request, fields, pb.SendMessageResponse, timeout)

    def listen(
        self, request: pb.ListenRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> CallStream[pb.ChannelEvent]:
        """Listen (stream of ChannelEvent; access CONTROL). Registers a namespace on a
        device and streams what the app sends on it; attached whenever a session whose app
        declares the namespace is connected."""
        return self._stream("Listen", pb.ListenRequest, request, fields, pb.ChannelEvent, timeout)

    def watch(
        self, request: pb.WatchRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> CallStream[pb.Event]:
        """Watch (stream of Event; access READ). A snapshot first, then every change, in one
        order for every watcher."""
        return self._stream("Watch", pb.WatchRequest, request, fields, pb.Event, timeout)

    async def get_log_filter(
        self, request: pb.GetLogFilterRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LogFilter:
        """GetLogFilter (LogFilter; access READ). The daemon's log filter: a minimum level,
        and levels for subsystems named by glob patterns."""
        return await self._call("GetLogFilter", pb.GetLogFilterRequest, request, fields, pb.LogFilter, timeout)

    async def set_log_filter(
        self, request: pb.SetLogFilterRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.LogFilter:
        """SetLogFilter (LogFilter; access CONTROL). Changes the log filter at run time
        (until castd restarts); answers with the new filter."""
        return await self._call("SetLogFilter", pb.SetLogFilterRequest, request, fields, pb.LogFilter, timeout)

    def stream_logs(
        self, request: pb.StreamLogsRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> CallStream[pb.LogRecord]:
        """StreamLogs (stream of LogRecord; access READ). The daemon's recent log records
        that pass the filter, then (with follow) every new one."""
        return self._stream("StreamLogs", pb.StreamLogsRequest, request, fields, pb.LogRecord, timeout)

    async def forget_device(
        self, request: pb.ForgetDeviceRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.Device:
        """ForgetDevice (Device; access CONTROL). Forgets the device certificate key castd
        pinned for a device when it first authenticated (a device replaced, or one whose key
        changed for a reason its owner knows), and tries the device again now: the next key
        it authenticates with is pinned instead."""
        return await self._call("ForgetDevice", pb.ForgetDeviceRequest, request, fields, pb.Device, timeout)

    async def get_device(
        self, request: pb.GetDeviceRequest | None = None, /, *, timeout: float | None = None, **fields: Any
    ) -> pb.Device:
        """GetDevice (Device; access READ). The one device a selector names, by the rules
        every request's `device` follows (above): NOT_FOUND if none does,
        FAILED_PRECONDITION naming them if several do. Clients resolve a selector with this
        rather than by rules of their own. (Declared last because it came last: the fuzz
        corpus numbers methods in this order.)"""
        return await self._call("GetDevice", pb.GetDeviceRequest, request, fields, pb.Device, timeout)


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

    def __init__(self, socket: str | None) -> None:
        self._socket = socket
        self._client: Client | None = None

    async def _open(self) -> Client:
        path = resolve_socket_path(self._socket)
        return Client(await Connection.open(path))

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


def connect(socket: str | None = None) -> _Connector:
    """Connects to castd: ``async with castd.connect() as c: ...`` or ``c = await castd.connect()``.

    ``socket`` None finds it: $CASTD_SOCKET, else $XDG_RUNTIME_DIR/castd/castd.sock (or
    /run/castd/castd.sock if only that exists), else /run/castd/castd.sock. Raises
    :class:`castd.CastdError` UNAVAILABLE when nobody listens there, PERMISSION_DENIED when the
    socket is not ours to use.
    """
    return _Connector(socket)


__all__ = ["MAX_FRAME_BYTES", "CallStream", "Client", "connect"]
