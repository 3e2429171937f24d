import CastClient

/// How castc reports a failed call: one line for stderr and the process's exit code.
struct CastcFailure: Equatable {
    /// `castc: NOT_FOUND: no device named "x"` (with a newline). A device's refusal reads
    /// `castc: Living Room TV refused the load: LOAD_FAILED (INVALID_PARAMS)`; a request a newer
    /// one superseded, `castc: superseded by a newer request: …`.
    var line: String
    /// The status code's number (NOT_FOUND → 5, UNAVAILABLE → 14); 1 for codes outside 1…255.
    var exitCode: Int32

    init(_ error: CastdError) {
        let message = error.message.isEmpty ? "(no message)" : error.message
        if let deviceError = error.deviceError {
            line = "castc: \(Self.describe(deviceError, message: error.message))\n"
        } else if error.reason == CastdError.Reason.replaced {
            line =
                error.message.isEmpty
                ? "castc: superseded by a newer request of the same kind (its result shows in castc status)\n"
                : "castc: superseded by a newer request: \(error.message)\n"
        } else {
            line = "castc: \(error.code.name): \(message)\n"
        }
        let code = error.code.rawValue
        exitCode = (1...255).contains(code) ? Int32(code) : 1
    }

    /// The daemon's message, then what the device said that the message does not say already:
    /// `Living Room TV refused the load: LOAD_FAILED (INVALID_PARAMS, detail)`.
    static func describe(_ deviceError: CastdDeviceError, message: String) -> String {
        var text = message.isEmpty ? "the device refused the request" : message
        let details = [deviceError.reason, deviceError.detail].filter { !$0.isEmpty && !text.contains($0) }
        let type = deviceError.type.isEmpty || text.contains(deviceError.type) ? "" : deviceError.type
        switch (type.isEmpty, details.isEmpty) {
        case (false, false): text += ": \(type) (\(details.joined(separator: ", ")))"
        case (false, true): text += ": \(type)"
        case (true, false): text += " (\(details.joined(separator: ", ")))"
        case (true, true): break
        }
        return text
    }
}

/// A failure of castc's own, not castd's answer: its line for stderr and its exit code
/// (`castc artwork`'s 69 when the image cannot be fetched, 73 when a file cannot be written).
struct CastcExit: Error, Equatable {
    var line: String
    var code: Int32
}
