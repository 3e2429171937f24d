"""castd's status codes and the error every failed call raises."""

from __future__ import annotations

import enum

from castd.v1 import rpc_pb2


class Code(enum.IntEnum):
    """gRPC's canonical status codes, with gRPC's names and numbers (castd.v1.Code)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16

    @classmethod
    def from_number(cls, number: int) -> Code:
        """The code with this number; UNKNOWN for a number newer than this library."""
        try:
            return cls(number)
        except ValueError:
            return cls.UNKNOWN


class CastdError(Exception):
    """A call to castd failed: castd's status, or a failure of the connection itself.

    ``code`` is the status code, ``message`` a sentence for people (also ``str(error)``),
    ``reason`` castd's reason for programs ("REPLACED", "DEVICE_ERROR" or ""), and
    ``device_error`` the error a Cast device answered with (``type``, ``reason``, ``detail``),
    or None when the device did not refuse anything.
    """

    code: Code
    message: str
    reason: str
    device_error: rpc_pb2.DeviceError | None

    def __init__(
        self,
        code: Code | int,
        message: str,
        *,
        reason: str = "",
        device_error: rpc_pb2.DeviceError | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code if isinstance(code, Code) else Code.from_number(code)
        self.message = message
        self.reason = reason
        self.device_error = device_error

    @classmethod
    def from_status(cls, status: rpc_pb2.Status) -> CastdError:
        """The error a non-OK castd.v1.Status stands for."""
        device_error: rpc_pb2.DeviceError | None = None
        if status.HasField("device_error"):
            device_error = rpc_pb2.DeviceError()
            device_error.CopyFrom(status.device_error)
        code = Code.from_number(int(status.code))
        message = status.message or f"castd answered {code.name} without a message"
        return cls(code, message, reason=status.reason, device_error=device_error)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"CastdError({self.code.name}, {self.message!r})"
