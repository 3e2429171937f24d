import CastTestSupport
import Foundation
import Testing

/// Names, titles and messages reach castc from devices, mDNS and receiver apps: castc writes
/// their control characters out (`\u001b`), so that none can drive the user's terminal
/// (SECURITY.md, G1.5).
extension SystemServiceTests {
    @Test func controlCharactersFromADeviceNeverReachTheTerminal() async throws {
        // A device whose name clears the screen, sets the window title and rings the bell, as a
        // TXT `fn` can; castd takes a static device's name from its --device NAME=.
        let evil = "Evil\u{1b}[2J\u{1b}]0;owned\u{07}\u{9b}31m\rTV"
        try await withDaemon(castdArguments: ["--device", "\(evil)=127.0.0.1:9"]) { daemon in
            for arguments in [["devices"], ["devices", "--json"], ["status", "--verbose"]] {
                let result = try await daemon.castc(arguments)
                #expect(result.status == 0, "\(arguments): \(result)")
                let out = Array(result.stdout.unicodeScalars)
                #expect(
                    !out.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B || $0.value == 0x0D },
                    "\(arguments)")
                if !arguments.contains("--json") {
                    #expect(
                        result.stdout.contains("Evil\\u001b[2J\\u001b]0;owned\\u0007\\u009b31m\\u000dTV"),
                        "\(arguments): \(result.stdout)")
                }
            }
            // --json stays valid JSON, and reads back as the name itself.
            let json = try await daemon.castc(["devices", "--json"])
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let names = (parsed["devices"] as? [[String: Any]] ?? []).compactMap { $0["friendlyName"] as? String }
            #expect(names.contains(evil), "\(names)")

            // An error that echoes what the user typed (or a device said) is written out too.
            let missing = try await daemon.castc(["status", "--device", "nope\u{1b}[2J"])
            #expect(missing.status == 5)
            #expect(!missing.stderr.unicodeScalars.contains { $0.value == 0x1B }, "\(missing.stderr)")
            #expect(missing.stderr.contains("nope\\u001b[2J"), "\(missing.stderr)")
        }
    }
}
