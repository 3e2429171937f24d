import CastdSupport
import CastProtocol
import Foundation
import Logging
import NIOCore

/// Device authentication on a link: the challenge, and what the answer proves.
extension CastLink {
    // MARK: device authentication

    /// The outcome of device authentication on this link. Set before `withConnection`'s body
    /// runs: verified, or unverified under the `.warn` policy.
    public var authentication: DeviceAuthentication? { state.withLock { $0.authentication } }

    /// Sends an AuthChallenge (a fresh 16-byte nonce, SHA-256) before anything else and checks the
    /// answer, by `deadline`. Under `.require` a failure throws `.authenticationFailed`; under
    /// `.warn` it is logged and the link goes on. A link that closes meanwhile throws why.
    func authenticate(tlsCertificateDER: [UInt8]?, deadline: NIODeadline) async throws {
        let settings = configuration.authentication
        let nonce = DeviceAuthenticator.makeNonce()
        let promise = eventLoop.makePromise(of: CastMessage.self)
        if let reason = state.withLock({ state -> CastLinkError? in
            if let reason = state.closedReason { return reason }
            state.authenticationReply = promise
            return nil
        }) {
            promise.fail(reason)
            throw reason
        }
        struct NoReply: Error {}
        let timer = eventLoop.scheduleTask(deadline: deadline) { [self] in
            self.resolveAuthentication(.failure(NoReply()))
        }
        defer { timer.cancel() }
        do {
            let challenge: [UInt8] = try DeviceAuthenticator.challenge(nonce: nonce).serializedBytes()
            try await send(
                CastMessage.binary(
                    source: senderID, destination: CastWire.platformReceiverID, namespace: CastNamespace.deviceAuth,
                    bytes: Data(challenge)))
        } catch {
            resolveAuthentication(.failure(error))
        }

        let outcome: DeviceAuthentication
        do {
            let reply = try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                resolveAuthentication(.failure(CancellationError()))
            }
            guard reply.payloadType == .binary else {
                throw DeviceAuthenticationFailure(.malformedReply, "the answer to the challenge is not binary")
            }
            let remaining = deadline - .now()
            let verified = try await DeviceAuthenticator(trustedRoots: settings.trustedRoots).verify(
                reply: Array(reply.payloadBinary), nonce: nonce, tlsCertificateDER: tlsCertificateDER ?? [],
                deadline: .now + .nanoseconds(remaining.nanoseconds))
            if let failure = DeviceAuthenticator.checkPin(verified, pinned: settings.pinnedKey) { throw failure }
            outcome = verified
        } catch let failure as DeviceAuthenticationFailure {
            outcome = DeviceAuthentication(failure, policy: settings.policy)
        } catch is NoReply {
            let failure = DeviceAuthenticationFailure(
                .noReply,
                "the device did not answer the challenge within the connect timeout (\(configuration.connectTimeout))")
            outcome = DeviceAuthentication(failure, policy: settings.policy)
        }
        state.withLock { $0.authentication = outcome }

        let logger = self.logger.subsystem("CastAuth")
        var metadata: Logger.Metadata = [
            "auth.state": "\(outcome.state)", "auth.device": "\(outcome.deviceCertificate)",
        ]
        switch outcome.state {
        case .verified:
            metadata["auth.root"] = "\(outcome.root)"
            if outcome.sha1 {
                logger.notice("device authenticated, with SHA-1: \(outcome.detail)", metadata: metadata)
            } else {
                logger.debug("device authenticated", metadata: metadata)
            }
        case .unverified:
            logger.warning(
                "device authentication failed: \(outcome.detail); using the device anyway (policy warn)",
                metadata: metadata)
        case .refused:
            logger.warning("device authentication failed: \(outcome.detail); link refused", metadata: metadata)
            throw CastLinkError(
                .authenticationFailed, "device authentication failed: \(outcome.detail)", authentication: outcome)
        }
    }

    func resolveAuthentication(_ result: Result<CastMessage, any Error>) {
        let promise = state.withLock { state in
            defer { state.authenticationReply = nil }
            return state.authenticationReply
        }
        promise?.completeWith(result)
    }
}
