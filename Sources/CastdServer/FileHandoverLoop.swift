import CastdAPI
import CastdSupport
import Logging
import SwiftProtobuf

#if canImport(Glibc)
    import Glibc
#endif

/// The files socket's thread: one poll(2) over the listening socket and its connections.
struct FileHandoverLoop {
    let server: FileHandoverServer
    var connections: [Int32: FileHandoverConnection] = [:]
    var nextID = 0
    let clock = ContinuousClock()

    /// Output a connection may have waiting before castd stops reading it.
    static let outputLimit = 64 * 1024
    /// How long a connection that is being closed may take to read castd's last answer.
    static let lingering: Duration = .seconds(2)

    init(server: FileHandoverServer) { self.server = server }

    mutating func run() {
        defer {
            for fd in Array(connections.keys) { drop(fd) }
            close(server.listening)
        }
        while !server.isStopped {
            let order = Array(connections.keys)
            var polled = [
                pollfd(fd: server.wakeDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(
                    fd: server.listening, events: connections.count < server.limits.connections + 8 ? Int16(POLLIN) : 0,
                    revents: 0),
            ]
            for fd in order {
                guard let connection = connections[fd] else { continue }
                var events: Int16 = 0
                if connection.output.count < Self.outputLimit { events |= Int16(POLLIN) }
                if !connection.output.isEmpty { events |= Int16(POLLOUT) }
                polled.append(pollfd(fd: fd, events: events, revents: 0))
            }
            let ready = poll(&polled, nfds_t(polled.count), 1000)
            if ready < 0, errno != EINTR { break }
            if polled[0].revents != 0 { break }
            if polled[1].revents & Int16(POLLIN) != 0 { acceptAll() }
            for (index, fd) in order.enumerated() {
                let revents = polled[index + 2].revents
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { read(fd) }
                if revents & Int16(POLLOUT) != 0 { flush(fd) }
            }
            expire()
        }
    }

    // MARK: connections

    mutating func acceptAll() {
        while true {
            // accept4 is GNU's and does not reach Swift: the flags are set right after.
            let fd = accept(server.listening, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            nextID += 1
            guard let peer = PeerCredentials.of(descriptor: fd) else {
                close(fd)
                continue
            }
            let now = clock.now
            connections[fd] = FileHandoverConnection(id: nextID, fd: fd, peer: peer, lastRequest: now)
            let access = server.policy.access(for: peer)
            if access != Castd_V1_Access.control {
                let why =
                    access == .unspecified
                    ? "castd at \(server.path) does not let \(peer) in"
                    : "handing files to castd needs control access; \(peer) may only read (castd's read groups)"
                refuse(fd, CastdError(.permissionDenied, why))
            } else if connections.count > server.limits.connections {
                refuse(
                    fd,
                    CastdError(
                        .resourceExhausted,
                        "castd's files socket already has \(server.limits.connections) connections open; try again"))
            }
        }
    }

    /// Answers `error` and closes the connection once the answer has gone (or after a while).
    mutating func refuse(_ fd: Int32, _ error: CastdError) {
        answer(fd, .failure(error))
        let now = clock.now
        connections[fd]?.closing = true
        connections[fd]?.lastRequest = now
        flush(fd)
    }

    mutating func drop(_ fd: Int32) {
        guard let connection = connections.removeValue(forKey: fd) else { return }
        for received in connection.descriptors { close(received) }
        close(fd)
        server.files.dropConnection(connection.id)
    }

    mutating func expire() {
        let now = clock.now
        for (fd, connection) in connections {
            if connection.closing {
                if now - connection.lastRequest > Self.lingering { drop(fd) }
            } else if let started = connection.requestStarted, now - started > server.limits.requestTimeout {
                refuse(
                    fd,
                    CastdError(
                        .deadlineExceeded,
                        "a request did not arrive whole within \(server.limits.requestTimeout) of its first byte; castd closed the connection"
                    ))
            } else if connection.input.isEmpty, now - connection.lastRequest > server.limits.idleTimeout {
                refuse(
                    fd,
                    CastdError(
                        .deadlineExceeded,
                        "no request within \(server.limits.idleTimeout); castd closed the connection and the files no call took"
                    ))
            }
        }
    }

    // MARK: reading

    mutating func read(_ fd: Int32) {
        guard let connection = connections[fd] else { return }
        let limits = server.limits
        let received: UnixRights.Received
        switch UnixRights.receive(
            fd, maximumBytes: limits.requestBytes + 4, maximumDescriptors: limits.descriptorsPerRequest,
            flags: Int32(MSG_DONTWAIT))
        {
        case .failure(let error) where error.code == EAGAIN || error.code == EINTR: return
        case .failure: return drop(fd)
        case .success(let got): received = got
        }
        if connection.closing {
            // Refused or done: what comes now is dropped, its descriptors closed.
            for descriptor in received.descriptors { close(descriptor) }
            if received.bytes.isEmpty { drop(fd) }
            return
        }
        guard !received.bytes.isEmpty else { return drop(fd) }
        connections[fd]?.input += received.bytes
        connections[fd]?.descriptors += received.descriptors
        if received.descriptorsTruncated {
            return refuse(
                fd,
                CastdError(
                    .invalidArgument,
                    "more than \(limits.descriptorsPerRequest) descriptors came in one request; castd closed them all"))
        }
        let now = clock.now
        if connections[fd]?.requestStarted == nil { connections[fd]?.requestStarted = now }
        takeRequests(fd)
    }

    /// Handles each whole request in the connection's input.
    mutating func takeRequests(_ fd: Int32) {
        while let connection = connections[fd], !connection.closing, connection.input.count >= 4 {
            let input = connection.input
            let length = FilesSocketProtocol.length(input)
            guard length > 0, length <= server.limits.requestBytes else {
                return refuse(
                    fd,
                    CastdError(
                        length == 0 ? .invalidArgument : .resourceExhausted,
                        "a request of \(length) bytes (1 to \(server.limits.requestBytes)); castd closed the connection"
                    ))
            }
            guard input.count >= 4 + length else { return }
            let body = input[4..<(4 + length)]
            connections[fd]?.input.removeFirst(4 + length)
            let now = clock.now
            let more = connections[fd]?.input.isEmpty == false
            connections[fd]?.requestStarted = more ? now : nil
            connections[fd]?.lastRequest = now
            let request: Castd_V1_FileHandover
            do {
                request = try Castd_V1_FileHandover(serializedBytes: Array(body))
            } catch {
                return refuse(fd, CastdError(.invalidArgument, "a request that is not a FileHandover: \(error)"))
            }
            answer(fd, handOver(request, on: fd))
        }
        if let connection = connections[fd], connection.input.isEmpty, !connection.descriptors.isEmpty {
            refuse(
                fd,
                CastdError(
                    .invalidArgument,
                    "\(connection.descriptors.count) descriptors came without a request naming them; castd closed them")
            )
        }
    }

    /// Takes the request's descriptors from those received, checks them and keeps them.
    mutating func handOver(_ request: Castd_V1_FileHandover, on fd: Int32) -> Result<[String], CastdError> {
        guard let connection = connections[fd] else { return .failure(CastdError(.cancelled, "closed")) }
        let count = request.names.count
        guard count >= 1, count <= server.limits.descriptorsPerRequest else {
            return .failure(
                CastdError(
                    .invalidArgument,
                    "a request names \(count) files; hand over 1 to \(server.limits.descriptorsPerRequest) at a time"))
        }
        guard connection.descriptors.count >= count else {
            return .failure(
                CastdError(
                    .invalidArgument,
                    "a request names \(count) files but \(connection.descriptors.count) descriptors came with it (SCM_RIGHTS, in the same sendmsg)"
                ))
        }
        let descriptors = Array(connection.descriptors.prefix(count))
        connections[fd]?.descriptors.removeFirst(count)
        var files: [HandedFile] = []
        for (index, (descriptor, name)) in zip(descriptors, request.names).enumerated() {
            let name = Self.cleanName(name)
            switch Self.check(descriptor) {
            case .success(let size):
                files.append(HandedFile(descriptor: descriptor, name: name, size: size))
            case .failure(let why):
                for descriptor in descriptors { close(descriptor) }
                let label = name.isEmpty ? "" : " (\(name))"
                return .failure(
                    CastdError(.invalidArgument, "file \(index + 1)\(label) \(why); nothing was handed over"))
            }
        }
        do {
            return .success(try server.files.add(files, uid: connection.peer.uid, connection: connection.id))
        } catch {
            for descriptor in descriptors { close(descriptor) }
            return .failure(error)
        }
    }

    /// Linux's O_PATH (GNU's, so not in Swift's Glibc module).
    static let openPathFlag: Int32 = 0o10_000_000

    /// The size of a regular file open for reading, or why `descriptor` is not one.
    static func check(_ descriptor: Int32) -> Result<Int64, FileRefusal> {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0 else { return .failure(FileRefusal("is not an open descriptor")) }
        if flags & Self.openPathFlag != 0 {
            return .failure(FileRefusal("was opened with O_PATH; open it for reading"))
        }
        if flags & O_ACCMODE == O_WRONLY {
            return .failure(FileRefusal("is open for writing only; open it for reading"))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            return .failure(FileRefusal("cannot be examined: \(Errno.current)"))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(Int64(info.st_size))
        case S_IFDIR: return .failure(FileRefusal("is a directory; hand over the files in it"))
        case S_IFSOCK: return .failure(FileRefusal("is a socket, not a file"))
        case S_IFIFO: return .failure(FileRefusal("is a pipe, not a file"))
        default: return .failure(FileRefusal("is not a regular file"))
        }
    }

    /// The last path component of a name a client gave, at most 255 bytes of it, one line.
    static func cleanName(_ name: String) -> String {
        let last = name.split(separator: "/").last.map(String.init) ?? ""
        var clean = String(LogText.escaped(last).utf8.prefix(255)) ?? ""
        if clean == "." || clean == ".." { clean = "" }
        return clean
    }

    // MARK: writing

    mutating func answer(_ fd: Int32, _ result: Result<[String], CastdError>) {
        var response = Castd_V1_FileHandoverResponse()
        switch result {
        case .success(let handles): response.handles = handles
        case .failure(let error): response.status = error.status
        }
        guard let body: [UInt8] = try? response.serializedBytes() else { return }
        connections[fd]?.output += FilesSocketProtocol.prefix(body.count) + body
        flush(fd)
    }

    mutating func flush(_ fd: Int32) {
        guard let connection = connections[fd], !connection.output.isEmpty else { return }
        let sent = connection.output.withUnsafeBytes {
            send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        if sent > 0 {
            connections[fd]?.output.removeFirst(sent)
        } else if sent < 0, errno != EAGAIN, errno != EINTR {
            return drop(fd)
        }
        if let connection = connections[fd], connection.closing, connection.output.isEmpty {
            shutdown(fd, Int32(SHUT_WR))
        }
    }
}

/// Why a handed-over descriptor was refused, in words that follow "file N".
struct FileRefusal: Error {
    let why: String
    init(_ why: String) { self.why = why }
}

extension FileRefusal: CustomStringConvertible {
    var description: String { why }
}
