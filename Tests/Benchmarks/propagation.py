#!/usr/bin/env python3
"""Revocation propagation across instances on one PostgreSQL ledger (issue 10).

For each of COUNT purchases: the StoreKit 2 transaction is posted to the first instance (POST /v1/receipts),
its token is checked to open the pack's manifest on every other instance, then the REFUND notification of
that transaction is posted to the first instance. From the moment its 200 arrives, every other instance is
polled (GET the manifest with the old token, one keep-alive connection each, every POLL_MS) until it answers
403 revoked; the delay is that moment minus the acknowledgement. Prints one JSON object: every delay (ms), the
p50/p99/max over them, the refund's own latency, and what went wrong (timeouts, unexpected statuses).

    propagation.py --ports A,B,C --transactions FILE --refunds FILE [--start N] [--count 200] [--pack level2]
"""
import argparse
import http.client
import json
import time


def percentile(values, fraction):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-fraction * len(ordered) // 1))))
    return ordered[rank - 1]


class Instance:
    """One keep-alive connection to one instance; reconnects once when the server closed it."""

    def __init__(self, port):
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def request(self, method, path, body=None, headers=None):
        headers = dict(headers or {})
        if body is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                if attempt == 2:
                    raise


def error_code(body):
    try:
        return json.loads(body).get("error", {}).get("code") if body else None
    except (ValueError, AttributeError):
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ports", required=True)
    parser.add_argument("--transactions", required=True)
    parser.add_argument("--refunds", required=True)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--pack", default="level2")
    parser.add_argument("--poll-ms", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()

    transactions = [line.strip() for line in open(args.transactions) if line.strip()]
    refunds = [line.strip() for line in open(args.refunds) if line.strip()]
    if args.start + args.count > min(len(transactions), len(refunds)):
        raise SystemExit("propagation.py: not enough transactions/refunds in the files")
    instances = [Instance(int(port)) for port in args.ports.split(",")]
    origin, others = instances[0], instances[1:]
    manifest = f"/v1/packs/{args.pack}/manifest"
    delays, refund_ms, problems = [], [], {}

    def problem(kind):
        problems[kind] = problems.get(kind, 0) + 1

    for index in range(args.start, args.start + args.count):
        status, body = origin.request("POST", "/v1/receipts", json.dumps({"transactions": [transactions[index]]}))
        entitlements = json.loads(body).get("entitlements", []) if status == 200 else []
        if not entitlements:
            problem(f"purchase {status}")
            continue
        auth = {"Authorization": "Bearer " + entitlements[0]["token"]}
        if any(other.request("GET", manifest, headers=auth)[0] != 307 for other in others):
            problem("token refused before the refund")
            continue
        sent = time.monotonic()
        status, body = origin.request("POST", "/v1/notifications/appstore", json.dumps({"signedPayload": refunds[index]}))
        acknowledged = time.monotonic()
        if status != 200:
            problem(f"refund {status}")
            continue
        refund_ms.append((acknowledged - sent) * 1000)
        status, body = origin.request("GET", manifest, headers=auth)
        if status != 403 or error_code(body) != "revoked":
            problem(f"origin answered {status} after its acknowledgement")
        pending = list(others)
        while pending:
            now = time.monotonic()
            for other in list(pending):
                status, body = other.request("GET", manifest, headers=auth)
                if status == 403:
                    delays.append((time.monotonic() - acknowledged) * 1000)
                    pending.remove(other)
                    if error_code(body) != "revoked":
                        problem(f"403 {error_code(body)}")
                elif status != 307:
                    problem(f"poll {status}")
            if pending and now - acknowledged > args.timeout:
                for _ in pending:
                    problem("not refused within the timeout")
                    delays.append(args.timeout * 1000)
                break
            if pending:
                time.sleep(args.poll_ms / 1000)

    result = {
        "revocations": len(refund_ms), "instances_polled": len(others), "delays_ms": [round(d, 3) for d in delays],
        "p50_ms": round(percentile(delays, 0.5), 3) if delays else None,
        "p99_ms": round(percentile(delays, 0.99), 3) if delays else None,
        "max_ms": round(max(delays), 3) if delays else None,
        "refund_p50_ms": round(percentile(refund_ms, 0.5), 3) if refund_ms else None,
        "poll_ms": args.poll_ms, "problems": problems,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
