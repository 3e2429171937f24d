import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `--image URL[@WIDTHxHEIGHT]`
enum ImageArgument {
    static func parse(_ text: String) throws -> CastdImage {
        var image = CastdImage()
        image.url = text
        // Only a trailing @<digits>x<digits> is a size: URLs may contain @ themselves.
        if let at = text.lastIndex(of: "@") {
            let size = text[text.index(after: at)...]
            let parts = size.split(separator: "x", omittingEmptySubsequences: false)
            if parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) {
                guard let width = UInt32(parts[0]), let height = UInt32(parts[1]), width > 0, height > 0 else {
                    throw ValidationError("'\(text)': the image size \(size) is not a size such as 1280x720")
                }
                image.url = String(text[..<at])
                image.width = width
                image.height = height
            }
        }
        do {
            try MediaURL.validate(image.url)
        } catch {
            throw ValidationError(
                "--image '\(text)' is not an image URL: give URL or URL@WIDTHxHEIGHT, such as https://example.com/poster.jpg@1280x720"
            )
        }
        return image
    }
}

/// `--ad-break POSITION:[vast:]CLIP_URL[:DURATION[:SKIPPABLE_AFTER]]`
struct AdBreakArgument: Equatable {
    /// Seconds into the content; 0 a pre-roll, -1 a post-roll.
    var position: Double
    /// The clip's media, or with `vast` the ad server's VAST request URL.
    var url: String
    var duration: Double?
    var skippableAfter: Double?
    /// Whether `url` is a VAST ad tag: the ad server gives the clip's content.
    var vast = false
    var title: String?
    var posterURL: String?

    static let help = """
        give POSITION:CLIP_URL[:DURATION[:SKIPPABLE_AFTER]], such as \
        pre:https://example.com/ad.mp4:30:5, or POSITION:vast:AD_TAG_URL for an ad a VAST server \
        gives (POSITION: seconds, m:ss, pre or post; DURATION and SKIPPABLE_AFTER: seconds)
        """

    static func parse(_ text: String) throws -> AdBreakArgument {
        let invalid = { (why: String) in ValidationError("--ad-break '\(text)': \(why); \(help)") }
        // The clip URL starts with the scheme before the first "://".
        guard let schemeSeparator = text.firstRange(of: "://") else { throw invalid("no clip URL") }
        let head = text[..<schemeSeparator.lowerBound]
        guard let colon = head.lastIndex(of: ":") else { throw invalid("no position before the clip URL") }
        var positionText = head[..<colon]
        var urlText = text[text.index(after: colon)...]
        // POSITION:vast:URL: the URL is a VAST ad tag.
        var vast = false
        if positionText.lowercased().hasSuffix(":vast") {
            vast = true
            positionText = positionText.dropLast(5)
        }

        // Peel :DURATION and :SKIPPABLE_AFTER (plain seconds) off the end, but only after the
        // URL's path has begun, so that a port (http://host:8000) stays part of the URL.
        var numbers: [Double] = []
        let authorityStart = urlText.firstRange(of: "://")!.upperBound
        while numbers.count < 2, let last = urlText.lastIndex(of: ":"),
            let slash = urlText[authorityStart...].firstIndex(of: "/"), last > slash
        {
            let candidate = urlText[urlText.index(after: last)...]
            guard let seconds = Self.seconds(candidate) else { break }
            numbers.insert(seconds, at: 0)
            urlText = urlText[..<last]
        }

        let position: Double
        switch positionText.lowercased() {
        case "pre", "start": position = 0
        case "post", "end", "-1": position = -1
        default:
            guard let seconds = PlaybackTime.parse(positionText) else {
                throw invalid("'\(positionText)' is not a position")
            }
            position = seconds
        }
        let url = String(urlText)
        do { try MediaURL.validate(url) } catch { throw invalid("'\(url)' is not a URL") }
        var argument = AdBreakArgument(position: position, url: url)
        argument.vast = vast
        if numbers.count == 2 {
            argument.duration = numbers[0]
            argument.skippableAfter = numbers[1]
        } else if numbers.count == 1 {
            argument.duration = numbers[0]
        }
        if let duration = argument.duration, duration <= 0 { throw invalid("the duration must be more than 0") }
        if let skippable = argument.skippableAfter, let duration = argument.duration, skippable > duration {
            throw invalid("SKIPPABLE_AFTER \(skippable) is after the clip's end (\(duration) s)")
        }
        return argument
    }

    private static func seconds(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCIIDigit || $0 == "." }), text.first != "." else { return nil }
        return Double(text)
    }

    /// The breaks and clips a load carries: clips at the same position make one break, in the
    /// order given; breaks are sorted by position (pre-roll first, post-roll last). Ids are
    /// `break-1`, `break-2`, … and `clip-1`, `clip-2`, … in that order.
    static func breaks(_ arguments: [AdBreakArgument]) -> (breaks: [CastdAdBreak], clips: [CastdAdBreakClip]) {
        var positions: [Double] = []
        for argument in arguments where !positions.contains(argument.position) { positions.append(argument.position) }
        positions.sort { a, b in
            if a < 0 { return false }
            if b < 0 { return true }
            return a < b
        }
        var breaks: [CastdAdBreak] = []
        var clips: [CastdAdBreakClip] = []
        for position in positions {
            var adBreak = CastdAdBreak()
            adBreak.id = "break-\(breaks.count + 1)"
            adBreak.position = position
            var total: Double? = 0
            for argument in arguments where argument.position == position {
                var clip = CastdAdBreakClip()
                clip.id = "clip-\(clips.count + 1)"
                if argument.vast {
                    clip.vastAdsRequest.adTagURL = argument.url
                } else {
                    clip.contentID = argument.url
                    clip.contentURL = argument.url
                    clip.contentType = MediaURL.guessContentType(argument.url) ?? ""
                }
                if let title = argument.title { clip.title = title }
                if let poster = argument.posterURL { clip.posterURL = poster }
                if let duration = argument.duration { clip.duration = duration }
                if let skippable = argument.skippableAfter { clip.whenSkippable = skippable }
                total = argument.duration.flatMap { duration in total.map { $0 + duration } }
                adBreak.breakClipIds.append(clip.id)
                clips.append(clip)
            }
            if let total { adBreak.duration = total }
            breaks.append(adBreak)
        }
        return (breaks, clips)
    }
}

