import CastTestSupport
import CastProtocol
import Foundation
import Testing

/// Inputs the fuzzers (Fuzz/, scripts/fuzz.sh) found to break a property; each is also in the
/// target's corpus (Fuzz/Corpus), which `scripts/fuzz.sh --replay` replays.
@Suite(.tags(.cpuBound)) struct FuzzFindingsTests {
    /// CastPayloadFuzzer, Fuzz/Corpus/CastPayloadFuzzer/hostile-receiver-volume-strings.json: a
    /// volume level sent as the string "nan" read as NaN, so the status never equalled itself
    /// (every RECEIVER_STATUS looked like a change) and clients were shown NaN.
    @Test func nonFiniteNumbersSpelledAsStringsAreNotNumbers() throws {
        for text in ["nan", "NaN", "inf", "-inf", "infinity", " nan"] {
            #expect(JSONValue.string(text).doubleValue == nil, "\(text)")
            #expect(JSONValue.string(text).intValue == nil, "\(text)")
        }
        #expect(JSONValue.string(" 0.25 ").doubleValue == 0.25)
        let payload = try JSONValue.parse(
            #"{"type":"RECEIVER_STATUS","status":{"volume":{"level":"nan","muted":"1","stepInterval":"inf"}}}"#)
        let status = CastReceiverStatus(payload: payload)
        #expect(status.volume?.level == nil && status.volume?.stepInterval == nil)
        #expect(CastReceiverStatus(payload: status.json) == status)
    }

    /// CastPayloadFuzzer, Fuzz/Corpus/CastPayloadFuzzer/hostile-media-status-object.json: a
    /// MEDIA_STATUS with "playbackRate": "inf" was published to clients with an infinite rate.
    @Test func anInfinitePlaybackRateIsNotRead() throws {
        let payload = try JSONValue.parse(
            #"{"type":"MEDIA_STATUS","status":{"mediaSessionId":"12","playbackRate":"inf","currentTime":"-infinity"}}"#)
        let entry = try #require(CastMediaStatus.entries(in: payload).first)
        #expect(entry.mediaSessionID == 12)
        #expect(entry.playbackRate == 1)  // the default, as when absent
        #expect(entry.currentTime == 0)
    }
}
