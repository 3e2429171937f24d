/// The Python clients the tests run (python3's http.client and raw sockets: a client that
/// shares no code with the server). Each takes its arguments, then the test time scale last; it
/// exits 0 when what it checks holds, else fails with a message on stderr.
enum PythonClients {
    static let prelude = """
        import http.client, json, os, socket, sys, threading, time
        SCALE = float(sys.argv[-1])
        TIMEOUT = 30 * SCALE

        def connect(port, rcvbuf=None):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if rcvbuf:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            s.settimeout(TIMEOUT)
            s.connect(("127.0.0.1", port))
            return s

        def read_head(s):
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                chunk = s.recv(4096)
                assert chunk, "closed before the head: %r" % data
                data += chunk
            head, rest = data.split(b"\\r\\n\\r\\n", 1)
            return head.decode(), rest

        def read_to_end(s):
            data = bytearray()
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        return bytes(data), "eof"
                    data += chunk
            except ConnectionResetError:
                return bytes(data), "reset"

        """

    /// Several requests on one connection (http.client's socket stays the same), then a
    /// `Connection: close` request on a raw socket that the server must close, pipelined
    /// requests, and HTTP/1.0 with and without keep-alive.
    /// Arguments: port, path, file.
    static let keepAlive =
        prelude + """
            port, path, expected = int(sys.argv[1]), sys.argv[2], open(sys.argv[3], "rb").read()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            conn.connect()
            first = conn.sock
            for i in range(10):
                start = i * 1000
                conn.request("GET", path, headers={"Range": "bytes=%d-%d" % (start, start + 999)})
                r = conn.getresponse()
                body = r.read()
                assert r.status == 206, r.status
                assert body == expected[start:start + 1000], "body %d differs" % i
                assert conn.sock is first, "http.client reconnected after request %d" % i
            conn.request("HEAD", path)
            r = conn.getresponse()
            assert r.status == 200 and r.read() == b"", r.status
            assert int(r.getheader("Content-Length")) == len(expected)
            conn.request("GET", path)
            r = conn.getresponse()
            assert r.status == 200 and r.read() == expected
            assert conn.sock is first, "http.client reconnected"
            conn.close()

            s = connect(port)
            s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\nRange: bytes=0-9\\r\\nConnection: close\\r\\n\\r\\n" % path).encode())
            data, how = read_to_end(s)
            assert how == "eof", how
            head, body = data.split(b"\\r\\n\\r\\n", 1)
            assert head.startswith(b"HTTP/1.1 206"), head
            assert b"connection: close" in head.lower(), head
            assert body == expected[:10], body

            # Pipelined: four requests in one write, the last saying close, and a fifth behind it
            # that is not answered; the answers come in order.
            s = connect(port)
            ranged = "GET %s HTTP/1.1\\r\\nHost: x\\r\\nRange: bytes=%d-%d\\r\\n%s\\r\\n"
            requests = [ranged % (path, i * 100, i * 100 + 99, "") for i in range(3)]
            requests.append(ranged % (path, 0, 4, "Connection: close\\r\\n"))
            requests.append("GET %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % path)
            s.sendall("".join(requests).encode())
            data, how = read_to_end(s)
            assert how == "eof", how
            answers = []
            while data:
                head, data = data.split(b"\\r\\n\\r\\n", 1)
                fields = [l.split(b":", 1) for l in head.split(b"\\r\\n")[1:]]
                length = int([v for k, v in fields if k.lower() == b"content-length"][0])
                answers.append((head.split(b" ")[1], data[:length]))
                data = data[length:]
            assert [a[0] for a in answers] == [b"206"] * 4, answers
            assert [a[1] for a in answers] == [expected[0:100], expected[100:200], expected[200:300], expected[0:5]]

            # HTTP/1.0: closed after the answer unless it asks to keep alive.
            s = connect(port)
            s.sendall(("GET %s HTTP/1.0\\r\\nRange: bytes=0-9\\r\\n\\r\\n" % path).encode())
            data, how = read_to_end(s)
            assert how == "eof" and data.startswith(b"HTTP/1.1 206") and data.endswith(expected[:10]), data
            s = connect(port)
            s.sendall(("HEAD %s HTTP/1.0\\r\\nConnection: keep-alive\\r\\n\\r\\n" % path).encode())
            head, rest = read_head(s)
            assert "connection: keep-alive" in head.lower(), head
            s.sendall(("HEAD %s HTTP/1.0\\r\\n\\r\\n" % path).encode())
            data, how = read_to_end(s)
            assert how == "eof" and data.startswith(b"HTTP/1.1 200"), data
            print("ok")
            """

