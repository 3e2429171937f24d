import CastProtocol

/// Why a device link or a request on it failed.
public struct CastLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// TCP, TLS or the overall connect deadline failed.
        case connectFailed
        /// No reply within the request's deadline.
        case timedOut
        /// The link closed (by the device, a framing error, missed heartbeats, or us).
        case closed
        /// The device answered with an error (LAUNCH_ERROR, LOAD_FAILED, INVALID_REQUEST, …).
        case deviceError
        /// The request could not be sent (e.g. over the 64 KiB frame limit).
        case invalidRequest
        /// The device failed device authentication and the policy refuses it; `authentication`
        /// says why.
        case authenticationFailed
    }

    public var code: Code
    public var message: String
    public var deviceError: CastDeviceError?
    /// With `authenticationFailed`: the outcome, with the failed check.
    public var authentication: DeviceAuthentication?

    public init(
        _ code: Code, _ message: String, deviceError: CastDeviceError? = nil,
        authentication: DeviceAuthentication? = nil
    ) {
        self.code = code
        self.message = message
        self.deviceError = deviceError
        self.authentication = authentication
    }

    public var description: String { message }
}
