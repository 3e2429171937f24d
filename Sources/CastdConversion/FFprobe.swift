import CastdSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs ffprobe (Debian's `ffmpeg` package) on a file castd serves, bounded in time and output,
/// and reads what it says into a ``MediaProbe``.
///
/// castd never opens a client's file by path: ffprobe reads it as the device would, from castd's
/// own media server (an HTTP URL with ranges, so that an MP4 whose index is at its end probes
/// too; Debian 12's ffmpeg 5.1 has no `fd:` protocol, and a pipe cannot seek). It runs with no
/// other descriptor of castd's, and is killed once the time limit has passed.
public enum FFprobe {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// No ffprobe executable was found.
        case notInstalled
        /// ffprobe did not finish within the time limit (and was killed).
        case timedOut(Duration)
        /// ffprobe read the input and found no media in it; its message.
        case notMedia(String)
        /// ffprobe's output was not what ffprobe writes (or more than castd reads).
        case unreadable(String)
        /// ffprobe could not be started.
        case cannotRun(String)

        public var description: String {
            switch self {
            case .notInstalled:
                "ffprobe is not installed: castd needs it to learn what a file holds (apt-get install ffmpeg)"
            case .timedOut(let limit): "ffprobe took longer than \(limit) to read the file"
            case .notMedia(let message):
                message.isEmpty ? "the file holds no audio or video castd knows" : "not a media file: \(message)"
            case .unreadable(let reason): "castd could not read what ffprobe said: \(reason)"
            case .cannotRun(let reason): "ffprobe could not be started: \(reason)"
            }
        }
    }

    /// The most of ffprobe's standard output castd reads (a file with hundreds of streams and
    /// tags stays well under it); more is refused as unreadable.
    static let outputLimit = 4 << 20
    /// The most of ffprobe's standard error kept, for the error message.
    static let messageLimit = 2048

    /// The ffprobe on `PATH` (or in `/usr/bin`), nil if there is none.
    public static func locate(path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        let directories = (path ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        return directories.map { $0 + "/ffprobe" }.first { access($0, X_OK) == 0 }
    }

    /// What `input` (a URL or a path ffprobe can read) holds. Waits on a thread of its own, not
    /// on Swift's cooperative pool.
    public static func probe(
        _ input: String, executable: String? = locate(), timeout: Duration = .seconds(10)
    ) async throws(Failure) -> MediaProbe {
        guard let executable else { throw .notInstalled }
        let arguments = [
            executable, "-hide_banner", "-v", "error", "-print_format", "json", "-show_format", "-show_streams",
            "-probesize", "20000000", "-analyzeduration", "10000000", input,
        ]
        let result = await onThread { run(arguments, timeout: timeout) }
        let output = try result.get()
        guard output.status == 0 else {
            throw .notMedia(Self.firstLine(output.stderr))
        }
        return try FFprobeOutput.parse(output.stdout)
    }

    struct Output: Sendable {
        var status: Int32
        var stdout: [UInt8]
        var stderr: [UInt8]
    }

    /// Runs `arguments` to its end or until `timeout` (then kills it), reading both its output
    /// streams at once so that neither fills.
    static func run(_ arguments: [String], timeout: Duration) -> Result<Output, Failure> {
        let started: Spawn.Started
        do {
            started = try Spawn.start(arguments, stdout: .pipe, stderr: .pipe)
        } catch {
            return .failure(.cannotRun("\(error)"))
        }
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var open = [started.stdout!, started.stderr!]
        defer { for fd in open { close(fd) } }
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var failure: Failure?
        while !open.isEmpty, failure == nil {
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                failure = .timedOut(timeout)
                break
            }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                failure = .cannotRun("poll: \(String(cString: strerror(errno)))")
                break
            }
            for entry in fds where entry.revents != 0 {
                let count = read(entry.fd, &buffer, buffer.count)
                if count > 0 {
                    if entry.fd == started.stdout {
                        stdout += buffer.prefix(count)
                        if stdout.count > outputLimit {
                            failure = .unreadable("ffprobe wrote more than \(outputLimit >> 20) MiB")
                        }
                    } else if stderr.count < messageLimit {
                        stderr += buffer.prefix(min(count, messageLimit - stderr.count))
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(entry.fd)
                    open.removeAll { $0 == entry.fd }
                }
            }
        }
        if failure != nil { kill(started.pid, SIGKILL) }
        let status = Spawn.wait(started.pid)
        if let failure { return .failure(failure) }
        return .success(Output(status: status, stdout: stdout, stderr: stderr))
    }

    /// ffprobe's first line of complaint, without the input's name it starts with (a URL with a
    /// token, or a path), bounded.
    static func firstLine(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        // "http://…/TOKEN.mkv: Invalid data found when processing input"
        let message = line.range(of: ": ", options: .backwards).map { String(line[$0.upperBound...]) } ?? line
        return String(message.prefix(200)).filter { !$0.isASCII || ($0.asciiValue! >= 0x20 && $0.asciiValue! < 0x7F) }
    }
}
