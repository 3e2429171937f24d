import CastEmulator
import CastProtocol
import CastTestSupport
import Foundation
import Testing

/// `--fetch-media` through the `cast-emulator` binary, against a local HTTP server.
@Suite("cast-emulator --fetch-media")
struct MediaFetchCommandLineTests {
    @Test("--help explains --fetch-media / --no-fetch-media and what is never fetched")
    func help() async throws {
        let (status, output) = try await CommandLineTests.run(["--help"])
        #expect(status == 0)
        let words = output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for text in [
            "--fetch-media", "--no-fetch-media", "default: on with --publish", "LOAD_FAILED 103",
            "Only http:// URLs whose host is an IP address or localhost are fetched", "never fetched nor resolved",
        ] {
            #expect(words.contains(text), "\(text) missing from --help")
        }
    }

    @Test("--probe-media: --help says what it does; without fetching it is refused, saying what to add")
    func probeMedia() async throws {
        let (status, output) = try await CommandLineTests.run(["--help"])
        #expect(status == 0)
        let words = output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for text in ["--probe-media", "Play only what the model (--model) plays", "LOAD_FAILED 104"] {
            #expect(words.contains(text), "\(text) missing from --help")
        }
        let (refused, message) = try await CommandLineTests.run(["--probe-media", "--port", "0"])
        #expect(refused != 0)
        #expect(message.contains("--probe-media needs the device to fetch its media: add --fetch-media"), "\(message)")
    }

    @Test("With --fetch-media an unpublished emulator fetches a LOAD's URL from the local server, and logs it")
    func fetchesWhenLoaded() async throws {
        try await MediaTestServer.with { server in
            try await withTemporaryDirectory { directory in
                let ready = directory + "/ready.json"
                let log = directory + "/messages.jsonl"
                try await withProcesses { launch in
                    let process = try launch(
                        try CommandLineTests.binary().path,
                        ["--port", "0", "--fetch-media", "--ready-file", ready, "--log", log], [:])
                    try await CastTestSupport.eventually(timeout: .seconds(60), "the ready file") {
                        try process.checkRunning()
                        return FileManager.default.fileExists(atPath: ready)
                    }
                    let port = try #require(
                        try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: ready)))["port"]?.intValue)
                    let sender = try await RawCastSender.connect(host: "127.0.0.1", port: Int(port))
                    let transportID = try await sender.launchMediaReceiver()
                    let path = "/media/1048576/movie.mp4"
                    let loaded = try await MediaFetchTests.load(
                        sender, transportID, MediaFetchTests.media(server.url(path), duration: 60))
                    #expect(loaded.firstStatus?["playerState"] == "PLAYING")
                    #expect(server.requests(for: path).first?.range == "bytes=0-65535")

                    try await withRefusingTCPPort { refused in
                        let failed = try await MediaFetchTests.load(
                            sender, transportID, MediaFetchTests.media("http://127.0.0.1:\(refused)/x.mp4"),
                            requestID: 801)
                        #expect(failed["type"] == "LOAD_FAILED")
                        #expect(failed["detailedErrorCode"] == 103)
                    }
                    let fetches = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap {
                        try JSONValue.parse(String($0))["fetch"]
                    }
                    #expect(
                        fetches.contains {
                            $0["url"] == .string(server.url(path)) && $0["range"] == "bytes=0-65535"
                                && $0["status"] == 206 && $0["bytes"] == 65_536
                        })
                    #expect(fetches.contains { $0["error"]?.stringValue?.contains("cannot connect") == true })
                }
            }
        }
    }

    @Test("Unpublished and without --fetch-media nothing is fetched: an unreachable URL plays as before")
    func offWithoutPublish() async throws {
        try await withTemporaryDirectory { directory in
            let ready = directory + "/ready.json"
            try await withProcesses { launch in
                let process = try launch(
                    try CommandLineTests.binary().path, ["--port", "0", "--ready-file", ready], [:])
                try await CastTestSupport.eventually(timeout: .seconds(60), "the ready file") {
                    try process.checkRunning()
                    return FileManager.default.fileExists(atPath: ready)
                }
                let port = try #require(
                    try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: ready)))["port"]?.intValue)
                let sender = try await RawCastSender.connect(host: "127.0.0.1", port: Int(port))
                let transportID = try await sender.launchMediaReceiver()
                try await withRefusingTCPPort { refused in
                    let loaded = try await MediaFetchTests.load(
                        sender, transportID, MediaFetchTests.media("http://127.0.0.1:\(refused)/x.mp4"))
                    #expect(loaded.firstStatus?["playerState"] == "PLAYING")
                }
            }
        }
    }
}
