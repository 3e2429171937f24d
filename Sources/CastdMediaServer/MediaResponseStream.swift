import NIOCore
import NIOHTTP1

#if canImport(Glibc)
    import Glibc
#endif

/// A response's file: its descriptor (a dup, in a NIOFileHandle for FileRegions) and its lease
/// on the token, both let go once no more of it will be written and every write of it is done.
final class OpenFile {
    let lease: MediaLibrary.Lease
    let handle: NIOFileHandle
    private let library: MediaLibrary
    private var writesPending = 0
    private var finished = false
    private var closed = false

    init(lease: MediaLibrary.Lease, library: MediaLibrary) {
        self.lease = lease
        self.handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: lease.descriptor)
        self.library = library
    }

    func writeStarted() { writesPending += 1 }

    func writeEnded() {
        writesPending -= 1
        closeIfDone()
    }

    /// No more writes will start.
    func finish() {
        finished = true
        closeIfDone()
    }

    private func closeIfDone() {
        guard finished, writesPending == 0, !closed else { return }
        closed = true
        try? handle.close()
        library.release(lease)
    }
}

/// The part of a response's file still to queue on the socket.
struct BodyStream {
    let file: OpenFile
    /// The next byte to queue.
    var next: Int
    /// One past the last byte to send.
    let end: Int
    /// When the reader last took some of it.
    var lastProgress: NIODeadline
}

extension MediaRequestHandler {
    /// Queues the file's next chunks while the socket takes them (its writability: at most
    /// ``chunkSize`` beyond NIO's high-water mark), and ends the response once all are queued.
    /// Re-entered from a flush (a write completed, the socket became writable) it only asks the
    /// running call to loop again.
    func pump(_ context: ChannelHandlerContext) {
        guard !pumping else {
            pumpAgain = true
            return
        }
        pumping = true
        defer { pumping = false }
        repeat {
            pumpAgain = false
            while var body = stream, body.next < body.end, context.channel.isWritable {
                guard let size = Self.fileSize(body.file.lease.descriptor), size >= body.end else {
                    return abort(context, "the file shrank while it was sent")
                }
                let chunkEnd = min(body.next + Self.chunkSize, body.end)
                let region = FileRegion(fileHandle: body.file.handle, readerIndex: body.next, endIndex: chunkEnd)
                server.noteQueued(chunkEnd - body.next)
                body.next = chunkEnd
                stream = body
                let file = body.file
                file.writeStarted()
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.assumeIsolated().whenComplete { [self] result in
                    file.writeEnded()
                    if case .success = result, stream?.file === file { stream?.lastProgress = .now() }
                }
                context.write(wrapOutboundOut(.body(.fileRegion(region))), promise: written)
            }
            if let body = stream, body.next == body.end {
                stream = nil
                body.file.finish()
                endResponse(context: context)
            } else {
                context.flush()
            }
        } while pumpAgain
    }

    /// Closes the connection in the middle of a response (the reader sees a body cut short).
    func abort(_ context: ChannelHandlerContext, _ reason: String) {
        if let stream {
            logger.warning("response abandoned: \(reason)", metadata: ["token": "\(stream.file.lease.token)"])
            self.stream = nil
            stream.file.finish()
        }
        keepAlive = false
        context.close(promise: nil)
    }

    /// The connection's one timer, for what it waits on now: while a file is sent, a check every
    /// ``watchInterval`` that the file has not shrunk (sendfile past a file's end sends nothing,
    /// and NIO would try again for ever) and that the reader took some of it within the idle
    /// timeout; with no answer being written, the idle timeout for the next request.
    func scheduleTimer(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        let loop = context.eventLoop.assumeIsolated()
        if stream != nil {
            timer = loop.scheduleTask(in: Self.watchInterval) { [self] in watch(context) }
        } else if !responding {
            timer = loop.scheduleTask(in: TimeAmount(configuration.idleTimeout)) { [self] in
                timer = nil
                guard stream == nil, !responding else { return }
                logger.debug("idle connection closed")
                context.close(promise: nil)
            }
        }
    }

    private func watch(_ context: ChannelHandlerContext) {
        timer = nil
        guard let body = stream else { return scheduleTimer(context) }
        guard let size = Self.fileSize(body.file.lease.descriptor), size >= body.end else {
            return abort(context, "the file shrank while it was sent")
        }
        if NIODeadline.now() - body.lastProgress > TimeAmount(configuration.idleTimeout) {
            return abort(context, "the reader took nothing for the idle timeout")
        }
        scheduleTimer(context)
    }
}
