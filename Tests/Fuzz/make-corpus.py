#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus (Tests/Fuzz/Corpus/<target>/) from the inputs the tests use: framing
rows and parser heads, chunked bodies, range and conditional values, Apple's signed test data and certificates,
verifyReceipt answers and StoreKit payloads. Run from the repository root; the output is committed."""
import base64, glob, os

ROOT = 'Tests/Fuzz/Corpus'
APPLE = 'Tests/AppStoreTests/Fixtures/apple-library'


def write(target, name, data):
    directory = os.path.join(ROOT, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), 'wb') as f:
        f.write(data)


HEADS = [
    "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n",
    "GET /products_v1.json HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nIf-None-Match: \"2f4cebed0b8b46e70500d0b9829bae97\"\r\n"
    "Accept-Encoding: gzip, br;q=0.5\r\n\r\n",
    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
    "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
    "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
    "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    "GET /hello HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n",
    "GET /hello HTTP/1.1\r\nHost : t\r\n\r\n",
    "GET http://t/hello?x=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    "GET http://t?q HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
    "OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n",
    "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "GET /hello HTTP/2.0\r\nHost: t\r\n\r\n",
    "\r\n\r\nGET /v1/packs/level2/3/files/a%2Fb.bin?token=x&available=1 HTTP/1.1\nHost: t\nRange: bytes=0-8,10-\n"
    "If-Range: \"abc\"\n\n",
    "GET /a#frag HTTP/1.1\r\nHost: t\r\n\r\n",
    "GET /hello HTTP/1.1\r\nHost: t\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\nIf-Match: *\r\n"
    "If-Unmodified-Since: Sunday, 06-Nov-94 08:49:37 GMT\r\n\r\n",
]
for i, head in enumerate(HEADS):
    write('FuzzRequestHead', 'seed-%02d' % i, bytes([1 + i * 7 % 97]) + head.encode())

BODIES = ["5;ext=1\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n", "3\r\nabc\r\n0\r\n\r\n", "zz\r\n", "10001\r\n", "1\nA\n0\n\n",
          "fffffffffffffffff\r\n", "4\r\nabcd\r\n0\r\nA: b\r\nC: d\r\n\r\nGET / HTTP/1.1\r\n"]
for i, body in enumerate(BODIES):
    write('FuzzChunkedDecoder', 'seed-%02d' % i, bytes([0x10, 0x00, 1 + i * 5]) + body.encode())

# Lines: Range, If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range, ETag, Last-Modified.
RANGES = [
    ["bytes=0-8", "", "", "", "", ""],
    ["bytes=-10,990-", "\"a\"", "W/\"a\", \"b\"", "", "", ""],
    ["bytes=0-0,2-2,4-4", "*", "", "Sun, 06 Nov 1994 08:49:37 GMT", "", "\"strong\""],
    ["items=0-5", "", "*", "", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"],
    ["bytes=7-1", "", "", "", "", ""],
    ["bytes=--6, 1-2 3-4", "\"x\", W/\"y\"", "", "", "", ""],
    ["bytes=0-1,1-2", "", "", "", "", "Sun, 06 Nov 1994 08:49:37 GMT"],
    ["bytes=-0", "", "", "", "", ""],
    ["bytes=0-99999999999999999999", "", "", "", "", ""],
]
for i, lines in enumerate(RANGES):
    lines = lines + ["\"etag-%d\"" % i, "Sun, 06 Nov 1994 08:49:37 GMT"]
    write('FuzzRangesAndConditions', 'seed-%02d' % i, bytes([0x03, 0xE8, 1 + i]) + "\n".join(lines).encode())

signed = []
for path in sorted(glob.glob(APPLE + '/mock_signed_data/*')) + sorted(glob.glob(APPLE + '/xcode/*')):
    with open(path, 'rb') as f:
        signed.append((os.path.basename(path), f.read().strip()))
for name, jws in signed:
    for choice in range(3):
        write('FuzzSignedData', '%s-%d' % (name, choice), bytes([choice]) + jws)
for path in sorted(glob.glob(APPLE + '/certs/*.der')) + sorted(glob.glob(APPLE + '/test-chain/*.der')) + \
        ['Tests/AppStoreTests/Fixtures/apple/AppleWWDRCA-G6.der']:
    with open(path, 'rb') as f:
        write('FuzzSignedData', 'cert-' + os.path.basename(path), bytes([3]) + f.read())

for path in sorted(glob.glob('Tests/DepotCoreTests/Fixtures/verify-receipt/*.json')):
    with open(path, 'rb') as f:
        write('FuzzReceiptJSON', 'receipt-' + os.path.basename(path), bytes([0]) + f.read())
for name, jws in signed:
    segment = jws.split(b'.')[1]
    payload = base64.urlsafe_b64decode(segment + b'=' * (-len(segment) % 4))
    kind = 3 if 'otification' in name else (2 if 'enewal' in name else 1)
    write('FuzzReceiptJSON', 'payload-' + name, bytes([kind]) + payload)
with open('Tests/AppStoreTests/Fixtures/real-jws/aporat-test-notification.json', 'rb') as f:
    write('FuzzReceiptJSON', 'notification-aporat', bytes([3]) + f.read())
