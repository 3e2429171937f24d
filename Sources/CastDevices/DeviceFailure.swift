import CastSenderLink
import CastdAPI

/// How a failure on the way to a device reaches castd's clients: a castd.v1 status code, with
/// the device named; and how it reads in a log line.
enum DeviceFailure {
    /// A failure in a log line or a session's reason.
    static func describe(_ error: any Error) -> String {
        if let error = error as? CastLinkError { return error.message }
        if let error = error as? CastdError { return error.message }
        return "\(error)"
    }

    /// Maps device-side failures to castd.v1 status codes, naming the device; a device's refusal
    /// says what was refused (`ask`), why in words, and what to do (``DeviceRefusal``).
    static func castdError(_ error: any Error, device: String, ask: DeviceAsk? = nil) -> CastdError {
        switch error {
        case let error as CastdError:
            return error
        case let error as CastLinkError:
            switch error.code {
            case .connectFailed, .closed:
                return CastdError(.unavailable, "\(device): \(error.message)")
            case .authenticationFailed:
                return CastdError(.failedPrecondition, "\(device): \(error.message)")
            case .timedOut:
                return CastdError(.deadlineExceeded, "\(device): \(error.message)")
            case .invalidRequest:
                return CastdError(.invalidArgument, error.message)
            case .deviceError:
                let deviceError = error.deviceError
                let code: CastdCode
                switch deviceError {
                case let e? where e.isInvalidRequest: code = .invalidArgument
                case let e? where e.isLoadCancelled: code = .aborted
                case let e? where e.isUnknownApp: code = .notFound
                default: code = .failedPrecondition
                }
                var details = Castd_V1_DeviceError()
                details.type = deviceError?.type ?? ""
                details.reason = deviceError?.reason ?? ""
                details.detail = deviceError?.detail ?? ""
                let sentence =
                    deviceError.map { DeviceRefusal.sentence($0, device: device, ask: ask) }
                    ?? "\(device) refused \(ask?.phrase ?? "the request") with an error"
                return CastdError(
                    code, sentence,
                    reason: CastdError.Reason.deviceError, deviceError: details)
            }
        case is CancellationError:
            return CastdError(.cancelled, "cancelled")
        default:
            return CastdError(.internal, "\(device): \(error)")
        }
    }
}