    /// `count` clients, each on its own connection, all connected before any asks, each for a
    /// random range of the file, checked byte for byte. Arguments: port, path, file, count.
    static let concurrentRanges =
        prelude + """
            import random
            port, path, expected, count = int(sys.argv[1]), sys.argv[2], open(sys.argv[3], "rb").read(), int(sys.argv[4])
            size = len(expected)
            barrier = threading.Barrier(count)
            errors, done = [], []
            def client(i):
                try:
                    rnd = random.Random(i)
                    a = rnd.randrange(size)
                    b = rnd.randrange(a, size)
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT * 2)
                    conn.connect()
                    barrier.wait(timeout=TIMEOUT * 2)
                    conn.request("GET", path, headers={"Range": "bytes=%d-%d" % (a, b)})
                    r = conn.getresponse()
                    body = r.read()
                    if r.status != 206 or r.getheader("Content-Range") != "bytes %d-%d/%d" % (a, b, size):
                        errors.append("%d: %d %s" % (i, r.status, r.getheader("Content-Range")))
                    elif body != expected[a:b + 1]:
                        errors.append("%d: body of %d bytes differs" % (i, len(body)))
                    else:
                        done.append(i)
                    conn.close()
                except Exception as e:
                    errors.append("%d: %r" % (i, e))
            threads = [threading.Thread(target=client, args=(i,)) for i in range(count)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors and len(done) == count, errors
            print("ok %d" % len(done))
            """

    /// A request whose head is 1 MiB: prints the answer's status line (or "" if none came).
    /// Arguments: port, path.
    static let hugeHead =
        prelude + """
            port, path = int(sys.argv[1]), sys.argv[2]
            s = connect(port)
            head = ("GET %s HTTP/1.1\\r\\nHost: x\\r\\nX-Big: " % path + "a" * (1 << 20) + "\\r\\n\\r\\n").encode()
            def send():
                try:
                    s.sendall(head)
                except OSError:
                    pass
            sender = threading.Thread(target=send)
            sender.start()
            data, how = read_to_end(s)
            sender.join()
            print(data.split(b"\\r\\n", 1)[0].decode())
            """

    /// Holds `limit` responses of a large file open (reads only their heads), checks that one
    /// more request for it gets 503 while `other` still answers, lets go, and waits for the file
    /// to answer again. Arguments: port, path, other path, limit.
    static let perTokenLimit =
        prelude + """
            port, path, other, limit = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
            holders = []
            for i in range(limit):
                s = connect(port, rcvbuf=4096)
                s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % path).encode())
                head, _ = read_head(s)
                assert head.startswith("HTTP/1.1 200"), head
                holders.append(s)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            conn.request("GET", path, headers={"Range": "bytes=0-9"})
            r = conn.getresponse()
            r.read()
            assert r.status == 503, r.status
            assert r.getheader("Retry-After") == "1", r.getheaders()
            conn.request("GET", other, headers={"Range": "bytes=0-9"})
            r = conn.getresponse()
            assert r.status == 206 and len(r.read()) == 10, r.status
            for s in holders:
                s.close()
            deadline = time.monotonic() + TIMEOUT
            while True:
                conn.request("GET", path, headers={"Range": "bytes=0-9"})
                r = conn.getresponse()
                r.read()
                if r.status == 206:
                    break
                assert r.status == 503, r.status
                assert time.monotonic() < deadline, "still 503 after the holders closed"
                time.sleep(0.02)
            print("ok")
            """

