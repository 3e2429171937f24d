import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

@Suite("Device description: eureka_info over HTTP and HTTPS, message log")
struct DescriptionTests {
    @Test("GET /setup/eureka_info over HTTP and HTTPS (query ignored), as pychromecast reads it")
    func eurekaInfo() async throws {
        var configuration = EmulatorConfiguration()
        configuration.name = "Kitchen TV"
        configuration.model = "Chromecast Ultra"
        configuration.deviceID = "0123456789abcdef0123456789abcdef"
        configuration.httpPort = 0
        configuration.httpsPort = 0
        try await withEmulator(configuration) { emulator, endpoints in
            let httpPort = try #require(endpoints.httpPort)
            let httpsPort = try #require(endpoints.httpsPort)
            #expect(httpPort > 0 && httpsPort > 0 && httpPort != httpsPort)
            for (port, tls) in [(httpPort, false), (httpsPort, true)] {
                let response = try await HTTPFetch.get(
                    host: endpoints.host, port: port, path: "/setup/eureka_info?params=device_info,name", tls: tls
                )
                #expect(response.status == 200)
                #expect(response.headers["content-type"] == "application/json")
                let info = try JSONValue.parse(response.body)
                #expect(info["name"] == "Kitchen TV")
                let device = try #require(info["device_info"])
                #expect(device["manufacturer"] == "Google Inc.")
                #expect(device["model_name"] == "Chromecast Ultra")
                #expect(device["ssdp_udn"] == "01234567-89ab-cdef-0123-456789abcdef")
                #expect(device["capabilities"]?["display_supported"] == true)
                #expect(device["cloud_device_id"]?.stringValue == emulator.txtRecord["cd"])
                #expect(info["build_info"]?["cast_build_revision"]?.stringValue?.isEmpty == false)
                #expect(info["net"]?["ip_address"] == "127.0.0.1")
            }
            let missing = try await HTTPFetch.get(host: endpoints.host, port: httpPort, path: "/nope", tls: false)
            #expect(missing.status == 404)
            let icon = try await HTTPFetch.get(
                host: endpoints.host, port: httpPort, path: "/setup/icon.png", tls: false)
            #expect(icon.headers["content-type"] == "image/png")
            #expect(icon.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        }
    }

    @Test("An audio-only device (capabilities 4) says display_supported false")
    func audioDevice() async throws {
        var configuration = EmulatorConfiguration()
        configuration.capabilities = 4
        configuration.model = "Google Home Mini"
        configuration.httpPort = 0
        try await withEmulator(configuration) { _, endpoints in
            let response = try await HTTPFetch.get(
                host: endpoints.host, port: try #require(endpoints.httpPort), path: "/setup/eureka_info", tls: false
            )
            let info = try JSONValue.parse(response.body)
            #expect(info["device_info"]?["capabilities"]?["display_supported"] == false)
        }
    }

    @Test("The message log has one JSON line per message, both directions, binary as base64")
    func messageLog() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cast-emulator-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logPath = directory.appendingPathComponent("messages.jsonl").path
        var configuration = EmulatorConfiguration()
        configuration.logFile = logPath
        try await withEmulator(configuration) { _, endpoints in
            let sender = try await RawCastSender.connect(to: endpoints, sourceID: "sender-logged")
            try await sender.connect()
            try await sender.send(
                .binary(
                    source: "sender-logged", destination: "receiver-0", namespace: "urn:x-cast:com.example.binary",
                    bytes: Data([1, 2, 3]))
            )
            try await sender.receiver(["type": "GET_STATUS", "requestId": 1])
            _ = try await sender.reply(to: 1)
        }
        // On a loaded machine the link can idle past 5 s, and heartbeats are logged too: leave them out.
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n")
            .map { try JSONValue.parse(String($0)) }
            .filter { $0["namespace"] != .string(CastNamespace.heartbeat) }
        #expect(lines.count == 4)
        for line in lines {
            #expect(line["time"]?.stringValue?.hasSuffix("Z") == true)
            #expect(line["connection"]?.intValue == 1)
        }
        let getStatus = try #require(lines.first { $0["payload"]?["type"] == "GET_STATUS" })
        #expect(getStatus["direction"] == "in")
        #expect(getStatus["source"] == "sender-logged")
        #expect(getStatus["destination"] == "receiver-0")
        #expect(getStatus["namespace"] == .string(CastNamespace.receiver))
        let status = try #require(lines.first { $0["payload"]?["type"] == "RECEIVER_STATUS" })
        #expect(status["direction"] == "out")
        #expect(status["destination"] == "sender-logged")
        #expect(status["payload"]?["requestId"]?.intValue == 1)
        let binary = try #require(lines.first { $0["namespace"] == "urn:x-cast:com.example.binary" })
        #expect(binary["payload"] == ["binary": "AQID"])
    }
}
