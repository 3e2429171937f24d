import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// The emulator plays only what its model plays (`--probe-media`): it reads what castd serves
/// with ffprobe, as a TV's player would, and fails the LOAD of a file its model cannot play with
/// the LOAD_FAILED a real device sends. castd serves files as they are today (issue 38 converts
/// them): these tests hold the emulator to the table castd will decide by.
extension EndToEndTests {
    /// Makes `path` with ffmpeg from test sources: two seconds of a test picture and a tone.
    static func makeMedia(_ path: String, _ codecs: [String], channels: Int = 2) async throws {
        let made = try await run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:duration=2",
                "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-ac", "\(channels)", "-pix_fmt", "yuv420p",
            ] + codecs + [path], timeout: .seconds(60))
        try #require(made.status == 0, "ffmpeg: \(made)")
    }

    @Test func aChromecastPlaysH264AndAACAndRefusesMatroskaWithAC3() async throws {
        try await withSetup(emulatorArguments: ["--model", "Chromecast", "--probe-media"]) { setup in
            let playable = setup.directory + "/film.mp4"
            try await Self.makeMedia(playable, ["-c:v", "libx264", "-c:a", "aac", "-movflags", "+faststart"])
            let loaded = try await setup.castc(["load", playable, "--device", setup.deviceName])
            #expect(loaded.status == 0, "\(loaded)")
            #expect(try await setup.status().media.first?.playerState == .playing)

            let unplayable = setup.directory + "/film.mkv"
            try await Self.makeMedia(unplayable, ["-c:v", "libx264", "-c:a", "ac3"], channels: 6)
            let refused = try await setup.castc(["load", unplayable, "--device", setup.deviceName])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("LOAD_FAILED, MEDIA_SRC_NOT_SUPPORTED 104"), "\(refused)")
            // The device read the file before it refused it: the refusal is its player's.
            let url = try #require(
                Self.fetches(setup).last { ($0["url"] as? String)?.hasSuffix(".mkv") == true }?["url"] as? String)
            #expect(Self.fetches(setup).contains { $0["url"] as? String == url && $0["status"] as? Int == 206 })
        }
    }

    /// One file, two models: VP9 and Opus in WebM play on a Chromecast with Google TV, not on a
    /// 2nd-generation Chromecast, which has no VP9 decoder.
    @Test(arguments: [("Chromecast with Google TV", true), ("Chromecast", false)])
    func webMWithVP9PlaysWhereTheModelDecodesVP9(model: String, plays: Bool) async throws {
        try await withSetup(emulatorArguments: ["--model", model, "--probe-media"]) { setup in
            let clip = setup.directory + "/clip.webm"
            try await Self.makeMedia(
                clip, ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-c:a", "libopus"])
            let loaded = try await setup.castc(["load", clip, "--device", setup.deviceName])
            #expect((loaded.status == 0) == plays, "\(model): \(loaded)")
        }
    }
}
