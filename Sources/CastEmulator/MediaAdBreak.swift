import CastProtocol

/// An ad break of the media (`media.breaks[]`), with its clips found in `media.breakClips[]`.
///
/// Position 0 is a pre-roll (played before the content), a negative position (CAF uses -1) a
/// post-roll (played when the content ends), anything else a mid-roll played when the content
/// reaches it. Breaks without an id or without a clip that can be found are ignored.
struct AdBreak {
    /// Clips that do not say how long they are last this long (seconds).
    static let defaultClipDuration = 10.0

    /// Index in `media.breaks`, where `isWatched` is written back.
    var index: Int
    var id: String
    var position: Double
    var clips: [BreakClip]
    var isWatched: Bool

    var isPreRoll: Bool { position == 0 }
    var isPostRoll: Bool { position < 0 }

    /// The breaks of `media` in the order given.
    static func breaks(in media: [String: JSONValue]) -> [AdBreak] {
        var clipsByID: [String: BreakClip] = [:]
        for clip in media["breakClips"]?.arrayValue ?? [] {
            guard let id = clip["id"]?.stringValue, !id.isEmpty, clipsByID[id] == nil else { continue }
            let duration = clip["duration"]?.doubleValue.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            let whenSkippable = clip["whenSkippable"]?.doubleValue.flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
            clipsByID[id] = BreakClip(
                id: id, duration: duration ?? defaultClipDuration, whenSkippable: whenSkippable
            )
        }
        var breaks: [AdBreak] = []
        for (index, entry) in (media["breaks"]?.arrayValue ?? []).enumerated() {
            guard let id = entry["id"]?.stringValue, !id.isEmpty,
                let position = entry["position"]?.doubleValue, position.isFinite
            else { continue }
            let clips = (entry["breakClipIds"]?.arrayValue ?? []).compactMap {
                $0.stringValue.flatMap { clipsByID[$0] }
            }
            guard !clips.isEmpty else { continue }
            breaks.append(
                AdBreak(
                    index: index, id: id, position: position, clips: clips,
                    isWatched: entry["isWatched"]?.boolValue ?? false
                )
            )
        }
        return breaks
    }

    /// Sets `isWatched` on the break at `index` of `media.breaks`.
    static func markWatched(index: Int, in media: inout [String: JSONValue]) {
        guard var breaks = media["breaks"]?.arrayValue, breaks.indices.contains(index),
            var entry = breaks[index].objectValue
        else { return }
        entry["isWatched"] = true
        breaks[index] = .object(entry)
        media["breaks"] = .array(breaks)
    }
}

/// One clip of an ad break (`media.breakClips[]`).
struct BreakClip {
    var id: String
    var duration: Double
    /// Seconds into the clip after which SKIP_AD is accepted; nil: never.
    var whenSkippable: Double?
}

/// The ad break being played, and where in it.
struct AdPlayback {
    var adBreak: AdBreak
    var clipIndex = 0
    /// Seconds into the current clip at the player's `since`.
    var clipPosition = 0.0
    /// Whether the status that shows the clip as skippable has been broadcast.
    var skippableAnnounced = false

    var clip: BreakClip { adBreak.clips[clipIndex] }

    /// How much of the break the clips before the current one took.
    var timeBeforeClip: Double {
        adBreak.clips[..<clipIndex].reduce(0) { $0 + $1.duration }
    }
}
