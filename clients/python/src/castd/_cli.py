"""``python3 -m castd``: a small command line on the client.

    python3 -m castd status|devices|watch [--json] [--socket PATH] [--device NAME]
    python3 -m castd pause|play|stop|next|previous [--device NAME]
    python3 -m castd seek SECONDS     (+S / -S: relative to the current position)
    python3 -m castd volume LEVEL     (0.0 … 1.0, or a percentage: 40%)

Exit status: 0 on success (and on Ctrl-C in watch), castd's status code (1 … 16) on an error,
with the message on stderr, 64 on bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from google.protobuf import json_format
from google.protobuf import message as _message

from castd._client import Client, connect
from castd._errors import CastdError
from castd.v1 import cast_pb2 as pb

EXIT_USAGE = 64

COMMANDS = ("status", "devices", "watch", "pause", "play", "stop", "seek", "volume", "next", "previous")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    # SUPPRESS: an option given before the command is not reset by the subcommand's default.
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="protobuf's JSON output")
    common.add_argument("--socket", metavar="PATH", default=argparse.SUPPRESS, help="castd's socket")
    common.add_argument("--device", metavar="NAME", default=argparse.SUPPRESS, help="a device name, id or host")
    parser = _Parser(
        prog="python3 -m castd",
        description="Control Google Cast devices through castd.",
        parents=[common],
        epilog="Exit status: 0 success, 1-16 castd's status code, 64 bad usage.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    commands.add_parser("status", parents=[common], help="castd, its devices, sessions and media")
    commands.add_parser("devices", parents=[common], help="the devices castd knows")
    commands.add_parser("watch", parents=[common], help="every change until Ctrl-C")
    for name, text in (
        ("pause", "pause the media"),
        ("play", "resume the media"),
        ("stop", "stop the media"),
        ("next", "the next item of the queue"),
        ("previous", "the previous item of the queue"),
    ):
        commands.add_parser(name, parents=[common], help=text)
    seek = commands.add_parser("seek", parents=[common], help="seek to SECONDS (+S/-S: relative)")
    seek.add_argument("seconds", metavar="SECONDS")
    volume = commands.add_parser("volume", parents=[common], help="the device's volume: 0.0-1.0 or N%%")
    volume.add_argument("level", metavar="LEVEL")
    return parser


def _parse_seek(text: str) -> tuple[float, bool]:
    relative = text[:1] in ("+", "-")
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"seek: {text!r} is not a number of seconds") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise UsageError(f"seek: {text!r} is not a number of seconds")
    return value, relative


def _parse_level(text: str) -> float:
    try:
        level = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UsageError(f"volume: {text!r} is not a level (0.0 to 1.0, or a percentage such as 40%)") from None
    if not 0.0 <= level <= 1.0:
        raise UsageError(f"volume: {text} is not between 0 and 1 (or 0% and 100%)")
    return level


# -- output --------------------------------------------------------------------------------------

# Every control character but newline and tab: C0, DEL, and C1 (U+0080-U+009F, where some
# terminals read U+009B as the start of an escape sequence).
_CONTROLS = {c: f"\\u{c:04x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in (0x09, 0x0A)}


def visible(text: str) -> str:
    """``text`` with its control characters written out as ``\\u001b``, as castc prints (its
    ``Terminal.visible``): names, titles and messages come from devices, mDNS announcements and
    receiver apps, and must not drive the user's terminal (an OSC 52 clipboard write, a screen
    clear). The same spelling is an escape inside a JSON string, so ``--json`` stays JSON."""
    return text.translate(_CONTROLS)


def _line(text: str, out: TextIO, flush: bool = False) -> None:
    print(visible(text), file=out, flush=flush)


def to_json(message: _message.Message) -> str:
    """One compact JSON object in proto3's JSON mapping, as ``castc --json`` prints it."""
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), ensure_ascii=False)


def _enum(enum_type: Any, value: int, prefix: str) -> str:
    try:
        name: str = enum_type.Name(value)
    except ValueError:
        return str(value)
    return name.removeprefix(prefix).lower().replace("_", " ")


