import CastdSupport
import NIOCore

/// A unary call's response frame, held until its status is written with it.
final class UnaryResponse: Sendable {
    private let frame = Locked<ByteBuffer?>(nil)

    func keep(_ buffer: ByteBuffer) { frame.withLock { $0 = buffer } }
    func taken() -> ByteBuffer? { frame.withLock { $0.take() } }
}
