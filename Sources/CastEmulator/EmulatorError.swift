/// Why the emulator could not do what it was asked.
public struct EmulatorError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The TLS identity (key and certificate) could not be made.
        public static let certificate = Code("certificate")
        /// A port could not be bound.
        public static let bind = Code("bind")
        /// The message log file could not be opened.
        public static let logFileUnavailable = Code("logFileUnavailable")
        /// `start()` was called twice, or `run()` after `shutdown()`; or a fault or a transfer
        /// that the device's state does not allow now (restarting while down, transferring with
        /// nothing but the idle screen running).
        public static let invalidState = Code("invalidState")
        /// A sender went quiet for longer than the heartbeat allows.
        public static let heartbeatTimeout = Code("heartbeatTimeout")
        /// A configuration value given as text (a command-line flag), or a value given to a
        /// fault or a transfer, is malformed or out of range.
        public static let invalidArgument = Code("invalidArgument")
        /// A session transfer failed: the destination could not be reached or refused it (the
        /// source keeps its session).
        public static let transferFailed = Code("transferFailed")
    }

    public var code: Code
    public var message: String
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        if let cause { return "\(message): \(cause)" }
        return message
    }
}
