import NIOCore
import NIOHTTP1
import NIOSSL

/// Reads one HTTP response into an ``ArtworkAnswer``, refusing as early as it can: a status other
/// than 200 or a redirect at the head; a Content-Length over the limit at the head, before any
/// of the body; a body that grows past the limit at the chunk that passes it (nothing more is
/// kept); a body that does not start like an image at its first 12 bytes; an image whose header
/// says it is larger than 8192 pixels either way, or whose header is malformed or cut short
/// (``ArtworkImageHeader``), as soon as the bytes that tell have come. Whatever it decides
/// completes `answer`, which closes the connection (``ArtworkFetcher``).
final class ArtworkResponseHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    static let redirectCodes: Set<UInt> = [301, 302, 303, 307, 308]

    private let url: ArtworkURL
    private let limit: Int
    private let answer: EventLoopPromise<ArtworkAnswer>
    private var body: [UInt8] = []
    private var format: ArtworkFormat?
    /// Whether the image's header gave a size that is taken.
    private var sized = false
    /// The body's length at which the header is read again: doubled at each try, so that a
    /// header that walks many segments (a JPEG) costs the body's length a few times over in
    /// all, not once per chunk.
    private var nextSizeCheck = 0
    private var done = false

    init(url: ArtworkURL, limit: Int, answer: EventLoopPromise<ArtworkAnswer>) {
        self.url = url
        self.limit = limit
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            let code = head.status.code
            if Self.redirectCodes.contains(code) {
                guard let location = head.headers.first(name: "Location"), !location.isEmpty else {
                    return fail(
                        .badRedirect(url: url.redacted, location: "", reason: "HTTP \(code) without a Location"))
                }
                return finish(.redirect(location: location, server: context.channel.remoteAddress))
            }
            guard code == 200 else {
                return fail(.httpStatus(url: url.redacted, code: Int(code), reason: head.status.reasonPhrase))
            }
            // Every Content-Length the head gives (the decoder refuses differing ones anyway).
            let lengths = head.headers[canonicalForm: "Content-Length"].map { Int($0) }
            if let tooLong = lengths.first(where: { ($0 ?? Int.max) > limit }) {
                return fail(.tooLarge(url: url.redacted, limit: limit, contentLength: tooLong))
            }
            if let length = lengths.first ?? nil { body.reserveCapacity(length) }
        case .body(let buffer):
            guard buffer.readableBytes <= limit - body.count else {
                return fail(.tooLarge(url: url.redacted, limit: limit, contentLength: nil))
            }
            // Grown by doubling as an array does, but never past the limit.
            if body.capacity < body.count + buffer.readableBytes {
                body.reserveCapacity(min(limit, max(body.count + buffer.readableBytes, body.capacity * 2)))
            }
            body.append(contentsOf: buffer.readableBytesView)
            if format == nil && body.count >= ArtworkFormat.magicLength { checkMagic() }
            if format != nil && !sized && body.count >= nextSizeCheck { checkSize(ended: false) }
        case .end:
            if format == nil { checkMagic() }
            if format != nil && !sized { checkSize(ended: true) }
            if let format, sized { finish(.image(body, format)) }
        }
    }

    /// Reads the image's size from its header, once the bytes that give it are in; fails the
    /// answer for an image too large, or a header malformed (or cut short, at the body's end).
    private func checkSize(ended: Bool) {
        guard let format, !done else { return }
        switch ArtworkImageHeader.read(body, format: format) {
        case .size(let width, let height):
            let limit = ArtworkImageHeader.maximumSide
            guard width <= limit && height <= limit else {
                return fail(.imageTooLarge(url: url.redacted, width: width, height: height, limit: limit))
            }
            sized = true
        case .needMore:
            nextSizeCheck = body.count * 2
            if ended {
                fail(
                    .badImageHeader(
                        url: url.redacted, format: format, reason: "it ends before its header gives its size"))
            }
        case .malformed(let reason):
            fail(.badImageHeader(url: url.redacted, format: format, reason: reason))
        }
    }

    /// Decides the format from the first bytes, or fails the answer.
    private func checkMagic() {
        format = ArtworkFormat(magic: body)
        if format == nil { fail(.notAnImage(url: url.redacted, start: Array(body.prefix(4)))) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !done else { return }
        if error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError {
            fail(.tlsFailed(url: url.redacted, reason: Self.describe(tlsError: error, host: url.host)))
        } else if let error = error as? HTTPParserError {
            fail(.incomplete(url: url.redacted, reason: "the answer is not HTTP/1.1 (\(error))"))
        } else {
            fail(.incomplete(url: url.redacted, reason: "\(error)"))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.incomplete(url: url.redacted, reason: "the server closed the connection before the end of its answer"))
        context.fireChannelInactive()
    }

    /// "the certificate is not for example.com", "the certificate does not verify
    /// (CERTIFICATE_VERIFY_FAILED: …)", else BoringSSL's reason (`WRONG_VERSION_NUMBER`, …).
    static func describe(tlsError error: any Error, host: String) -> String {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "the server's certificate is not for \(host)"
        }
        // BoringSSL's errors read `error:1000007d:SSL routines:OPENSSL_internal:REASON at file:line`.
        let text = "\(error)"
        guard let marker = text.firstRange(of: "OPENSSL_internal:") else { return text }
        let reason = text[marker.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        if reason == "CERTIFICATE_VERIFY_FAILED" {
            return "the server's certificate does not verify (CERTIFICATE_VERIFY_FAILED: not issued by an authority "
                + "this system trusts, or expired)"
        }
        return "the handshake failed (\(reason))"
    }

    private func finish(_ result: ArtworkAnswer) {
        guard !done else { return }
        done = true
        answer.succeed(result)
    }

    private func fail(_ error: ArtworkError) {
        guard !done else { return }
        done = true
        body = []
        answer.fail(error)
    }
}
