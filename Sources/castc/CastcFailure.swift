import CastClient

/// How castc reports a failed call: one line for stderr and the process's exit code.
struct CastcFailure: Equatable {
    /// `castc: NOT_FOUND: no device named "x"` (with a newline).
    var line: String
    /// The status code's number (NOT_FOUND → 5, UNAVAILABLE → 14); 1 for codes outside 1…255.
    var exitCode: Int32

    init(_ error: CastdError) {
        let message = error.message.isEmpty ? "(no message)" : error.message
        line = "castc: \(error.code.name): \(message)\n"
        let code = error.code.rawValue
        exitCode = (1...255).contains(code) ? Int32(code) : 1
    }
}
