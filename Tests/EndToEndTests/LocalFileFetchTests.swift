import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// A local file as a TV plays it: the emulator, published as a real device is (so it fetches
/// media, `--fetch-media`), reads the start of the file from castd's media server at LOAD, and
/// reads again where a seek lands; castd answers each with the bytes asked for.
extension EndToEndTests {
    /// The emulator's `{"fetch": …}` records (its `--log`), in order.
    static func fetches(_ setup: Setup) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: setup.emulatorLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["fetch"] as? [String: Any]
        }
    }

    @Test func theDeviceFetchesALocalFileFromCastd() async throws {
        try await withSetup { setup in
            let movie = setup.directory + "/movie.mp4"
            // A 4 MiB file whose bytes say where they are: a range fetched can be checked.
            let size = 4 << 20
            try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 / 4096) }).write(to: URL(fileURLWithPath: movie))
            let loaded = try await setup.castc(["load", movie, "--duration", "100", "--device", setup.deviceName])
            #expect(loaded.status == 0, "\(loaded)")
            let url = try #require(try await setup.status().media.first?.media.contentID)
            #expect(url.hasPrefix("http://127.0.0.1:"), "\(url)")

            // At LOAD, the start, from castd's server: 206 and 64 KiB.
            let first = try #require(
                Self.fetches(setup).first { $0["url"] as? String == url }, "\(Self.fetches(setup))")
            #expect(first["range"] as? String == "bytes=0-65535")
            #expect(first["status"] as? Int == 206 && first["bytes"] as? Int == 65536, "\(first)")
            #expect(first["size"] as? Int == size, "\(first)")

            // A seek to 50 s of 100: a ranged read at the middle of the file.
            let sought = try await setup.castc(["seek", "50", "--device", setup.deviceName])
            #expect(sought.status == 0, "\(sought)")
            // Where the seek landed, give or take the moment the device took: 50 s to 51 s.
            let landed = (size / 2)...(size / 2 + size / 100)
            func offset(_ record: [String: Any]) -> Int? {
                (record["range"] as? String)?.dropFirst("bytes=".count).split(separator: "-").first.flatMap { Int($0) }
            }
            try await eventually("the device to read where the seek landed") {
                Self.fetches(setup).contains { record in
                    record["purpose"] as? String == "seek" && record["status"] as? Int == 206
                        && offset(record).map(landed.contains) == true
                }
            }
        }
    }
}
