"""Peers for castd's benchmarks: pychromecast (and catt, driven as a command by castd-bench).

Each operation connects afresh, as a pychromecast script or a catt command does every time it
runs: connect by host and port (pychromecast reads the device's eureka_info over HTTPS on 8443
first, then speaks CastV2 on the port), wait for the receiver status and the media status, then
either stop there ("status") or send PAUSE and wait for the device's answer ("pause").

    peers.py once status|pause HOST PORT UUID   one operation in this process, then exit
    peers.py serve HOST PORT UUID               one operation per line on stdin ("status",
                                                "pause"), answering "ok SECONDS" or "error WHY"
                                                as soon as it is done, then "idle" once
                                                disconnected; the interpreter and imports are
                                                paid once

castd-bench times "once" from spawning the process to its exit (or to the PAUSE reaching the
emulator), and "serve" from writing the line to reading the answer (or the PAUSE): the same
clock as castc's figures. The SECONDS in the answer are this script's own view, for checking.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid


def connect_and_status(host: str, port: int, device: uuid.UUID, timeout: float = 20.0):
    """Connects and waits until both the receiver and the media status are known."""
    import pychromecast

    cast = pychromecast.get_chromecast_from_host((host, port, device, None, None), tries=1, timeout=timeout)
    have_media = threading.Event()

    class Listener:
        def new_media_status(self, status):
            if status is not None and status.media_session_id is not None:
                have_media.set()

        def load_media_failed(self, queue_item_id, error_code):
            pass

    cast.media_controller.register_status_listener(Listener())
    cast.wait(timeout=timeout)
    status = cast.media_controller.status
    if status is None or status.media_session_id is None:
        if not have_media.wait(timeout):
            cast.disconnect(timeout=timeout)
            raise RuntimeError("no media status within the timeout (is media loaded?)")
    return cast


def operation(name: str, host: str, port: int, device: uuid.UUID):
    """Runs one operation; returns the seconds it took and the connection, still open."""
    started = time.perf_counter()
    cast = connect_and_status(host, port, device)
    if name == "pause":
        cast.media_controller.pause(timeout=20.0)
    elif name != "status":
        cast.disconnect(timeout=10.0)
        raise ValueError(f"unknown operation {name!r}")
    return time.perf_counter() - started, cast


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[0] == "once":
        _, name, host, port, device = argv
        _, cast = operation(name, host, int(port), uuid.UUID(device))
        cast.disconnect(timeout=10.0)
        return 0
    if len(argv) == 4 and argv[0] == "serve":
        _, host, port, device = argv
        import pychromecast  # noqa: F401  (imported once, before the first operation)

        print("ready", flush=True)
        for line in sys.stdin:
            name = line.strip()
            if name in ("", "quit"):
                break
            try:
                elapsed, cast = operation(name, host, int(port), uuid.UUID(device))
                print(f"ok {elapsed:.6f}", flush=True)
                cast.disconnect(timeout=10.0)
            except Exception as error:  # one failed run is reported, the next one goes on
                print(f"error {type(error).__name__}: {error}".replace("\n", " "), flush=True)
            print("idle", flush=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
