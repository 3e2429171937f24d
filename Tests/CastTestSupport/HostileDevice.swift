import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import X509

/// A TLS server on 127.0.0.1 that plays a broken Cast device: after the handshake it writes
/// `bytes` (e.g. a frame of length 0, or one over 64 KiB) and then only reads. For testing
/// that a bad device closes its own link and nothing else.
public func withHostileDevice<T>(
    sending bytes: [UInt8], _ body: (_ port: Int) async throws -> T
) async throws -> T {
    let key = P256.Signing.PrivateKey()
    let name = try DistinguishedName { CommonName("hostile device") }
    let now = Date()
    let certificate = try Certificate(
        version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
        notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(3600),
        issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
        issuerPrivateKey: .init(key))
    let pem = try certificate.serializeAsPEM().pemString
    let configuration = TLSConfiguration.makeServerConfiguration(
        certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem))],
        privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)))
    let context = try NIOSSLContext(configuration: configuration)
    let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                try channel.pipeline.syncOperations.addHandler(SendOnConnect(bytes: bytes))
            }
        }
        .bind(host: "127.0.0.1", port: 0).get()
    do {
        let result = try await body(server.localAddress?.port ?? 0)
        try await server.close()
        return result
    } catch {
        try? await server.close()
        throw error
    }
}

/// Writes its bytes once the TLS handshake is done; swallows whatever the sender says.
private final class SendOnConnect: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
