import CastProtocol
import CastTestSupport
import CastdSupport
import Foundation

/// An HTTP server on 127.0.0.1 for an emulator to fetch media from, as castd's media server
/// would serve it: a Python process (http.server) with byte ranges (206, 416), that logs every
/// request it gets (method, path, Range) before answering it.
///
/// Paths: `/media/SIZE/NAME` synthetic content of SIZE bytes; `/text/NAME` a small WebVTT file;
/// `/status/CODE/NAME` that status and a short body; `/slow/SECONDS/NAME` a 200 after SECONDS.
final class MediaTestServer: Sendable {
    struct Request: Sendable, Hashable {
        var method: String
        var path: String
        var range: String?
    }

    let port: Int
    private let logPath: String

    private init(port: Int, logPath: String) {
        self.port = port
        self.logPath = logPath
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Every request so far, in the order they came.
    var requests: [Request] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let json = try? JSONValue.parse(String(line)), let method = json["method"]?.stringValue,
                let path = json["path"]?.stringValue
            else { return nil }
            return Request(method: method, path: path, range: json["range"]?.stringValue)
        }
    }

    func requests(for path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Runs `body` with a server started for it, stopped afterwards.
    static func with<T>(_ body: (MediaTestServer) async throws -> T) async throws -> T {
        try await withTemporaryDirectory { directory in
            let script = directory + "/media_server.py"
            let log = directory + "/requests.jsonl"
            try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            return try await withProcesses { launch in
                let process = try launch("/usr/bin/python3", [script, log], [:])
                var port: Int?
                try await eventually(timeout: .seconds(30), "the media server's port") {
                    try process.checkRunning()
                    port = process.stdout.split(separator: "\n").first.flatMap { Int($0) }
                    return port != nil
                }
                return try await body(MediaTestServer(port: port ?? 0, logPath: log))
            }
        }
    }

    /// The byte at `offset` of every `/media/` file: what a test can check a range against.
    static func byte(at offset: Int) -> UInt8 { UInt8((offset * 7 + 3) % 251) }

    static let script = #"""
        import http.server, json, sys, threading, time

        LOG = sys.argv[1]
        LOCK = threading.Lock()

        def content(start, end):
            return bytes((i * 7 + 3) % 251 for i in range(start, end + 1))

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):
                pass

            def record(self):
                entry = {"method": self.command, "path": self.path, "range": self.headers.get("Range")}
                with LOCK:
                    with open(LOG, "a") as log:
                        log.write(json.dumps(entry) + "\n")

            def answer(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                self.close_connection = True

            def do_HEAD(self):
                self.do_GET()

            def do_GET(self):
                self.record()
                parts = self.path.split("?")[0].split("/")
                if len(parts) >= 4 and parts[1] == "media":
                    self.media(int(parts[2]))
                elif len(parts) >= 3 and parts[1] == "text":
                    self.answer(200, b"WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n", [("Content-Type", "text/vtt")])
                elif len(parts) >= 4 and parts[1] == "status":
                    self.answer(int(parts[2]), b"status\n", [("Content-Type", "text/plain")])
                elif len(parts) >= 4 and parts[1] == "slow":
                    time.sleep(float(parts[2]))
                    self.answer(200, b"late\n", [("Content-Type", "video/mp4")])
                else:
                    self.answer(404, b"not found\n")

            def media(self, size):
                kind = [("Content-Type", "video/mp4"), ("Accept-Ranges", "bytes")]
                wanted = self.headers.get("Range")
                if not wanted:
                    self.answer(200, content(0, size - 1), kind)
                    return
                first, _, last = wanted.replace("bytes=", "").partition("-")
                start = int(first)
                end = min(int(last), size - 1) if last else size - 1
                if start >= size:
                    self.answer(416, b"", kind + [("Content-Range", "bytes */%d" % size)])
                    return
                self.answer(206, content(start, end), kind + [("Content-Range", "bytes %d-%d/%d" % (start, end, size))])

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#
}
