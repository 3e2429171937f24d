import Testing

@testable import CastdConversion

/// What ffprobe prints, written by hand: the values a hostile file can put there.
@Suite struct FFprobeOutputTests {
    static func parse(_ json: String) throws -> MediaProbe {
        try FFprobeOutput.parse(Array(json.utf8))
    }

    @Test func outOfRangeValuesAreUnknownNotTrusted() throws {
        let probe = try Self.parse(
            """
            {"format": {"format_name": "matroska,webm", "duration": "1e300"},
             "streams": [
               {"index": 0, "codec_type": "video", "codec_name": "h264", "width": 99999999, "height": 90},
               {"index": 1, "codec_type": "video", "codec_name": "h264", "width": 1920, "height": 1080,
                "level": -99, "avg_frame_rate": "0/0", "r_frame_rate": "24000/1001", "profile": "High\\u0007"},
               {"index": 2, "codec_type": "audio", "codec_name": "aac", "channels": 1000, "sample_rate": "48000"},
               {"index": 3, "codec_type": "audio", "codec_name": "a c3", "channels": 2, "sample_rate": "48000"},
               {"index": 70000, "codec_type": "audio", "codec_name": "aac", "channels": 2, "sample_rate": "48000"},
               {"index": 4, "codec_type": "audio", "codec_name": "opus", "channels": 2, "sample_rate": "48000",
                "tags": {"language": "und"}, "disposition": {"default": 7}},
               {"index": 5, "codec_type": "data", "codec_name": "bin_data"}
             ]}
            """)
        #expect(probe.formatNames == ["matroska", "webm"])
        #expect(probe.duration == nil)
        #expect(probe.video.map(\.index) == [1])
        #expect(probe.video[0].level == nil)
        #expect(abs((probe.video[0].frameRate ?? 0) - 23.976) < 0.001)
        #expect(probe.video[0].profile == "High")
        #expect(probe.audio.map(\.index) == [4])
        #expect(probe.audio[0].language == nil && !probe.audio[0].isDefault)
    }

    @Test func notFFprobesOutputIsUnreadable() {
        for text in ["", "[]", "{\"streams\": []}", "{\"format\": {\"format_name\": \"\"}}", "{\"format\": 1}"] {
            #expect(throws: FFprobe.Failure.self, "\(text)") { try Self.parse(text) }
        }
    }

    @Test func manyStreamsAreCutAtTheLimit() throws {
        let stream = #"{"index": 1, "codec_type": "subtitle", "codec_name": "subrip"}"#
        let json =
            #"{"format": {"format_name": "matroska"}, "streams": ["#
            + Array(repeating: stream, count: 5000).joined(separator: ",") + "]}"
        #expect(try Self.parse(json).subtitles.count == FFprobeOutput.streamLimit)
    }

    @Test func dolbyVisionAndHLG() throws {
        let probe = try Self.parse(
            """
            {"format": {"format_name": "mov,mp4,m4a,3gp,3g2,mj2", "duration": "10.5"},
             "streams": [
               {"index": 0, "codec_type": "video", "codec_name": "hevc", "width": 3840, "height": 2160,
                "pix_fmt": "yuv420p10le", "color_transfer": "smpte2084",
                "side_data_list": [{"side_data_type": "DOVI configuration record", "dv_profile": 8}]},
               {"index": 1, "codec_type": "video", "codec_name": "hevc", "width": 3840, "height": 2160,
                "bits_per_raw_sample": "10", "color_transfer": "arib-std-b67"}
             ]}
            """)
        #expect(probe.duration == 10.5)
        #expect(probe.video.map(\.hdr) == [.dolbyVision, .hlg])
        #expect(probe.video.map(\.bitDepth) == [10, 10])
    }
}