    /// Holds `limit` connections (one answered request each), checks that one more is answered
    /// 503 and closed, closes them, and waits for a new connection to be served.
    /// Arguments: port, path, limit.
    static let connectionLimit =
        prelude + """
            port, path, limit = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
            holders = []
            for i in range(limit):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
                conn.request("HEAD", path)
                r = conn.getresponse()
                r.read()
                assert r.status == 200, r.status
                holders.append(conn)
            s = connect(port)
            data, how = read_to_end(s)
            assert data.startswith(b"HTTP/1.1 503"), data
            for conn in holders:
                conn.close()
            deadline = time.monotonic() + TIMEOUT
            while True:
                s = connect(port)
                s.sendall(("HEAD %s HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n" % path).encode())
                data, how = read_to_end(s)
                if data.startswith(b"HTTP/1.1 200"):
                    break
                assert data.startswith(b"HTTP/1.1 503"), data
                assert time.monotonic() < deadline, "still refused after the others closed"
                time.sleep(0.02)
            print("ok")
            """

    /// Downloads a large file slowly (a small receive buffer), truncates it after the first MiB
    /// and reads on: the server must end the connection before the promised length.
    /// Prints {"length": Content-Length, "received": body bytes, "end": "eof"|"reset"}.
    /// Arguments: port, path, file.
    static let truncateWhileReading =
        prelude + """
            port, path, file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
            s = connect(port, rcvbuf=16384)
            s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % path).encode())
            head, body = read_head(s)
            assert head.startswith("HTTP/1.1 200"), head
            length = [int(l.split(":", 1)[1]) for l in head.split("\\r\\n") if l.lower().startswith("content-length:")][0]
            received = len(body)
            while received < (1 << 20):
                chunk = s.recv(16384)
                assert chunk, "closed early"
                received += len(chunk)
            os.truncate(file, 512 * 1024)
            rest, how = read_to_end(s)
            received += len(rest)
            print(json.dumps({"length": length, "received": received, "end": how}))
            """

    /// Opens a connection, asks once, and then waits for the server to close it; then opens
    /// one that never asks and waits for that to close too. Prints the seconds from the request
    /// to the first close (the server's timer starts after the request came, so no less than
    /// the idle timeout). Arguments: port, path.
    static let idleClose =
        prelude + """
            port, path = int(sys.argv[1]), sys.argv[2]
            s = connect(port)
            start = time.monotonic()
            s.sendall(("HEAD %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % path).encode())
            head, rest = read_head(s)
            assert head.startswith("HTTP/1.1 200"), head
            data, how = read_to_end(s)
            assert data == b"" and how == "eof", (data, how)
            silent = connect(port)
            data, how = read_to_end(silent)
            assert data == b"" and how == "eof", (data, how)
            print("%.3f" % (time.monotonic() - start))
            """

    /// Starts a download, says "started" once the head is in (the unread rest holds the
    /// server's response in flight: its receive window stays small), waits for the file `go` to exist, then reads to the end and checks the body against `expected`.
    /// Arguments: port, path, go, expected.
    static let holdThenRead =
        prelude + """
            port, path, go, expected = int(sys.argv[1]), sys.argv[2], sys.argv[3], open(sys.argv[4], "rb").read()
            s = connect(port)
            s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n" % path).encode())
            head, body = read_head(s)
            assert head.startswith("HTTP/1.1 200"), head
            print("started", flush=True)
            deadline = time.monotonic() + TIMEOUT
            while not os.path.exists(go):
                assert time.monotonic() < deadline, "no go"
                time.sleep(0.01)
            rest, how = read_to_end(s)
            assert how == "eof", how
            assert body + rest == expected, "body differs: %d of %d bytes" % (len(body + rest), len(expected))
            print("ok")
            """

    /// Asks for a whole file with a 4 KiB receive buffer, then takes one byte a tick (50 ms,
    /// scaled) for `ticks` ticks: a reader slower than any TV. Prints "ok" and the bytes read.
    /// Arguments: port, path, ticks.
    static let slowReader =
        prelude + """
            port, path, ticks = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
            s = connect(port, rcvbuf=4096)
            s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % path).encode())
            head, body = read_head(s)
            assert head.startswith("HTTP/1.1 200"), head
            received = len(body)
            for _ in range(ticks):
                chunk = s.recv(1)
                assert chunk, "closed early"
                received += 1
                time.sleep(0.05 * SCALE)
            print("ok", received)
            """
}
