import Foundation

/// A home LAN of network namespaces (`scripts/test-lan.sh`): a desktop and TVs on a bridge, each
/// with its own address, hostname and Avahi. Processes started in a node see only that node's
/// network; castd's socket is in the node's view of `/tmp`, which is the test's too.
public struct TestLAN: Sendable {
    public let directory: String

    /// The repository's `scripts/test-lan.sh`.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/test-lan.sh").path

    /// Nil when a LAN can be made here; else why not (not root, no network namespaces), for the
    /// tests to say as they skip.
    public static func unavailable() async -> String? {
        // In CI a missing privilege is a failure, not a skip: the tests run and fail saying why.
        if runningInCI { return nil }
        guard let result = try? await run(script, ["check"], timeout: .seconds(20)) else {
            return "scripts/test-lan.sh check did not run"
        }
        return result.status == 0 ? nil : result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Builds a LAN with `tvs` TVs, runs `body` with it and with `launch` for the processes it
    /// starts in its nodes, and removes it all afterwards.
    /// `impaired`: nodes whose cable delays and drops frames, as `["tv1": (delayMs: 100,
    /// lossPercent: 5)]` (`TEST_LAN_IMPAIR`).
    public static func with<T>(
        tvs: Int = 1, impaired: [String: (delayMs: Int, lossPercent: Int)] = [:],
        _ body: (
            _ lan: TestLAN,
            _ launch: (_ node: String, _ executable: String, _ arguments: [String]) throws -> ChildProcess
        )
            async throws -> T
    ) async throws -> T {
        try await withTemporaryDirectory { directory in
            let lan = TestLAN(directory: directory + "/lan")
            let impairment = impaired.map { "\($0.key)=\($0.value.delayMs):\($0.value.lossPercent)" }
            let up = try await run(
                script, ["up", lan.directory, "\(tvs)"],
                environment: ["TEST_LAN_IMPAIR": impairment.joined(separator: " ")],
                timeout: .seconds(60))
            guard up.status == 0 else {
                _ = try? await run(script, ["down", lan.directory])
                throw LANError(description: "scripts/test-lan.sh up failed: \(up)")
            }
            do {
                let result = try await withProcesses { launch in
                    try await withoutActuallyEscaping(launch) { launch in
                        try await body(lan) { node, executable, arguments in
                            let path =
                                executable.contains("/")
                                ? executable : productsDirectory.appendingPathComponent(executable).path
                            return try launch(script, ["exec", lan.directory, node, path] + arguments, [:])
                        }
                    }
                }
                _ = try? await run(script, ["down", lan.directory])
                return result
            } catch {
                _ = try? await run(script, ["down", lan.directory])
                throw error
            }
        }
    }

    /// The node's address on the LAN.
    public func address(of node: String) throws -> String {
        try String(contentsOfFile: directory + "/\(node).address", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Gives the node a new address on the LAN, as a DHCP renewal may (the old one is gone at
    /// once); returns it.
    public func renumber(_ node: String) async throws -> String {
        let result = try await run(Self.script, ["renumber", directory, node])
        guard result.status == 0 else { throw LANError(description: "renumber \(node): \(result)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Pulls the node's cable out at the switch (`false`), or plugs it back in: no FIN, no RST,
    /// no mDNS goodbye; packets simply stop.
    public func cable(_ node: String, plugged: Bool) async throws {
        let result = try await run(Self.script, ["cable", directory, node, plugged ? "up" : "down"])
        guard result.status == 0 else { throw LANError(description: "cable \(node): \(result)") }
    }
}

/// What went wrong building or changing a test LAN.
public struct LANError: Error, CustomStringConvertible {
    public var description: String
}
