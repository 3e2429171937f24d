"""castd: a Python client for castd, the Google Cast daemon.

    import castd

    async with castd.connect() as c:
        await c.pause(device="Living Room TV")
        async for event in c.watch():
            print(event)

    with castd.connect_sync() as c:
        c.pause(device="Living Room TV")

Every failed call raises :class:`CastdError` (``.code`` a :class:`Code`).
"""

from castd._client import Client, connect
from castd._connection import (
    MAX_DECODED_BYTES,
    MAX_FRAME_BYTES,
    STREAM_BUFFER_BYTES,
    STREAM_BUFFER_LIMIT,
    CallStream,
    Limits,
)
from castd._errors import CastdError, Code
from castd._socket import resolve_socket_path
from castd._sync import SyncClient, SyncStream, connect_sync
from castd.v1 import cast_pb2, rpc_pb2

__all__ = [
    "MAX_DECODED_BYTES",
    "MAX_FRAME_BYTES",
    "STREAM_BUFFER_BYTES",
    "STREAM_BUFFER_LIMIT",
    "CallStream",
    "CastdError",
    "Client",
    "Code",
    "Limits",
    "SyncClient",
    "SyncStream",
    "cast_pb2",
    "connect",
    "connect_sync",
    "resolve_socket_path",
    "rpc_pb2",
]
