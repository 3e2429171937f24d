import CastdAPI
import CastdSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A file a client handed castd over the files socket: an open descriptor castd may read, and
/// the name the client gave (never a path).
public struct HandedFile: Sendable {
    /// Open for reading; whoever holds the `HandedFile` closes it.
    public let descriptor: Int32
    public let name: String
    /// The size when it was handed over (it may change; readers fstat again).
    public let size: Int64

    public init(descriptor: Int32, name: String, size: Int64) {
        self.descriptor = descriptor
        self.name = name
        self.size = size
    }
}

/// The files handed over and not yet taken by a call, by handle; and the count of those taken
/// and still open, so that castd holds a bounded number of its clients' descriptors.
///
/// A handle is 128 random bits, valid for the uid that handed the file over, while the
/// connection that did stays open (`dropConnection`). A call takes it (`take`); the taker
/// closes the descriptor and says so (`released`).
public final class HandedFiles: Sendable {
    /// Handed-over files castd holds at once, taken or not (rpc.proto: FileHandover).
    public let maximumOpen: Int
    /// Handles one connection holds that no call has taken.
    public let maximumUntakenPerConnection: Int

    struct Entry {
        var file: HandedFile
        var uid: UInt32
        var connection: Int
    }

    struct State {
        var entries: [String: Entry] = [:]
        var untakenByConnection: [Int: Int] = [:]
        var open = 0
    }

    private let state = Locked(State())

    public init(
        maximumOpen: Int = FilesSocketProtocol.openInCastd,
        maximumUntakenPerConnection: Int = FilesSocketProtocol.untakenPerConnection
    ) {
        self.maximumOpen = maximumOpen
        self.maximumUntakenPerConnection = maximumUntakenPerConnection
    }

    /// Files castd holds now: handed over and not closed.
    public var openCount: Int { state.withLock { $0.open } }

    /// Keeps `files` for `uid` under new handles, or refuses them all (the caller then closes
    /// them) when a bound would be passed.
    func add(_ files: [HandedFile], uid: UInt32, connection: Int) throws(CastdError) -> [String] {
        var generator = SystemRandomNumberGenerator()
        let handles = files.map { _ in Self.handle(using: &generator) }
        let refusal: CastdError? = state.withLock { state in
            let untaken = state.untakenByConnection[connection, default: 0]
            if untaken + files.count > maximumUntakenPerConnection {
                return CastdError(
                    .resourceExhausted,
                    "this connection already holds \(untaken) files no call has taken (at most \(maximumUntakenPerConnection)); load them, or close the connection to let them go"
                )
            }
            if state.open + files.count > maximumOpen {
                return CastdError(
                    .resourceExhausted,
                    "castd already holds \(state.open) files handed to it (at most \(maximumOpen)); try again once some media has left its devices"
                )
            }
            for (handle, file) in zip(handles, files) {
                state.entries[handle] = Entry(file: file, uid: uid, connection: connection)
            }
            state.untakenByConnection[connection] = untaken + files.count
            state.open += files.count
            return nil
        }
        if let refusal { throw refusal }
        return handles
    }

    /// Takes the file `handle` names, if `uid` handed it over and no call has taken it: the
    /// caller now owns its descriptor, and calls `released()` once it has closed it.
    public func take(_ handle: String, uid: UInt32) throws(CastdError) -> HandedFile {
        let file: HandedFile? = state.withLock { state in
            guard let entry = state.entries[handle], entry.uid == uid else { return nil }
            state.entries[handle] = nil
            let left = state.untakenByConnection[entry.connection, default: 1] - 1
            state.untakenByConnection[entry.connection] = left > 0 ? left : nil
            return entry.file
        }
        guard let file else {
            throw CastdError(
                .notFound,
                "no file handed over as \(LogText.prefix(handle)): a handle works once, from the uid and while the connection that handed the file over stays open"
            )
        }
        return file
    }

    /// Gives back a file taken and not used (a call that failed before it served the file):
    /// closes it.
    public func discard(_ file: HandedFile) {
        close(file.descriptor)
        released()
    }

    /// A taken file's descriptor was closed.
    public func released() {
        state.withLock { $0.open -= 1 }
    }

    /// The connection `id` closed: the files no call took are closed.
    func dropConnection(_ id: Int) {
        let dropped: [Int32] = state.withLock { state in
            guard state.untakenByConnection.removeValue(forKey: id) != nil else { return [] }
            var dropped: [Int32] = []
            state.entries = state.entries.filter { _, entry in
                guard entry.connection == id else { return true }
                dropped.append(entry.file.descriptor)
                return false
            }
            state.open -= dropped.count
            return dropped
        }
        for fd in dropped { close(fd) }
    }

    static func handle(using generator: inout SystemRandomNumberGenerator) -> String {
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
