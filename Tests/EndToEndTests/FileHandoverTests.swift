import CastClient
import CastTestSupport
import CastdAPI
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// castd's files socket (rpc.proto, "The files socket") against a real castd process: what it
/// takes (regular files open for reading), what it refuses and why, its bound, and that it
/// lets go of every descriptor it was given (counted in /proc/PID/fd).
extension SystemServiceTests {
    /// Hands over one descriptor as a Python program does it (`socket.send_fds`): an
    /// implementation of the protocol independent of CastClient's. Prints the status code, or
    /// `OK <handles>`.
    static let pythonHandover = #"""
        import os, socket, struct, sys

        def varint(n):
            out = b""
            while True:
                b = n & 0x7F
                n >>= 7
                out += bytes([b | (0x80 if n else 0)])
                if not n:
                    return out

        path, file = sys.argv[1], sys.argv[2]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        s.connect(path)
        name = os.path.basename(file).encode()
        body = bytes([0x0A]) + varint(len(name)) + name  # FileHandover.names (field 1)
        fd = os.open(file, os.O_RDONLY)
        socket.send_fds(s, [struct.pack(">I", len(body)) + body], [fd])
        os.close(fd)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if len(data) >= 4 and len(data) >= 4 + struct.unpack(">I", data[:4])[0]:
                break
        (length,) = struct.unpack(">I", data[:4])
        response = data[4:4 + length]
        # FileHandoverResponse: handles = 1 (strings), status = 2 (Status: code = 1).
        if response[:1] == b"\x0A":
            print("OK", response[2:2 + response[1]].decode())
        else:
            status = response[2:2 + response[1]]
            print(status[1] if status[:1] == b"\x08" else 0)
        """#

    /// The number of descriptors `pid` has open.
    static func openDescriptors(of pid: pid_t) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    @Test func filesAreHandedOverCheckedAndLetGo() async throws {
        try await withDaemon { daemon in
            let file = daemon.directory + "/movie.mp4"
            try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: file))
            let baseline = try Self.openDescriptors(of: daemon.castd.pid)
            let handover = try CastdFileHandover.connect(socketPath: daemon.socket)

            let readable = open(file, O_RDONLY | O_CLOEXEC)
            defer { close(readable) }
            let handles = try handover.handOver([(readable, "movie.mp4"), (readable, "again.mp4")])
            #expect(handles.count == 2 && Set(handles).count == 2)
            #expect(handles.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) }, "\(handles)")
            #expect(try Self.openDescriptors(of: daemon.castd.pid) == baseline + 2 + 1)  // and the connection

            // Each kind of descriptor castd must not take, refused whole with the reason; the
            // connection goes on.
            let directory = open(daemon.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            let unixSocket = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            let writeOnly = open(file, O_WRONLY | O_CLOEXEC)
            let pathOnly = open(file, 0o10_000_000 | O_CLOEXEC)  // O_PATH
            defer { for fd in [directory, unixSocket, writeOnly, pathOnly] { close(fd) } }
            for (fd, why) in [
                (directory, "is a directory"), (unixSocket, "is a socket"), (writeOnly, "open for writing only"),
                (pathOnly, "O_PATH"),
            ] {
                #expect(fd >= 0)
                let error = try #require(throws: CastdError.self) {
                    try handover.handOver([(readable, "fine.mp4"), (fd, "bad")])
                }
                #expect(error.code == .invalidArgument && error.message.contains(why), "\(error)")
                #expect(error.message.contains("file 2 (bad)"), "\(error)")
            }
            #expect(try handover.handOver([(readable, "after.mp4")]).count == 1)
            #expect(try Self.openDescriptors(of: daemon.castd.pid) == baseline + 3 + 1)

            // Once the connection goes, castd closes every descriptor no call took.
            _ = consume handover
            try await eventually("castd to close the handed-over files") {
                try Self.openDescriptors(of: daemon.castd.pid) == baseline
            }
        }
    }

    @Test func handedOverFilesAreBoundedAndLeakNothing() async throws {
        try await withDaemon { daemon in
            let file = daemon.directory + "/song.flac"
            try Data(repeating: 1, count: 16).write(to: URL(fileURLWithPath: file))
            let original = open(file, O_RDONLY | O_CLOEXEC)
            defer { close(original) }
            let baseline = try Self.openDescriptors(of: daemon.castd.pid)
            let handover = try CastdFileHandover.connect(socketPath: daemon.socket)
            // 4096 untaken handles a connection may hold (rpc.proto), handed over 64 at a time.
            let batch = (0..<CastdFileHandover.batch).map { _ in (original, "song.flac") }
            for _ in 0..<(4096 / CastdFileHandover.batch) {
                #expect(try handover.handOver(batch).count == batch.count)
            }
            let error = try #require(throws: CastdError.self) { try handover.handOver([(original, "one more.flac")]) }
            #expect(error.code == .resourceExhausted && error.message.contains("4096"), "\(error)")
            #expect(try Self.openDescriptors(of: daemon.castd.pid) == baseline + 4096 + 1)
            _ = consume handover
            try await eventually("castd to close 4096 handed-over files") {
                try Self.openDescriptors(of: daemon.castd.pid) == baseline
            }
        }
    }

    @Test func aReaderMayNotHandOverFiles() async throws {
        try await withDaemon(castdArguments: ["--read-group", "\(Self.readGroup)"]) { daemon in
            let script = daemon.directory + "/handover.py"
            try Self.pythonHandover.write(toFile: script, atomically: true, encoding: .utf8)
            let file = daemon.directory + "/clip.webm"
            try Data(repeating: 2, count: 64).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o644)
            let baseline = try Self.openDescriptors(of: daemon.castd.pid)
            let asReader = try await run(
                "/usr/bin/setpriv",
                ["--reuid", "\(Self.reader)", "--regid", "\(Self.reader)", "--groups", "\(Self.readGroup)"]
                    + ["/usr/bin/python3", script, daemon.socket + ".files", file],
                environment: daemon.environment)
            #expect(asReader.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "7", "\(asReader)")
            // The owner hands the same file over with the same program: the protocol as written.
            let asOwner = try await run("/usr/bin/python3", [script, daemon.socket + ".files", file])
            #expect(asOwner.stdout.hasPrefix("OK "), "\(asOwner)")
            #expect(asOwner.stdout.count == "OK ".count + 32 + 1, "\(asOwner)")
            try await eventually("castd to close what the reader sent") {
                try Self.openDescriptors(of: daemon.castd.pid) == baseline
            }
        }
    }
}
