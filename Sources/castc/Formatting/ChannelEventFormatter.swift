import CastClient

/// `castc listen`: messages as lines for stdout, the rest as notices for stderr.
enum ChannelEventFormatter {
    enum Output: Equatable {
        /// A message's payload, on one line.
        case message(String)
        /// Attached, detached, lagged: for people, not for the pipe.
        case notice(String)
    }

    static func describe(_ event: CastdChannelEvent) -> Output {
        switch event.kind {
        case .message(let message):
            return .message(oneLine(message.payload, isJSON: message.isJson))
        case .attached(let session):
            return .notice("castc: listening to \(MediaSummary.app(session)) on \(MediaSummary.device(session))")
        case .detached(let session):
            // Why the app stopped being heard: its session ended or was suspended (a session
            // still "started" is one castd left, or whose app stopped declaring the namespace).
            var why = ""
            switch session.state {
            case .started, .resumed, .unspecified: break
            default: why = ": its session \(MediaSummary.state(session.state))"
            }
            if !session.reason.isEmpty { why += why.isEmpty ? ": \(session.reason)" : " (\(session.reason))" }
            return .notice(
                "castc: no longer listening to \(MediaSummary.app(session)) on \(MediaSummary.device(session))\(why)")
        case .lagged(let lagged):
            let dropped = lagged.dropped
            return .notice("castc: fell behind; \(dropped) message\(dropped == 1 ? "" : "s") dropped")
        case nil:
            return .notice("castc: an event this castc does not know")
        }
    }

    /// A payload on one line. Line breaks in JSON can only be white space between tokens
    /// (inside strings they are escaped), so they become spaces and the JSON stays valid; in
    /// other text they become the two characters \n (and \r).
    static func oneLine(_ payload: String, isJSON: Bool) -> String {
        if isJSON {
            return payload.split(
                omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            )
            .joined(separator: " ")
        }
        var text = ""
        for character in payload {
            switch character {
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\r\n": text += "\\r\\n"
            default: text.append(character)
            }
        }
        return text
    }
}
