import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct SendCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message to the receiver app on a custom namespace.",
        usage: GlobalOptions.usage("send", "<namespace> <message>"),
        discussion: """
            Sends MESSAGE to the app of the device's session on NAMESPACE, which the app must \
            declare (`castc status --verbose` lists a session's namespaces). Namespaces start \
            with urn:x-cast:. MESSAGE - reads the message from standard input.

            With --json, MESSAGE must be JSON (castc checks it) and is sent as JSON, and castd's \
            answer is printed as JSON. Without, MESSAGE is sent as it is, as a string.

            Examples:
              castc send urn:x-cast:com.example.game 'hello'
              castc send urn:x-cast:com.example.game --json '{"type":"MOVE","x":3}'
              castc send urn:x-cast:com.example.game --json - < message.json
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("The app's namespace: urn:x-cast:…", valueName: "namespace"))
    var namespace: String

    @Argument(help: ArgumentHelp("The message; - reads it from standard input.", valueName: "message"))
    var message: String

    func validate() throws {
        if let problem = CastdNamespace.problem(namespace) { throw ValidationError(problem) }
        if options.json, message != "-" { try Self.validateJSON(message) }
    }

    static func validateJSON(_ text: String) throws {
        if let problem = CastdJSON.problem(text) {
            throw ValidationError("the message is not JSON (\(problem)); send it without --json to send it as a string")
        }
    }

    /// The SendMessage call for a message (read from stdin first when it is -).
    func call(message text: String) -> CastcCall<Castd_V1_SendMessageRequest, CastdSendMessageResponse> {
        var request = Castd_V1_SendMessageRequest()
        request.device = options.deviceSelector
        request.namespace = namespace
        if options.json { request.json = text } else { request.text = text }
        return CastcCall(CastdMethods.sendMessage, request)
    }

    func run() async throws {
        var text = message
        if text == "-" {
            text = String(decoding: Terminal.readStandardInput(), as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            if options.json {
                // The same usage error (64) as a message given on the command line.
                do { try Self.validateJSON(text) } catch let error as ValidationError {
                    throw CastcExit(line: "castc: \(error.message)\n", code: 64)
                }
            }
        }
        let response = try await options.send(call(message: text))
        try options.print(response) {
            "Sent to \(response.displayName.isEmpty ? "the app" : response.displayName) on \(response.deviceName.isEmpty ? response.deviceID : response.deviceName)"
        }
    }
}

struct ListenCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Print what the receiver app sends on a custom namespace.",
        usage: GlobalOptions.usage("listen", "<namespace> [--count <n>]"),
        discussion: """
            Prints each message the app sends on NAMESPACE, one line each, as it arrives, until \
            interrupted (Ctrl-C, which exits 0) or, with --count, after that many messages. \
            Line breaks inside a message are printed as \\n (JSON messages: as spaces). castc \
            keeps listening across sessions: when a session whose app declares the namespace \
            starts or ends, a notice goes to standard error. --json prints every \
            castd.v1.ChannelEvent (attached, detached, message, lagged) as one JSON object per \
            line instead.

            Examples:
              castc listen urn:x-cast:com.example.game
              castc listen urn:x-cast:com.example.game --count 1
              castc listen urn:x-cast:com.example.game --json | jq -r '.message.payload'
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("The app's namespace: urn:x-cast:…", valueName: "namespace"))
    var namespace: String

    @Option(parsing: .unconditional, help: ArgumentHelp("Exit after this many messages.", valueName: "n"))
    var count: Int?

    func validate() throws {
        if let problem = CastdNamespace.problem(namespace) { throw ValidationError(problem) }
        if let count, count < 1 { throw ValidationError("--count \(count): give 1 or more messages to wait for") }
    }

    var request: Castd_V1_ListenRequest {
        var request = Castd_V1_ListenRequest()
        request.device = options.deviceSelector
        request.namespace = namespace
        return request
    }

    func run() async throws {
        let json = options.json
        let count = count
        let request = request
        try await options.withClient { client in
            // As for a session that comes and goes: a listener that will wait is told why.
            // (A castd that cannot say what runs is listened to all the same.)
            if let status = try? await client.status(),
                let notice = Self.waitingNotice(status, device: request.device, namespace: namespace)
            {
                Terminal.writeError(notice + "\n")
            }
            try await Interrupt.orUntilInterrupted {
                let events = client.listen(device: request.device, namespace: request.namespace)
                try await Self.follow(events, json: json, count: count)
            }
        }
    }

    /// What castc says on stderr when no session of the device (`device`, "" for castd's
    /// choice) has an app that declares `namespace`, so that listening would wait for one; nil
    /// when one does (its `attached` event says so) or the device is not castd's to name.
    static func waitingNotice(_ status: CastdStatusResponse, device: String, namespace: String) -> String? {
        var sessions = status.sessions.filter(\.isOpen)
        if !device.isEmpty {
            guard let narrowed = try? DeviceFilter.status(status, matching: device) else { return nil }
            sessions = narrowed.sessions.filter(\.isOpen)
        }
        if sessions.contains(where: { $0.namespaces.contains(namespace) }) { return nil }
        guard let session = sessions.first, sessions.count == 1 else {
            return
                "castc: no session declares \(namespace) yet; waiting for an app that does (castc launch APP_ID starts one)"
        }
        let declared = session.namespaces.isEmpty ? "nothing" : session.namespaces.joined(separator: ", ")
        return
            "castc: \(MediaSummary.app(session)) on \(MediaSummary.device(session)) does not declare \(namespace) (it declares \(declared)); waiting for an app that does"
    }

    /// Prints events until the stream ends, `count` messages were printed, or stdout is gone.
    static func follow<Events: AsyncSequence>(
        _ events: Events,
        json: Bool,
        count: Int?,
        output: (String) -> Bool = Terminal.streamLine,
        notice: (String) -> Void = { Terminal.writeError($0 + "\n") }
    ) async throws where Events.Element == CastdChannelEvent {
        var printed = 0
        for try await event in events {
            if json {
                guard output(try JSONOutput.string(event)) else { return }
            } else {
                switch ChannelEventFormatter.describe(event) {
                case .message(let line): guard output(line) else { return }
                case .notice(let line): notice(line)
                }
            }
            if case .message = event.kind {
                printed += 1
                if let count, printed >= count { return }
            }
        }
    }
}
