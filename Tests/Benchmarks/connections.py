#!/usr/bin/env python3
"""Many concurrent connections to a server, and the server's resident memory while they are open.

  connections.py idle URL --count 1000 --pid PID --hold 10 [--ready FILE]
      Opens COUNT keep-alive connections, sends one GET on each and reads the whole response, then keeps
      them idle for HOLD seconds (writing "ready" to FILE once they all are, so a load generator can run
      meanwhile), then checks how many the server closed.
  connections.py slow URL --count 1000 --pid PID --seconds 12 [--chunk 4096] [--interval 0.5]
      Opens COUNT connections, sends the GET on each, reads the head (expects 200 or 206), then reads CHUNK
      bytes every INTERVAL seconds for SECONDS seconds: slow readers of a large download.

Both print one JSON object: connections opened, errors by kind, and the server's RSS (VmRSS of PID, KB)
before, once all connections are open ("open"), the maximum while they are, and the growth per connection
(idle: open − before; slow: maximum − before).
Options: --header 'Name: value' (repeatable).
"""
import argparse
import asyncio
import json
import resource
import sys
import time
import urllib.parse
from collections import Counter


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Sampler:
    """Samples the server's RSS every 0.25 s while running."""

    def __init__(self, pid):
        self.pid, self.maximum, self.task = pid, 0, None

    async def run(self):
        while True:
            self.maximum = max(self.maximum, rss_kb(self.pid))
            await asyncio.sleep(0.25)

    def start(self):
        self.maximum = rss_kb(self.pid)
        self.task = asyncio.ensure_future(self.run())

    def stop(self):
        self.task.cancel()
        self.maximum = max(self.maximum, rss_kb(self.pid))


def request_bytes(url, headers):
    path = url.path + (("?" + url.query) if url.query else "")
    lines = [f"GET {path or '/'} HTTP/1.1", f"Host: {url.netloc}"] + headers + ["", ""]
    return "\r\n".join(lines).encode()


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return status, length


async def open_all(args, url, errors, buffer_limit):
    """Opens COUNT connections, at most 100 connecting at once; returns the (reader, writer, status, length)s."""
    gate = asyncio.Semaphore(100)
    payload = request_bytes(url, args.header)

    async def one():
        async with gate:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(url.hostname, url.port, limit=buffer_limit), 10)
            except Exception as error:
                errors["connect " + type(error).__name__] += 1
                return None
            try:
                writer.write(payload)
                status, length = await asyncio.wait_for(read_head(reader), 10)
            except Exception as error:
                errors["head " + type(error).__name__] += 1
                writer.close()
                return None
            if status not in (200, 206):
                errors[f"status {status}"] += 1
            return reader, writer, status, length

    opened = await asyncio.gather(*(one() for _ in range(args.count)))
    return [c for c in opened if c is not None]


async def idle(args, url):
    errors = Counter()
    before = rss_kb(args.pid)
    connections = await open_all(args, url, errors, 2 ** 16)
    for reader, writer, status, length in connections:          # finish each response: now idle keep-alive
        try:
            await asyncio.wait_for(reader.readexactly(length), 10)
        except Exception as error:
            errors["body " + type(error).__name__] += 1
    await asyncio.sleep(0.5)
    opened = rss_kb(args.pid)
    sampler = Sampler(args.pid)
    sampler.start()
    if args.ready:
        with open(args.ready, "w") as ready:
            ready.write("ready\n")
    await asyncio.sleep(args.hold)
    sampler.stop()
    closed = 0
    for reader, writer, _, _ in connections:                     # did the server close any of them?
        try:
            if reader.at_eof() or await asyncio.wait_for(reader.read(1), 0.001) == b"":
                closed += 1
        except asyncio.TimeoutError:
            pass
        except Exception:
            closed += 1
        writer.close()
    if closed:
        errors["closed by the server while idle"] += closed
    # Growth per connection from the RSS once they are all idle (the load run meanwhile is not theirs).
    return report(len(connections), errors, before, opened, sampler.maximum, opened, {})


async def slow(args, url):
    errors = Counter()
    before = rss_kb(args.pid)
    # A small stream buffer: asyncio stops reading the socket once it holds 2 × limit, so the kernel's receive
    # buffer fills and the server really meets a slow reader.
    connections = await open_all(args, url, errors, args.chunk)
    await asyncio.sleep(0.5)
    opened = rss_kb(args.pid)
    sampler = Sampler(args.pid)
    sampler.start()
    deadline = time.monotonic() + args.seconds
    received = Counter()

    async def read_slowly(reader, writer, length):
        try:
            while time.monotonic() < deadline:
                await asyncio.sleep(args.interval)
                data = await asyncio.wait_for(reader.read(args.chunk), 30)
                if not data:
                    if received["bytes"] < length:
                        errors["closed early"] += 1
                    return
                received["bytes"] += len(data)
        except Exception as error:
            errors["read " + type(error).__name__] += 1
        finally:
            writer.close()

    await asyncio.gather(*(read_slowly(r, w, n) for r, w, _, n in connections))
    sampler.stop()
    await asyncio.sleep(1)
    return report(len(connections), errors, before, opened, sampler.maximum, sampler.maximum,
                  {"bytes_read": received["bytes"], "rss_after_close_kb": rss_kb(args.pid)})


def report(opened_count, errors, before, opened, maximum, grown, extra):
    result = {
        "connections": opened_count,
        "errors": sum(errors.values()),
        "error_kinds": dict(errors),
        "rss_before_kb": before,
        "rss_open_kb": opened,
        "rss_max_kb": maximum,
        "growth_per_connection_kb": round((grown - before) / max(opened_count, 1), 2),
    }
    result.update(extra)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["idle", "slow"])
    parser.add_argument("url")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--pid", type=int, required=True, help="the server process to watch")
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--hold", type=float, default=10, help="idle: seconds to keep the connections idle")
    parser.add_argument("--ready", help="idle: file written once every connection is idle")
    parser.add_argument("--seconds", type=float, default=12, help="slow: seconds of slow reading")
    parser.add_argument("--chunk", type=int, default=4096, help="slow: bytes per read")
    parser.add_argument("--interval", type=float, default=0.5, help="slow: seconds between reads")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    url = urllib.parse.urlsplit(args.url)
    run = idle if args.mode == "idle" else slow
    print(json.dumps(asyncio.run(run(args, url))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
