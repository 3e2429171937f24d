import CastdAPI
import CastdSupport
import Foundation
import Logging
import SwiftProtobuf

#if canImport(Glibc)
    import Glibc
#endif

/// castd's files socket (rpc.proto: "The files socket"): clients hand castd open descriptors of
/// their own files, with SCM_RIGHTS, and get a handle for each to name it in a Load.
///
/// SwiftNIO's stream channels read with read(2), which drops ancillary data, so this socket is
/// served apart from the RPC socket, by one thread that polls its few short-lived connections
/// and reads each with recvmsg(2). Everything a client sends is bounded: bytes per request,
/// descriptors per request and per connection, time to send a request, idle time, connections.
public final class FileHandoverServer: Sendable {
    public struct Limits: Sendable {
        /// Descriptors in one request.
        public var descriptorsPerRequest = FilesSocketProtocol.descriptorsPerRequest
        /// A request's FileHandover, encoded.
        public var requestBytes = FilesSocketProtocol.requestBytes
        /// Connections open at once; more are refused with RESOURCE_EXHAUSTED.
        public var connections = 64
        /// Time for a request to arrive whole once its first byte has.
        public var requestTimeout: Duration = .seconds(10)
        /// A connection that sends no request this long is closed (its untaken handles with it).
        public var idleTimeout: Duration = .seconds(120)

        public init() {}
    }

    public let path: String
    let listening: Int32
    let policy: CastdAccessPolicy
    let files: HandedFiles
    let limits: Limits
    let logger: Logger
    /// Written to wake the thread for `stop()`.
    private let wake: (read: Int32, write: Int32)
    private let stopped = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Serves `listening` (a bound, listening Unix stream socket, which it closes when it stops).
    public init(
        listening: Int32, path: String, policy: CastdAccessPolicy, files: HandedFiles, limits: Limits = .init(),
        logger: Logger
    ) throws(CastdError) {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            throw CastdError(.unavailable, "cannot make a pipe for the files socket: \(Errno.current)")
        }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        self.listening = listening
        self.path = path
        self.policy = policy
        self.files = files
        self.limits = limits
        self.logger = logger
        wake = (pipe[0], pipe[1])
        _ = fcntl(listening, F_SETFL, fcntl(listening, F_GETFL) | O_NONBLOCK)
    }

    /// Starts serving on a thread of its own.
    public func start() {
        let thread = Thread { [self] in
            var loop = FileHandoverLoop(server: self)
            loop.run()
            finished.signal()
        }
        thread.name = "castd-files"
        thread.start()
    }

    /// Stops serving: closes every connection (their untaken files with them) and the socket.
    /// Returns once the thread has stopped.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        finished.wait()
        close(wake.read)
        close(wake.write)
    }

    var wakeDescriptor: Int32 { wake.read }
    var isStopped: Bool { stopped.withLock { $0 } }
}

/// One connection to the files socket.
struct FileHandoverConnection {
    let id: Int
    let fd: Int32
    let peer: PeerCredentials
    var input: [UInt8] = []
    /// Descriptors received and not yet matched to a request, in order.
    var descriptors: [Int32] = []
    var output: [UInt8] = []
    /// When the request in `input` began (its first byte), if one has.
    var requestStarted: ContinuousClock.Instant?
    var lastRequest: ContinuousClock.Instant
    /// Set once the connection is to be closed when its output has gone.
    var closing = false
}
