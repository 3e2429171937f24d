"""Warm GetStatus latency through the Python client (castd-bench, figure 9).

    python benchmarks/python_warm_call.py --socket PATH [--calls N] [--warmup N] [--sync]

Run with a Python that has the castd package (``pip install ./clients/python``). Connects
once, makes ``--warmup`` GetStatus calls untimed (default 3000), then ``--calls`` timed ones
(default 30000), one after the other on that connection, and prints each timed call's latency
on a line of its own: microseconds with three decimals, from just before the call to just after
its decoded response came back (time.perf_counter_ns). The latencies are printed once the calls
are done. By default through the asyncio client (``async with castd.connect(...)``, awaited in
this script's event loop); ``--sync`` through ``castd.connect_sync``, whose calls run on the
client's own event-loop thread.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

import castd


async def measure_async(socket: str, warmup: int, calls: int) -> list[int]:
    latencies: list[int] = []
    clock = time.perf_counter_ns
    async with castd.connect(socket) as client:
        for _ in range(warmup):
            await client.get_status()
        for _ in range(calls):
            started = clock()
            await client.get_status()
            latencies.append(clock() - started)
    return latencies


def measure_sync(socket: str, warmup: int, calls: int) -> list[int]:
    latencies: list[int] = []
    clock = time.perf_counter_ns
    with castd.connect_sync(socket) as client:
        for _ in range(warmup):
            client.get_status()
        for _ in range(calls):
            started = clock()
            client.get_status()
            latencies.append(clock() - started)
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--calls", type=int, default=30000)
    parser.add_argument("--warmup", type=int, default=3000)
    parser.add_argument("--sync", action="store_true", help="use castd.connect_sync")
    options = parser.parse_args()
    if options.calls < 1 or options.warmup < 0:
        parser.error("--calls must be at least 1 and --warmup not negative")
    try:
        if options.sync:
            latencies = measure_sync(options.socket, options.warmup, options.calls)
        else:
            latencies = asyncio.run(measure_async(options.socket, options.warmup, options.calls))
    except castd.CastdError as error:
        print(f"python_warm_call: {error}", file=sys.stderr)
        return int(error.code) or 1
    sys.stdout.write("".join(f"{ns // 1000}.{ns % 1000:03d}\n" for ns in latencies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
