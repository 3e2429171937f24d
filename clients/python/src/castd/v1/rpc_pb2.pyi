from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

ABORTED: Code
ALREADY_EXISTS: Code
CANCELLED: Code
DATA_LOSS: Code
DEADLINE_EXCEEDED: Code
DESCRIPTOR: _descriptor.FileDescriptor
FAILED_PRECONDITION: Code
INTERNAL: Code
INVALID_ARGUMENT: Code
NOT_FOUND: Code
OK: Code
OUT_OF_RANGE: Code
PERMISSION_DENIED: Code
RESOURCE_EXHAUSTED: Code
UNAUTHENTICATED: Code
UNAVAILABLE: Code
UNIMPLEMENTED: Code
UNKNOWN: Code

class CallStart(_message.Message):
    __slots__ = ["method", "request", "timeout_ms"]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    method: str
    request: bytes
    timeout_ms: int
    def __init__(self, method: _Optional[str] = ..., request: _Optional[bytes] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class Cancel(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DeviceError(_message.Message):
    __slots__ = ["detail", "reason", "type"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    detail: str
    reason: str
    type: str
    def __init__(self, type: _Optional[str] = ..., reason: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class FileHandover(_message.Message):
    __slots__ = ["names"]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class FileHandoverResponse(_message.Message):
    __slots__ = ["handles", "status"]
    HANDLES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    handles: _containers.RepeatedScalarFieldContainer[str]
    status: Status
    def __init__(self, handles: _Optional[_Iterable[str]] = ..., status: _Optional[_Union[Status, _Mapping]] = ...) -> None: ...

class Frame(_message.Message):
    __slots__ = ["call_id", "cancel", "message", "start", "status"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    cancel: Cancel
    message: bytes
    start: CallStart
    status: Status
    def __init__(self, call_id: _Optional[int] = ..., start: _Optional[_Union[CallStart, _Mapping]] = ..., message: _Optional[bytes] = ..., status: _Optional[_Union[Status, _Mapping]] = ..., cancel: _Optional[_Union[Cancel, _Mapping]] = ...) -> None: ...

class Status(_message.Message):
    __slots__ = ["code", "device_error", "message", "reason"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ERROR_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    code: Code
    device_error: DeviceError
    message: str
    reason: str
    def __init__(self, code: _Optional[_Union[Code, str]] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., device_error: _Optional[_Union[DeviceError, _Mapping]] = ...) -> None: ...

class Code(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
