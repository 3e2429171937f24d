import NIOCore

extension Channel {
    /// Closes the channel and returns once SwiftNIO has let go of it. NIO completes `close()`
    /// before it takes the pipeline apart, in a later turn of the event loop (the close future
    /// completes in that turn); a process that exits as soon as `close()` returns (castc) exits
    /// while the event loop still holds the channel, and LeakSanitizer reported its addresses
    /// as leaked (CI, once). One more turn after the close future: NIO is done with it.
    func closeAndLetGo() async {
        try? await close()
        try? await closeFuture.get()
        try? await eventLoop.submit {}.get()
    }
}
