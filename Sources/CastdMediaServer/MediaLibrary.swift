import CastdSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The published files: each token's descriptor, content type and extension, and how many
/// responses use it now.
///
/// Every response works on a dup() of the published descriptor, made under the same lock that
/// `revoke` closes the original under: a response never holds a descriptor number that `revoke`
/// closed (and the kernel may have handed to another open since), and revoking closes the
/// original at once, while in-flight responses finish on their own duplicates.
final class MediaLibrary: Sendable {
    struct Entry {
        var descriptor: Int32
        var contentType: String
        var fileExtension: String?
        /// Called once the descriptor is closed (revoked, or the server shut down).
        var closed: (@Sendable () -> Void)?
        var active = 0
    }

    /// A response's hold on a published file; ``release(_:)`` it when the response ends. Its
    /// descriptor is the response's own (a dup), to close when the response ends.
    struct Lease {
        var token: MediaToken
        var descriptor: Int32
        var contentType: String
    }

    enum Acquisition {
        case granted(Lease)
        /// The token serves as many responses as it may (or no descriptor is left for a dup).
        case busy
        case unknown
    }

    private let entries = Locked<[MediaToken: Entry]>([:])
    /// Set by ``revokeAll()`` (the server's shutdown): later publications are closed at once.
    private let closed = Locked(false)

    func publish(
        descriptor: Int32, contentType: String, fileExtension: String?, closed onClose: (@Sendable () -> Void)?
    ) -> MediaToken {
        let token = MediaToken.random()
        let accepted = closed.withLock { closed in
            guard !closed else { return false }
            entries.withLock {
                $0[token] = Entry(
                    descriptor: descriptor, contentType: contentType, fileExtension: fileExtension, closed: onClose)
            }
            return true
        }
        if !accepted {
            close(descriptor)
            onClose?()
        }
        return token
    }

    /// Whether `token` is published (for the answers that use no file: OPTIONS, 405).
    func contains(_ token: MediaToken) -> Bool { entries.withLock { $0[token] != nil } }

    func fileExtension(of token: MediaToken) -> String?? {
        entries.withLock { entries in entries[token].map { $0.fileExtension } }
    }

    var count: Int { entries.withLock { $0.count } }

    /// A lease on `token`'s file for one response, if it is published and serves fewer than `limit`.
    func acquire(_ token: MediaToken, limit: Int) -> Acquisition {
        entries.withLock { entries in
            guard var entry = entries[token] else { return .unknown }
            guard entry.active < limit else { return .busy }
            let duplicate = fcntl(entry.descriptor, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else { return .busy }
            entry.active += 1
            entries[token] = entry
            return .granted(Lease(token: token, descriptor: duplicate, contentType: entry.contentType))
        }
    }

    /// Ends a lease's count against its token (the response closes its own descriptor).
    func release(_ lease: Lease) {
        entries.withLock { entries in
            entries[lease.token]?.active -= 1
        }
    }

    /// Stops serving `token` and closes its descriptor; false if it was not published.
    @discardableResult
    func revoke(_ token: MediaToken) -> Bool {
        let entry = entries.withLock { entries -> Entry? in
            guard let entry = entries.removeValue(forKey: token) else { return nil }
            close(entry.descriptor)
            return entry
        }
        entry?.closed?()
        return entry != nil
    }

    /// Revokes every token, and every one published later.
    func revokeAll() {
        closed.withLock { $0 = true }
        let revoked = entries.withLock { entries in
            defer { entries.removeAll() }
            for entry in entries.values { close(entry.descriptor) }
            return Array(entries.values)
        }
        for entry in revoked { entry.closed?() }
    }
}