def _clock(seconds: float) -> str:
    total = int(max(0.0, seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def media_line(status: pb.MediaStatus) -> str:
    state = _enum(pb.PlayerState, status.player_state, "PLAYER_STATE_")
    position = _clock(status.current_time)
    if status.media.duration > 0:
        position += f" / {_clock(status.media.duration)}"
    title = status.media.metadata.title or status.media.content_id
    return "  ".join(part for part in (state, position, title) if part)


def _device_line(device: pb.Device) -> str:
    link = _enum(pb.LinkState, device.link_state, "LINK_STATE_")
    parts = [f"{device.friendly_name or device.id} ({device.host}:{device.port})", link]
    if device.model:
        parts.append(device.model)
    apps = [a.display_name or a.app_id for a in device.receiver.applications if not a.is_idle_screen]
    if apps:
        parts.append(", ".join(apps))
    return "  ".join(parts)


def _print_status(status: pb.StatusResponse, out: TextIO) -> None:
    cast_state = _enum(pb.CastState, status.cast_state, "CAST_STATE_")
    connected = [s.device_name for s in status.sessions if s.state in (pb.SESSION_STATE_STARTED, pb.SESSION_STATE_RESUMED)]
    if connected and status.cast_state == pb.CAST_STATE_CONNECTED:
        cast_state = f"connected to {', '.join(connected)}"
    daemon = status.daemon
    _line(f"cast       {cast_state}", out)
    _line(f"castd      {daemon.version}, {daemon.mode} mode, pid {daemon.pid}", out)
    _line(f"socket     {daemon.socket_path}", out)
    for device in status.devices:
        _line("", out)
        _line(_device_line(device), out)
        if device.HasField("receiver") and device.receiver.HasField("volume"):
            volume = device.receiver.volume
            muted = ", muted" if volume.muted else ""
            _line(f"  volume    {round(volume.level * 100)}%{muted}", out)
        for session in status.sessions:
            if session.device_id == device.id:
                state = _enum(pb.SessionState, session.state, "SESSION_STATE_")
                _line(f"  session   {session.display_name} ({session.app_id}), {state}", out)
        for media in status.media:
            if media.device_id == device.id:
                _line(f"  player    {media_line(media)}", out)
    if not status.devices:
        _line("no devices", out)


def _event_line(event: pb.Event) -> str:
    kind = event.WhichOneof("kind") or "unknown"
    text = f"#{event.sequence} {kind.replace('_', ' ')}"
    if kind == "snapshot":
        snap = event.snapshot
        return f"{text}: {len(snap.devices)} devices, {len(snap.sessions)} sessions, {len(snap.media)} media"
    if kind == "media":
        return f"{text} {event.media.device_id}: {media_line(event.media)}"
    if kind == "session":
        state = _enum(pb.SessionState, event.session.state, "SESSION_STATE_")
        return f"{text} {event.session.device_name}: {event.session.display_name} {state}"
    if kind in ("device_added", "device_updated", "device_removed"):
        return f"{text}: {_device_line(getattr(event, kind))}"
    if kind == "cast_state":
        return f"{text}: {_enum(pb.CastState, event.cast_state.state, 'CAST_STATE_')}"
    if kind == "lagged":
        return f"{text}: {event.lagged.dropped} events dropped; a snapshot follows"
    return text


# -- commands ------------------------------------------------------------------------------------


async def _run(args: argparse.Namespace, out: TextIO) -> None:
    as_json: bool = getattr(args, "json", False)
    device: str = getattr(args, "device", "")
    socket: str | None = getattr(args, "socket", None)
    async with connect(socket) as client:
        await _command(client, args.command, args, device, as_json, out)


async def _command(
    client: Client, command: str, args: argparse.Namespace, device: str, as_json: bool, out: TextIO
) -> None:
    if command == "status":
        status = await client.get_status()
        if as_json:
            _line(to_json(status), out)
        else:
            _print_status(status, out)
        return
    if command == "devices":
        devices = await client.list_devices()
        if as_json:
            _line(to_json(devices), out)
        else:
            for d in devices.devices:
                _line(_device_line(d), out)
            if not devices.devices:
                _line("no devices", out)
        return
    if command == "watch":
        async for event in client.watch():
            _line(to_json(event) if as_json else _event_line(event), out, flush=True)
        return
    if command == "volume":
        volume = await client.set_volume(device, _parse_level(args.level))
        if as_json:
            _line(to_json(volume), out)
        else:
            _line(f"volume  {round(volume.level * 100)}%{'  muted' if volume.muted else ''}", out)
        return
    media: pb.MediaStatus
    if command == "pause":
        media = await client.pause(device=device)
    elif command == "play":
        media = await client.play(device=device)
    elif command == "stop":
        media = await client.stop(device=device)
    elif command == "next":
        media = await client.next(device)
    elif command == "previous":
        media = await client.previous(device)
    elif command == "seek":
        position, relative = _parse_seek(args.seconds)
        media = await client.seek(device=device, position=position, relative=relative)
    else:  # pragma: no cover - argparse allows only the commands above
        raise UsageError(f"unknown command {command!r}")
    _line(to_json(media) if as_json else media_line(media), out)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        args = parser.parse_args(arguments)
        # Checked before connecting, so that bad usage is 64 whether castd runs or not.
        if args.command == "seek":
            _parse_seek(args.seconds)
        if args.command == "volume":
            _parse_level(args.level)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        print(error, file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    try:
        asyncio.run(_run(args, sys.stdout))
    except CastdError as error:
        _line(f"castd: {error.code.name}: {error.message}", sys.stderr)
        return int(error.code)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        return 0
    return 0


__all__ = ["COMMANDS", "main", "media_line", "to_json", "visible"]