/// Options given once for all of a list (URLs, ad breaks), or once for each in order, as
/// `--subtitles-lang` is: `--item-preload 20`, or `--item-start 0 --item-start 1:30`.
enum PerItemValues {
    /// Checks that `values` (of `option`) are none, one, or one per each of `count` `items`.
    static func validate<T>(_ values: [T], option: String, count: Int, items: String) throws {
        guard values.count > 1, values.count != count else { return }
        throw ValidationError(
            "\(values.count) \(option) for \(count) \(items): give one for all, or one for each, in order")
    }

    /// The value for the item at `index`: its own, the one for all, or nil.
    static func value<T>(_ values: [T], at index: Int, count: Int) -> T? {
        values.count == count && count > 1 ? values[index] : values.first
    }
}

/// `--custom-data` and other JSON objects given on the command line.
enum JSONArgument {
    static func validateObject(_ text: String, option: String) throws {
        if CastdJSON.isObject(text) { return }
        if let problem = CastdJSON.problem(text) {
            throw ValidationError(
                "\(option) is not JSON (\(problem)); give a JSON object such as '{\"key\":\"value\"}'")
        }
        throw ValidationError("\(option) must be a JSON object, such as '{\"key\":\"value\"}'")
    }
}

/// `castc rate` and `load --rate`: 0.5 to 2.0, optionally written `1.5x`.
enum PlaybackRateArgument {
    static func parse(_ text: String) throws -> Double {
        let number = text.hasSuffix("x") || text.hasSuffix("X") ? String(text.dropLast()) : text
        guard !number.isEmpty, number.allSatisfy({ $0.isASCIIDigit || $0 == "." }), let rate = Double(number) else {
            throw ValidationError("'\(text)' is not a playback rate: give 0.5 to 2.0 (1 is normal speed), such as 1.25")
        }
        guard CastdValidation.playbackRates.contains(rate) else {
            throw ValidationError("playback rate \(text) is out of range: give 0.5 to 2.0 (1 is normal speed)")
        }
        return rate
    }

    /// `1.5×`
    static func format(_ rate: Double) -> String {
        number(rate) + "×"
    }

    /// `1.5`, `0.75`, `2`: at most two decimals, no trailing zeros.
    static func number(_ value: Double) -> String {
        // As "%.2f" would write it (rounding half to even), without Foundation's String(format:).
        let hundredths = Int((value.magnitude * 100).rounded(.toNearestOrEven))
        let cents = hundredths % 100
        var text =
            (value < 0 && hundredths > 0 ? "-" : "") + "\(hundredths / 100)." + (cents < 10 ? "0" : "") + "\(cents)"
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

/// A season or an episode number: a whole number from 0.
enum WholeNumberArgument {
    static func parse(_ text: String, option: String) throws -> UInt32 {
        guard let number = UInt32(text) else {
            throw ValidationError("\(option) \(text) is not a whole number from 0 to \(UInt32.max)")
        }
        return number
    }
}

/// Track ids on the command line: whole numbers from 1.
enum ItemIDArgument {
    static func parse(_ text: String, what: String, hint: String) throws -> Int64 {
        guard text.allSatisfy(\.isASCIIDigit), let id = Int64(text), id > 0 else {
            throw ValidationError("'\(text)' is not a \(what): give the number \(hint)")
        }
        return id
    }

    static func track(_ text: String) throws -> Int64 {
        try parse(text, what: "track id", hint: "`castc tracks list` shows (ID column)")
    }
}

/// `--repeat` and `castc queue repeat`.
enum RepeatArgument: String, ExpressibleByArgument, CaseIterable {
    case off, all, one, shuffle

    var castd: CastdRepeatMode {
        switch self {
        case .off: return .off
        case .all: return .all
        case .one: return .single
        case .shuffle: return .allAndShuffle
        }
    }

    static let help = "off (stop at the end), all (start over), one (repeat the item) or shuffle (start over, shuffled)"
}

/// `castc devices --capability`.
enum CapabilityArgument: String, ExpressibleByArgument, CaseIterable {
    case videoOut = "video-out"
    case videoIn = "video-in"
    case audioOut = "audio-out"
    case audioIn = "audio-in"
    case group

    var castd: CastdDeviceCapabilities {
        switch self {
        case .videoOut: return .videoOut
        case .videoIn: return .videoIn
        case .audioOut: return .audioOut
        case .audioIn: return .audioIn
        case .group: return .multizoneGroup
        }
    }
}

/// `castc load --metadata-type`.
enum MetadataTypeArgument: String, ExpressibleByArgument, CaseIterable {
    case generic, movie, tv, music, photo

    var castd: CastdMetadataType {
        switch self {
        case .generic: return .generic
        case .movie: return .movie
        case .tv: return .tvShow
        case .music: return .musicTrack
        case .photo: return .photo
        }
    }
}
