/// An error of the discovery layer: a code to branch on, a message for people, an optional cause.
public struct DiscoveryError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case avahiUnavailable, publishFailed, invalidArgument, timedOut, stopped
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The Avahi daemon (or the D-Bus system bus) cannot be reached.
        public static let avahiUnavailable = Code(.avahiUnavailable)
        /// Avahi refused or withdrew a service.
        public static let publishFailed = Code(.publishFailed)
        /// A name, port or TXT record that mDNS cannot carry.
        public static let invalidArgument = Code(.invalidArgument)
        /// A wait ran past its deadline.
        public static let timedOut = Code(.timedOut)
        /// The publisher was stopped.
        public static let stopped = Code(.stopped)

        public var description: String { value.rawValue }
    }

    public var code: Code
    public var message: String
    public var cause: (any Error & Sendable)?

    public init(code: Code, message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        if let cause {
            return "\(code): \(message) (cause: \(cause))"
        }
        return "\(code): \(message)"
    }
}
