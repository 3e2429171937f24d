import Testing

@testable import CastdConversion

@Suite struct MediaProbeTests {
    @Test func textAndImageSubtitles() {
        #expect(MediaProbe.SubtitleStream(index: 2, codec: "ass").isText)
        #expect(MediaProbe.SubtitleStream(index: 2, codec: "mov_text").isText)
        #expect(!MediaProbe.SubtitleStream(index: 2, codec: "hdmv_pgs_subtitle").isText)
        #expect(!MediaProbe.SubtitleStream(index: 2, codec: "dvd_subtitle").isText)
    }
}
