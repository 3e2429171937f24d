"""What decoding a message will cost, judged from its wire bytes before it is parsed.

A frame's length bounds the bytes read, not what parsing them allocates: an empty submessage is
2 bytes on the wire and a whole message object once parsed (python-protobuf's upb backend: about
220 bytes for an empty ``MediaStatus``, so 4 MiB of them take 460 MB). :func:`decoded_cost`
walks the wire fields with the message's descriptor and adds up an estimate that is at least
what upb allocates: each message its own block and a slot per field its type declares, each
element of a repeated field (or map entry) a slot, each string its bytes, each unknown field its
bytes (upb keeps unknown fields as they came). It stops as soon as the estimate passes the limit.

Messages small enough that even the costliest encoding could not reach the limit are not walked
at all: every encoded byte costs at most ``_worst_ratio`` bytes decoded.
"""

from __future__ import annotations

from google.protobuf.descriptor import Descriptor, FieldDescriptor

_MESSAGE = 48  # a message's own block, beyond its fields' slots (upb: ~16 bytes, plus the arena's)
_SLOT = 16  # per field its type declares: the widest slot is a string view (pointer and size)
_ELEMENT = 16  # per element of a repeated field or map entry, beside what the element holds
_MAP_ENTRY = 64  # beside a map entry's own fields: its place in upb's hash table
_SCALAR = 8  # per element of a packed repeated scalar (each at least one byte on the wire)
_MAX_DEPTH = 100  # upb's own nesting limit: deeper input fails to parse anyway

_MESSAGE_KIND = 0
_TEXT_KIND = 1  # string or bytes
_SCALAR_KIND = 2


class _Type:
    """A message type, as the walk needs it."""

    __slots__ = ("base", "fields")

    def __init__(self, descriptor: Descriptor) -> None:
        self.base = _MESSAGE + _SLOT * len(descriptor.fields)
        # field number → (kind, repeated, the submessage's type if a message, what each
        # occurrence costs beside the submessage's own fields)
        self.fields: dict[int, tuple[int, bool, Descriptor | None, int]] = {}
        for field in descriptor.fields:
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                kind = _MESSAGE_KIND
            elif field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
                kind = _TEXT_KIND
            else:
                kind = _SCALAR_KIND
            entry = field.message_type
            overhead = _ELEMENT
            if entry is not None and entry.GetOptions().map_entry:
                overhead += _MAP_ENTRY
            self.fields[field.number] = (kind, _repeated(field), entry, overhead)


def _repeated(field: FieldDescriptor) -> bool:
    # `is_repeated` since protobuf 5 (and `label` gone in 7); `label` before.
    flag = getattr(field, "is_repeated", None)
    if isinstance(flag, bool):
        return flag
    return bool(getattr(field, "label", None) == FieldDescriptor.LABEL_REPEATED)


_types: dict[str, _Type] = {}
_ratios: dict[str, int] = {}


def _type(descriptor: Descriptor) -> _Type:
    found = _types.get(descriptor.full_name)
    if found is None:
        found = _types[descriptor.full_name] = _Type(descriptor)
    return found


def _worst_ratio(descriptor: Descriptor) -> int:
    """The most bytes one encoded byte can cost decoded, in any message reachable from here:
    an empty submessage (2 bytes: its tag and a zero length), an empty string (2 bytes), one
    byte of a packed scalar."""
    found = _ratios.get(descriptor.full_name)
    if found is not None:
        return found
    worst = max((_ELEMENT + _SLOT) // 2 + 1, _SCALAR)
    seen: set[str] = set()
    pending = [descriptor]
    while pending:
        current = pending.pop()
        if current.full_name in seen:
            continue
        seen.add(current.full_name)
        worst = max(worst, (_type(current).base + _ELEMENT + _MAP_ENTRY + 1) // 2)
        pending.extend(f.message_type for f in current.fields if f.message_type is not None)
    _ratios[descriptor.full_name] = worst
    return worst


class _Stop(Exception):
    """The walk is over: the estimate passed the limit, or the bytes are malformed."""


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while pos < end:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            break
    raise _Stop


class _Walk:
    __slots__ = ("data", "limit", "total")

    def __init__(self, data: bytes, limit: int) -> None:
        self.data = data
        self.limit = limit
        self.total = 0

    def message(self, pos: int, end: int, kind: _Type, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Stop
        data = self.data
        fields = kind.fields
        limit = self.limit
        total = self.total + kind.base
        # One-byte tags and varints are read inline: this loop is what a flood of tiny fields
        # costs in CPU (about 0.3 s per MB of 2-byte fields).
        while pos < end:
            if total > limit:
                raise _Stop
            start = pos
            key = data[pos]
            if key < 0x80:
                pos += 1
            else:
                key, pos = _varint(data, pos, end)
            wire = key & 7
            field = fields.get(key >> 3)
            if wire == 0:
                if pos < end and data[pos] < 0x80:
                    pos += 1
                else:
                    _, pos = _varint(data, pos, end)
            elif wire == 2:
                if pos < end and data[pos] < 0x80:
                    length = data[pos]
                    pos += 1
                else:
                    length, pos = _varint(data, pos, end)
                if pos + length > end:
                    raise _Stop
                if field is not None:
                    if field[0] == _MESSAGE_KIND and field[2] is not None:
                        # A singular one counts at each occurrence too: upb merges repeats, but
                        # a oneof switching between members leaves the old one in the arena.
                        self.total = total + field[3]
                        self.message(pos, pos + length, _type(field[2]), depth + 1)
                        total = self.total
                        pos += length
                        continue
                    if field[0] == _TEXT_KIND:
                        total += _ELEMENT + length
                        pos += length
                        continue
                    if field[1]:  # packed scalars
                        total += _SCALAR * length
                        pos += length
                        continue
                pos += length
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            elif wire == 3:
                pos = self.group(pos, end, key >> 3, depth + 1)
            else:
                raise _Stop
            if pos > end:
                raise _Stop
            # Anything else: its bytes (an unknown field, or a wire type that does not match the
            # field's, is kept as it came), and a slot if it is one more element of a repeated.
            total += pos - start
            if field is not None and field[1]:
                total += _ELEMENT
        self.total = total
        if total > limit:
            raise _Stop

    def group(self, pos: int, end: int, number: int, depth: int) -> int:
        """Skips an (unknown) group to its end tag; returns where it ends."""
        if depth > _MAX_DEPTH:
            raise _Stop
        data = self.data
        while pos < end:
            key, pos = _varint(data, pos, end)
            wire = key & 7
            if wire == 0:
                _, pos = _varint(data, pos, end)
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            elif wire == 2:
                length, pos = _varint(data, pos, end)
                pos += length
            elif wire == 3:
                pos = self.group(pos, end, key >> 3, depth + 1)
            elif wire == 4 and key >> 3 == number:
                return pos
            else:
                raise _Stop
        raise _Stop


def decoded_cost(data: bytes, descriptor: Descriptor, limit: int) -> int:
    """An estimate, at least what parsing ``data`` as ``descriptor`` allocates, of that cost in
    bytes; once it passes ``limit`` the walk stops and returns a number over ``limit``. Malformed
    bytes end the walk too, with what was counted until there (parsing them then fails)."""
    kind = _type(descriptor)
    if kind.base + len(data) * _worst_ratio(descriptor) <= limit:
        return kind.base + len(data) * _worst_ratio(descriptor)
    walk = _Walk(data, limit)
    try:
        walk.message(0, len(data), kind, 0)
    except _Stop:
        pass
    except RecursionError:
        return limit + 1
    return walk.total


__all__ = ["decoded_cost"]
