import NIOCore

/// The last handler of a test pipeline, holding back `read` as `NIOAsyncChannel`'s handler does
/// while the application has not taken what was read: closed, it keeps the `read` that comes
/// down the pipeline; opened, it passes it on. For the heartbeats' tests on an `EmbeddedChannel`.
public final class ReadGate: ChannelOutboundHandler {
    public typealias OutboundIn = Any
    private var context: ChannelHandlerContext?
    private var held = false
    public var isOpen = true

    public init() {}

    public func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    public func read(context: ChannelHandlerContext) {
        if isOpen { context.read() } else { held = true }
    }

    /// Opens the gate, passing on a `read` held meanwhile.
    public func open() {
        isOpen = true
        if held, let context {
            held = false
            context.read()
        }
    }
}
