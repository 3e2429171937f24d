import CastTestSupport
import CastdSupport
import Foundation
import Testing

@testable import CastdConversion

#if canImport(Glibc)
    import Glibc
#endif

/// ffprobe on files ffmpeg makes here (a second or two each, tiny frames: the codecs and
/// containers people have, not their sizes), and on output no ffprobe writes. With the
/// cpu-bound suites: the encoders (x265 above all) take the cores for seconds.
@Suite(.tags(.cpuBound)) struct FFprobeTests {
    /// Runs ffmpeg (required; CI installs it) quietly, awaited off the cooperative pool.
    static func ffmpeg(_ arguments: [String]) async throws {
        let executable = try #require(
            FFprobe.locate().map { String($0.dropLast("ffprobe".count)) + "ffmpeg" },
            "ffmpeg is required (apt-get install ffmpeg)")
        let result = try await run(executable, ["-nostdin", "-v", "error", "-y"] + arguments, timeout: .seconds(120))
        try #require(result.status == 0, "ffmpeg \(arguments): \(result.stderr)")
    }

    static let video = ["-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:duration=2"]
    static let sine = ["-f", "lavfi", "-i", "sine=frequency=440:duration=2"]
    static func surround(_ layout: String) -> [String] {
        ["-f", "lavfi", "-i", "sine=frequency=440:duration=2,aformat=channel_layouts=\(layout)"]
    }

    @Test func matroskaH264WithAC3FiveOne() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/film.mkv"
            try await Self.ffmpeg(
                Self.video + Self.surround("5.1") + [
                    "-c:v", "libx264", "-profile:v", "high", "-pix_fmt", "yuv420p", "-c:a", "ac3", path,
                ])
            let probe = try await FFprobe.probe(path)
            #expect(probe.formatNames.contains("matroska"))
            #expect(abs((probe.duration ?? 0) - 2) < 0.2, "\(String(describing: probe.duration))")
            let video = try #require(probe.video.first)
            #expect(video.codec == "h264" && video.profile == "High")
            #expect(video.width == 160 && video.height == 90 && video.bitDepth == 8 && video.hdr == .none)
            #expect(abs((video.frameRate ?? 0) - 25) < 0.01)
            #expect((10...52).contains(video.level ?? 0))
            let audio = try #require(probe.audio.first)
            #expect(audio.codec == "ac3" && audio.channels == 6 && audio.sampleRate == 44_100)
        }
    }

    @Test func hevcTenBitHDR10WithDTS() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/hdr.mkv"
            try await Self.ffmpeg(
                Self.video + Self.surround("5.1") + [
                    "-c:v", "libx265", "-pix_fmt", "yuv420p10le", "-x265-params",
                    "log-level=error:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc",
                    "-c:a", "dca", "-strict", "-2", path,
                ])
            let probe = try await FFprobe.probe(path)
            let video = try #require(probe.video.first)
            #expect(video.codec == "hevc" && video.profile == "Main 10" && video.bitDepth == 10)
            #expect(video.hdr == .hdr10)
            #expect(probe.audio.first?.codec == "dts")
        }
    }

    @Test func mp4WithMovTextAndTwoAudioLanguages() async throws {
        try await withTemporaryDirectory { directory in
            let srt = directory + "/subs.srt"
            try Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n".utf8).write(to: URL(fileURLWithPath: srt))
            let path = directory + "/film.mp4"
            try await Self.ffmpeg(
                Self.video + Self.sine + Self.sine + ["-i", srt] + [
                    "-map", "0", "-map", "1", "-map", "2", "-map", "3", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                    "-c:a", "aac",
                    "-c:s", "mov_text", "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra",
                    "-metadata:s:s:0", "language=deu", path,
                ])
            let probe = try await FFprobe.probe(path)
            #expect(probe.formatNames.contains("mp4"))
            #expect(probe.audio.map(\.language) == ["eng", "fra"])
            #expect(probe.audio.map(\.index) == [1, 2])
            #expect(probe.audio.allSatisfy { $0.codec == "aac" && $0.profile == "LC" })
            let subtitle = try #require(probe.subtitles.first)
            #expect(subtitle.codec == "mov_text" && subtitle.language == "deu" && subtitle.isText)
        }
    }

    @Test func audioFilesAndTheirCoverArt() async throws {
        try await withTemporaryDirectory { directory in
            let cover = directory + "/cover.png"
            try await Self.ffmpeg(["-f", "lavfi", "-i", "color=red:size=32x32", "-frames:v", "1", cover])
            let flac = directory + "/song.flac"
            try await Self.ffmpeg(
                ["-f", "lavfi", "-i", "sine=frequency=440:duration=2:sample_rate=96000", "-i", cover] + [
                    "-map", "0", "-map", "1", "-c:a", "flac", "-sample_fmt", "s32", "-bits_per_raw_sample", "24",
                    "-c:v", "copy", "-disposition:v", "attached_pic", flac,
                ])
            let probe = try await FFprobe.probe(flac)
            #expect(probe.formatNames == ["flac"])
            #expect(probe.video.isEmpty, "cover art is not a video stream")
            let audio = try #require(probe.audio.first)
            #expect(audio.codec == "flac" && audio.sampleRate == 96_000 && audio.bitDepth == 24)

            let wav = directory + "/tone.wav"
            try await Self.ffmpeg(Self.sine + [wav])
            let wavProbe = try await FFprobe.probe(wav)
            #expect(wavProbe.formatNames == ["wav"] && wavProbe.audio.first?.codec == "pcm_s16le")
        }
    }

    @Test func notMediaIsRefusedWithFFprobesReasonAndNotThePath() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/secret-notes.mkv"
            try Data("not a film at all".utf8).write(to: URL(fileURLWithPath: path))
            let failure = await #expect(throws: FFprobe.Failure.self) { try await FFprobe.probe(path) }
            guard case .notMedia(let message)? = failure else {
                Issue.record("\(String(describing: failure))")
                return
            }
            #expect(!message.isEmpty && !message.contains("secret-notes"), "\(message)")
        }
    }
}

/// ffprobe's bounds, apart from the encoding suite above (whose neighbours hold the cooperative
/// pool for seconds: a time measured there says nothing).
@Suite struct FFprobeBoundsTests {
    /// A reader that never gets a byte (a FIFO nobody writes) is killed at the limit.
    @Test func aProbeThatHangsIsKilledAtItsLimit() async throws {
        try await withTemporaryDirectory { directory in
            let fifo = directory + "/stuck"
            #expect(mkfifo(fifo, 0o600) == 0)
            let started = ContinuousClock.now
            let failure = await #expect(throws: FFprobe.Failure.self) {
                try await FFprobe.probe(fifo, timeout: .milliseconds(300))
            }
            #expect(failure == .timedOut(.milliseconds(300)))
            // Killed, not waited for to the end: it would never end.
            #expect(ContinuousClock.now - started < Duration.seconds(10).scaledForTests)
        }
    }

    @Test func withoutFFprobeCastdSaysToInstallIt() async throws {
        #expect(FFprobe.locate(path: "/nonexistent:/also-not") == nil)
        let failure = await #expect(throws: FFprobe.Failure.self) {
            try await FFprobe.probe("/dev/null", executable: nil)
        }
        #expect(failure == .notInstalled)
        #expect(failure?.description.contains("apt-get install ffmpeg") == true)
    }
}
