import CastEmulator
import CastProtocol
import CastSenderLink
import CastTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Reading `/setup/eureka_info` from a device known only by its address: HTTPS first, HTTP for
/// older firmware, bounded in size and time.
struct DeviceInfoReaderTests {
    /// A reader of the test's servers. Its budget for the whole read is what
    /// `aDeviceThatNeverAnswersCostsTheTimeoutOnly` tests; elsewhere it only bounds a test that
    /// would hang, and is generous: the servers are in this process, on NIO's event loops,
    /// which the suite's other tests keep busy. With castd's 5 s, a loopback answer missed it in
    /// a plain run of phase 2 (both cores computing; `CASTD_TEST_STALL_CHECK` showed every
    /// thread of the test process waiting for a CPU for seconds at a time).
    func reader(https: Int, http: Int, timeout: Duration = .seconds(60)) -> DeviceInfoReader {
        var reader = DeviceInfoReader()
        reader.httpsPort = https
        reader.httpPort = http
        reader.timeout = timeout.scaledForTests
        return reader
    }

    @Test func theDeviceSaysWhoItIsOverHTTPS() async throws {
        var configuration = EmulatorConfiguration()
        configuration.name = "Den TV"
        configuration.model = "Chromecast Ultra"
        configuration.httpsPort = 0
        try await withEmulator(configuration) { emulator, endpoints in
            try await withRefusingTCPPort { refused in
                let https = try #require(endpoints.httpsPort)
                let info = try await reader(https: https, http: refused).read(host: endpoints.host)
                #expect(info.name == "Den TV" && info.model == "Chromecast Ultra" && info.manufacturer == "Google Inc.")
                #expect(info.id == emulator.configuration.deviceID, "the id mDNS's TXT record gives")
                #expect(info.build?.isEmpty == false)
            }
        }
    }

    @Test func olderFirmwareWithoutHTTPSIsReadOverHTTP() async throws {
        var configuration = EmulatorConfiguration()
        configuration.name = "Old TV"
        configuration.httpPort = 0
        try await withEmulator(configuration) { emulator, endpoints in
            try await withRefusingTCPPort { refused in
                let http = try #require(endpoints.httpPort)
                let info = try await reader(https: refused, http: http).read(host: endpoints.host)
                #expect(info.name == "Old TV" && info.id == emulator.configuration.deviceID)
            }
        }
    }

    @Test func aDeviceThatServesNeitherSaysWhyForEach() async throws {
        try await withRefusingTCPPort { https in
            try await withRefusingTCPPort { http in
                let failure = await #expect(throws: DeviceInfoReader.Failure.self) {
                    try await reader(https: https, http: http).read(host: "127.0.0.1")
                }
                #expect(failure?.attempts.count == 2, "\(String(describing: failure))")
                #expect(failure?.attempts.first?.hasPrefix("https://127.0.0.1:\(https)/setup/eureka_info") == true)
                #expect(failure?.attempts.last?.contains("cannot connect") == true)
            }
        }
    }

    /// Bounded in time: a device that accepts and never answers costs the read its timeout,
    /// not more. (Timing: the timeout is short and scaled; the check is only that it ends.)
    @Test func aDeviceThatNeverAnswersCostsTheTimeoutOnly() async throws {
        let (fd, port) = try silentTCPListener()
        defer { close(fd) }
        let failure = await #expect(throws: DeviceInfoReader.Failure.self) {
            try await reader(https: port, http: port, timeout: .milliseconds(300)).read(host: "127.0.0.1")
        }
        #expect(failure?.description.contains("no answer within") == true, "\(String(describing: failure))")
    }

    /// Bounded in size: an answer over 64 KiB is refused, whether it says its length or not.
    @Test(arguments: [true, false])
    func anAnswerOver64KiBIsRefused(sayingItsLength: Bool) async throws {
        let body = "{\"name\": \"" + String(repeating: "x", count: 70 * 1024) + "\"}"
        try await withHTTPServer(body: body, sayingItsLength: sayingItsLength) { port in
            try await withRefusingTCPPort { refused in
                let failure = await #expect(throws: DeviceInfoReader.Failure.self) {
                    try await reader(https: refused, http: port).read(host: "127.0.0.1")
                }
                #expect(failure?.description.contains("over 65536 bytes") == true, "\(String(describing: failure))")
            }
        }
    }

    @Test func anAnswerThatIsNotJSONOrNot200IsAFailure() async throws {
        try await withHTTPServer(body: "<html>setup</html>") { port in
            try await withRefusingTCPPort { refused in
                let failure = await #expect(throws: DeviceInfoReader.Failure.self) {
                    try await reader(https: refused, http: port).read(host: "127.0.0.1")
                }
                #expect(failure?.description.contains("not a JSON object") == true, "\(String(describing: failure))")
            }
        }
        try await withHTTPServer(body: "{}", status: .notFound) { port in
            try await withRefusingTCPPort { refused in
                let failure = await #expect(throws: DeviceInfoReader.Failure.self) {
                    try await reader(https: refused, http: port).read(host: "127.0.0.1")
                }
                #expect(failure?.description.contains("HTTP 404") == true, "\(String(describing: failure))")
            }
        }
    }
}
