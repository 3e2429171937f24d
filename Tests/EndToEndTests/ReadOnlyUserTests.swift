import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// Every control method, called over the real socket by a real process running as a member of
/// `access.read_groups` only, is refused with PERMISSION_DENIED; every read method is let through
/// (SECURITY.md, attacker 5). The caller is a small Python program speaking castd.v1's framing
/// by hand (a 4-byte big-endian length, then a `Frame`), run through setpriv as the reader, so
/// that castd judges a real peer's credentials.
extension SystemServiceTests {
    /// Sends `CallStart(method, empty request)` for each method given on the command line, each
    /// on a connection of its own, and prints `METHOD CODE` for the first status frame it gets
    /// (or `METHOD OPEN` when the call answered with a message first: a stream that began).
    static let rawCaller = #"""
        import socket, struct, sys

        def varint(n):
            out = b""
            while True:
                b = n & 0x7F
                n >>= 7
                out += bytes([b | (0x80 if n else 0)])
                if not n:
                    return out

        def field(number, wire, payload):
            key = varint((number << 3) | wire)
            return key + (varint(len(payload)) + payload if wire == 2 else payload)

        def read_varint(data, i):
            shift = n = 0
            while True:
                b = data[i]; i += 1
                n |= (b & 0x7F) << shift; shift += 7
                if b < 0x80:
                    return n, i

        def fields(data):
            i, out = 0, []
            while i < len(data):
                key, i = read_varint(data, i)
                number, wire = key >> 3, key & 7
                if wire == 0:
                    value, i = read_varint(data, i)
                elif wire == 2:
                    length, i = read_varint(data, i)
                    value = data[i:i + length]; i += length
                else:
                    raise ValueError("wire type %d" % wire)
                out.append((number, value))
            return out

        def recv_exact(s, n):
            data = b""
            while len(data) < n:
                chunk = s.recv(n - len(data))
                if not chunk:
                    raise EOFError
                data += chunk
            return data

        path = sys.argv[1]
        for method in sys.argv[2:]:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(20)
            s.connect(path)
            start = field(1, 2, method.encode()) + field(2, 2, b"")
            frame = field(1, 0, varint(1)) + field(2, 2, start)
            s.sendall(struct.pack(">I", len(frame)) + frame)
            (length,) = struct.unpack(">I", recv_exact(s, 4))
            kinds = dict(fields(recv_exact(s, length)))
            if 4 in kinds:
                code = dict(fields(kinds[4])).get(1, 0)
                print(method, code)
            else:
                print(method, "OPEN")
            s.close()
        """#

    @Test func aReaderIsRefusedEveryControlMethodEndToEnd() async throws {
        try await withDaemon(castdArguments: ["--read-group", "\(Self.readGroup)"]) { daemon in
            let script = daemon.directory + "/raw_call.py"
            try Self.rawCaller.write(toFile: script, atomically: true, encoding: .utf8)
            let methods = CastdMethod.allCases
            let result = try await run(
                "/usr/bin/setpriv",
                ["--reuid", "\(Self.reader)", "--regid", "\(Self.reader)", "--groups", "\(Self.readGroup)"]
                    + ["/usr/bin/python3", script, daemon.socket] + methods.map(\.path),
                environment: daemon.environment, timeout: .seconds(120))
            #expect(result.status == 0, "\(result)")
            var answers: [String: String] = [:]
            for line in result.stdout.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2 { answers[String(parts[0])] = String(parts[1]) }
            }
            let denied = "\(CastdCode.permissionDenied.rawValue)"
            for method in methods {
                let answer = try #require(answers[method.path], "no answer for \(method.path): \(result)")
                if method.requiredAccess == .control {
                    #expect(answer == denied, "\(method.rawValue) answered \(answer) to a reader")
                } else {
                    #expect(answer != denied, "\(method.rawValue) refused to a reader")
                }
            }
            #expect(
                methods.contains { $0.requiredAccess == .control } && methods.contains { $0.requiredAccess != .control }
            )
        }
    }

    /// `castc queue` as a reader lists the queue (it asked the device for its status, which
    /// needs control, and failed): castd's last status of the device, with every item.
    @Test func aReaderListsTheQueue() async throws {
        try await withDaemon(castdArguments: ["--read-group", "\(Self.readGroup)"]) { daemon in
            let loaded = try await daemon.castc([
                "queue", "load", "https://example.com/one.mp3", "https://example.com/two.mp3",
                "https://example.com/three.mp3",
            ])
            #expect(loaded.status == 0, "\(loaded)")
            let listed = try await daemon.castc(uid: Self.reader, groups: [Self.readGroup], ["queue", "--json"])
            #expect(listed.status == 0, "\(listed)")
            for name in ["one", "two", "three"] {
                #expect(listed.stdout.contains("https://example.com/\(name).mp3"), "\(listed)")
            }
            let table = try await daemon.castc(uid: Self.reader, groups: [Self.readGroup], ["queue", "list"])
            #expect(table.status == 0 && table.stdout.contains("three.mp3"), "\(table)")
        }
    }
}
