import CastClient

/// How castc reports a failed call: one line for stderr and the process's exit code.
struct CastcFailure: Equatable {
    /// `castc: NOT_FOUND: no device named "x"` (with a newline). A device's refusal reads
    /// `castc: Living Room TV refused the load: it cannot play this media's format (LOAD_FAILED,
    /// MEDIA_SRC_NOT_SUPPORTED 104); check the URL and --content-type`; a request a newer
    /// one superseded, `castc: superseded by a newer seek request`.
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
                : "castc: \(error.message)\n"
        } else {
            line = "castc: \(error.code.name): \(message)\n"
        }
        let code = error.code.rawValue
        exitCode = (1...255).contains(code) ? Int32(code) : 1
    }

    /// castd's sentence, which says what the device refused, why and what to do (castd words
    /// every refusal in one place); what the device said, when an older castd gave no sentence.
    static func describe(_ deviceError: CastdDeviceError, message: String) -> String {
        guard message.isEmpty else { return message }
        let details = [deviceError.reason, deviceError.detail].filter { !$0.isEmpty }
        let type = deviceError.type.isEmpty ? "an error" : deviceError.type
        return
            "the device refused the request: \(type)\(details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")"
    }
}

/// A failure of castc's own, not castd's answer: its line for stderr and its exit code
/// (`castc artwork`'s 69 when the image cannot be fetched, 73 when a file cannot be written).
struct CastcExit: Error, Equatable {
    var line: String
    var code: Int32
}
