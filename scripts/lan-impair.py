#!/usr/bin/env python3
"""An impaired cable for scripts/test-lan.sh: two TAP devices, and every Ethernet frame between
them delayed and sometimes dropped, each way, as netem would (this machine's kernel has no
netem). Real frames: TCP's retransmissions, ARP and mDNS all see the loss and the delay.

    lan-impair.py --delay-ms 100 --loss-percent 5 --ready FILE TAP_A TAP_B

Creates TAP_A and TAP_B in the current network namespace (the caller moves them where they
belong), writes FILE once both exist, and forwards until killed. Frames wait in order: a
constant delay keeps each direction's order.
"""
import argparse
import fcntl
import heapq
import os
import random
import select
import struct
import time

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000


def tap(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH22x", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay-ms", type=float, default=0)
    parser.add_argument("--loss-percent", type=float, default=0)
    parser.add_argument("--ready", required=True)
    parser.add_argument("a")
    parser.add_argument("b")
    options = parser.parse_args()
    a, b = tap(options.a), tap(options.b)
    peer = {a: b, b: a}
    with open(options.ready, "w") as ready:
        ready.write(f"{os.getpid()}\n")
    delay = options.delay_ms / 1000
    loss = options.loss_percent / 100
    waiting: list[tuple[float, int, int, bytes]] = []  # (due, sequence, fd to write, frame)
    sequence = 0
    while True:
        timeout = max(0.0, waiting[0][0] - time.monotonic()) if waiting else None
        readable, _, _ = select.select([a, b], [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    frame = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if random.random() < loss:
                    continue
                sequence += 1
                heapq.heappush(waiting, (now + delay, sequence, peer[fd], frame))
        while waiting and waiting[0][0] <= time.monotonic():
            _, _, fd, frame = heapq.heappop(waiting)
            try:
                os.write(fd, frame)
            except OSError:
                pass  # the other side is down: the frame is lost, as on a cable


if __name__ == "__main__":
    main()
