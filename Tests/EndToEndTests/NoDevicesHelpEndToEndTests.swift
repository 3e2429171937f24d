import CastTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `castc devices` and `castc status` with no device, against a real castd: why none, and
/// what to do, for the causes castd can be made to have here.
struct NoDevicesHelpEndToEndTests {
    /// A castd of its own, with `arguments` after its socket and state flags and with
    /// `environment`, once it says it is ready (sd_notify's READY=1): `body` gets castc's
    /// environment for it.
    func withCastd(
        _ arguments: [String], environment: [String: String] = [:], _ body: ([String: String]) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            try await withProcesses { launch in
                let notify = try DatagramListener(path: directory + "/notify.sock")
                let socket = directory + "/castd.sock"
                var environment = environment
                environment["NOTIFY_SOCKET"] = notify.path
                _ = try launch(
                    "castd", ["--mode", "user", "--socket", socket, "--state-directory", ""] + arguments, environment)
                var ready = false
                while !ready, let message = try await notify.receive(timeout: processStartTimeout) {
                    ready = message.contains("READY=1")
                }
                try #require(ready, "castd to say it is ready")
                try await body(["CASTD_SOCKET": socket])
            }
        }
    }

    @Test func discoveryOffSaysHowToGiveADevice() async throws {
        try await withCastd(["--no-discovery"]) { environment in
            let devices = try await run("castc", ["devices"], environment: environment)
            #expect(devices.status == 0, "\(devices)")
            #expect(devices.stdout.contains("castd does not look for any (it runs with --no-discovery"), "\(devices)")
            #expect(devices.stdout.contains("castd --device 192.168.1.20"))
            let status = try await run("castc", ["status"], environment: environment)
            #expect(status.stdout.hasPrefix("cast  "), "\(status)")
            #expect(status.stdout.contains("no devices available"))
            #expect(status.stdout.contains("castd does not look for any"), "\(status)")
            // Scripts get the list, not the advice.
            let json = try await run("castc", ["devices", "--json"], environment: environment)
            #expect(!json.stdout.contains("castd does not look"), "\(json)")
        }
    }

    /// Avahi out of reach (castd's D-Bus system bus is a path where nothing listens).
    @Test func avahiOutOfReachSaysSoAndHowToStartIt() async throws {
        try await withTemporaryDirectory { elsewhere in
            let bus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(elsewhere)/no-bus"]
            try await withCastd([], environment: bus) { environment in
                var last = ""
                // castd says so once avahi-client gives up on the bus (at once here).
                try await eventually(poll: .milliseconds(250), "castc devices to say Avahi is out of reach") {
                    last = try await run("castc", ["devices"], environment: environment).stdout
                    return last.contains("castd cannot look for any with mDNS")
                }
                #expect(last.contains("systemctl start avahi-daemon"), "\(last)")
            }
        }
    }
}
