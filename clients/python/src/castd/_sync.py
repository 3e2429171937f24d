"""A synchronous wrapper for scripts: the asyncio client on an event loop in its own thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import os
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import TracebackType
from typing import Any, Generic, TypeVar

from google.protobuf import message as _message

from castd._client import Client
from castd._connection import CallStream, Limits
from castd.v1 import cast_pb2 as pb

T = TypeVar("T")
M = TypeVar("M", bound=_message.Message)


class _LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="castd-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("a castd.SyncClient cannot be used from its own event loop")
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result()
        except BaseException:
            # KeyboardInterrupt while waiting, or the call's own error: make sure it is over.
            future.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class SyncStream(Generic[M], Iterator[M]):
    """A streaming call for synchronous code: an iterator; :meth:`close` (or leaving ``with``)
    cancels it on castd."""

    def __init__(self, runner: _LoopThread, stream: CallStream[M]) -> None:
        self._runner = runner
        self._stream = stream
        self._closed = False

    def __iter__(self) -> SyncStream[M]:
        return self

    def __next__(self) -> M:
        if self._closed:
            raise StopIteration
        try:
            return self._runner.run(self._stream.__anext__())
        except StopAsyncIteration:
            self._closed = True
            raise StopIteration from None
        except concurrent.futures.CancelledError:
            self._closed = True
            raise StopIteration from None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if not self._runner.loop.is_closed():
            self._runner.run(self._stream.aclose())

    def __enter__(self) -> SyncStream[M]:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class SyncClient:
    """:class:`castd.Client` for synchronous code: the same methods, each blocking until it
    ends (streaming methods return a :class:`SyncStream`). Made by :func:`connect_sync`.

    The common methods are spelled out below; every other method of :class:`castd.Client`
    works the same way through attribute lookup.
    """

    def __init__(self, socket: str | None = None, *, limits: Limits | None = None) -> None:
        from castd._client import connect

        self._runner = _LoopThread()
        try:
            self._client: Client = self._runner.run(_open(connect(socket, limits=limits)))
        except BaseException:
            self._runner.stop()
            raise

    @property
    def client(self) -> Client:
        """The asyncio client underneath (its loop runs in another thread)."""
        return self._client

    @property
    def socket_path(self) -> str:
        return self._client.socket_path

    def close(self) -> None:
        if self._runner.loop.is_closed():
            return
        try:
            self._runner.run(self._client.close())
        finally:
            self._runner.stop()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        attribute = getattr(self._client, name)
        if inspect.iscoroutinefunction(attribute):

            @functools.wraps(attribute)
            def call(*args: Any, **kwargs: Any) -> Any:
                return self._runner.run(attribute(*args, **kwargs))

            return call
        if callable(attribute):

            @functools.wraps(attribute)
            def stream(*args: Any, **kwargs: Any) -> Any:
                result = attribute(*args, **kwargs)
                return SyncStream(self._runner, result) if isinstance(result, CallStream) else result

            return stream
        raise AttributeError(name)

    # The common methods, typed.

    def unary(
        self, method: str, request: _message.Message, response_type: type[M], *, timeout: float | None = None
    ) -> M:
        return self._runner.run(self._client.unary(method, request, response_type, timeout=timeout))

    def list_devices(self, request: pb.ListDevicesRequest | None = None, /, **kw: Any) -> pb.ListDevicesResponse:
        return self._runner.run(self._client.list_devices(request, **kw))

    def get_status(self, request: pb.GetStatusRequest | None = None, /, **kw: Any) -> pb.StatusResponse:
        return self._runner.run(self._client.get_status(request, **kw))

    def get_device(self, request: pb.GetDeviceRequest | None = None, /, **kw: Any) -> pb.Device:
        return self._runner.run(self._client.get_device(request, **kw))

    def load(self, request: pb.LoadRequest | None = None, /, **kw: Any) -> pb.MediaStatus:
        return self._runner.run(self._client.load(request, **kw))

    def load_url(self, url: str, **kw: Any) -> pb.MediaStatus:
        return self._runner.run(self._client.load_url(url, **kw))

    def load_file(self, path: str | os.PathLike[str], **kw: Any) -> pb.MediaStatus:
        return self._runner.run(self._client.load_file(path, **kw))

    def play(self, request: pb.MediaRequest | None = None, /, **kw: Any) -> pb.MediaStatus:
        return self._runner.run(self._client.play(request, **kw))

    def pause(self, request: pb.MediaRequest | None = None, /, **kw: Any) -> pb.MediaStatus:
        return self._runner.run(self._client.pause(request, **kw))

    def stop(self, request: pb.MediaRequest | None = None, /, **kw: Any) -> pb.MediaStatus:
        return self._runner.run(self._client.stop(request, **kw))

    def seek(self, request: pb.SeekRequest | None = None, /, **kw: Any) -> pb.MediaStatus:
        return self._runner.run(self._client.seek(request, **kw))

    def set_volume(
        self, request: pb.SetVolumeRequest | str | None = None, level: float | None = None, /, **kw: Any
    ) -> pb.Volume:
        return self._runner.run(self._client.set_volume(request, level, **kw))

    def next(self, device: str = "", *, timeout: float | None = None) -> pb.MediaStatus:
        return self._runner.run(self._client.next(device, timeout=timeout))

    def previous(self, device: str = "", *, timeout: float | None = None) -> pb.MediaStatus:
        return self._runner.run(self._client.previous(device, timeout=timeout))

    def watch(self, request: pb.WatchRequest | None = None, /, **kw: Any) -> SyncStream[pb.Event]:
        return SyncStream(self._runner, self._client.watch(request, **kw))


async def _open(connector: Any) -> Client:
    client: Client = await connector
    return client


def connect_sync(socket: str | None = None, *, limits: Limits | None = None) -> SyncClient:
    """Connects to castd for synchronous code: ``with castd.connect_sync() as c: c.pause()``."""
    return SyncClient(socket, limits=limits)


__all__ = ["SyncClient", "SyncStream", "connect_sync"]
