import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import SwiftProtobuf

/// Options every castc command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "castd's socket. Default: $CASTD_SOCKET, else $XDG_RUNTIME_DIR/castd/castd.sock, else /run/castd/castd.sock.",
            valueName: "path"
        )
    )
    var socket: String?

    @Option(
        help: ArgumentHelp(
            "The device: a friendly name (any case), an id, or host[:port]. Default: castd picks the device with a session, else the only device.",
            valueName: "name|id|host"
        )
    )
    var device: String?

    @Flag(
        help: """
            Print castd's answer as JSON (proto3 JSON of the castd.v1 messages; `watch` and `listen`: one object per \
            line; `send`: the message is JSON too).
            """
    )
    var json = false

    func validate() throws {
        if let socket, socket.isEmpty { throw ValidationError("--socket needs a path") }
        if let device, device.isEmpty {
            throw ValidationError("--device needs a name, id or host; leave it out to let castd choose")
        }
    }

    /// A usage line that fits 80 columns: the command's own arguments, then the global options on
    /// lines of their own, aligned under the first argument (ArgumentParser indents them past "USAGE: ").
    static func usage(_ command: String, _ lines: String...) -> String {
        let indent = String(repeating: " ", count: "castc \(command) ".count)
        let first = (["castc", command] + lines.prefix(1)).joined(separator: " ")
        let rest = lines.dropFirst() + ["[--socket <path>] [--device <name|id|host>] [--json]"]
        return ([first] + rest.map { indent + $0 }).joined(separator: "\n")
    }

    /// The socket to connect to, by `CastdSocketPath`'s rules (which `CastdClient` applies to
    /// `socket` when it connects).
    func socketPath(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
    ) -> String {
        CastdSocketPath.resolve(explicit: socket, environment: environment, exists: exists)
    }

    /// The selector to send: "" lets castd choose.
    var deviceSelector: String { device ?? "" }

    /// Connects, runs `body`, disconnects.
    func withClient<Result: Sendable>(_ body: (CastdClient) async throws -> Result) async throws -> Result {
        // The option as given: the client resolves it, reading the environment once.
        try await CastdClient.withConnection(socketPath: socket, body)
    }

    /// Prints `message` as JSON if --json was given, else `human()`.
    func print(_ message: some SwiftProtobuf.Message, human: () -> String) throws {
        Terminal.line(json ? try JSONOutput.string(message) : human())
    }
}

/// A castc subcommand: every one takes the global options.
protocol CastcCommand: AsyncParsableCommand {
    var options: GlobalOptions { get }
}
