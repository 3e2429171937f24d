import Logging

extension Logger {
    /// This logger, with its records filed under one of castd's subsystems (`CastChannel`,
    /// `CastSession`, …; the list is CastdLogging's `CastdSubsystem`). castd's log handler takes
    /// the `subsystem` metadata key as the subsystem its filter and journal fields go by; any other
    /// handler (a test's) shows it as metadata.
    public func subsystem(_ name: String) -> Logger {
        var logger = self
        logger[metadataKey: "subsystem"] = "\(name)"
        return logger
    }
}
