import CastProtocol
import Foundation

/// ffprobe's JSON (`-print_format json -show_format -show_streams`) as a ``MediaProbe``. The
/// file it describes is anyone's: every string is bounded, every number range-checked, and a
/// value out of range is taken as unknown, not trusted.
enum FFprobeOutput {
    /// Streams beyond this many are not looked at (a file may declare thousands).
    static let streamLimit = 256

    static func parse(_ bytes: [UInt8]) throws(FFprobe.Failure) -> MediaProbe {
        let json: JSONValue
        do {
            json = try JSONValue.parse(Data(bytes))
        } catch {
            throw .unreadable("not JSON: \(error)")
        }
        guard let format = json["format"]?.objectValue else { throw .unreadable("no format") }
        let names = word(format["format_name"], limit: 128) ?? ""
        let formatNames = names.split(separator: ",").map(String.init).filter { !$0.isEmpty }
        guard !formatNames.isEmpty else { throw .unreadable("no format name") }
        var probe = MediaProbe(formatNames: formatNames, duration: seconds(format["duration"]))
        for stream in (json["streams"]?.arrayValue ?? []).prefix(streamLimit) {
            guard let stream = stream.objectValue, let index = integer(stream["index"], in: 0...65_535),
                let codec = word(stream["codec_name"], limit: 64)
            else { continue }
            let tags = stream["tags"]?.objectValue ?? [:]
            let disposition = stream["disposition"]?.objectValue ?? [:]
            let flag = { (name: String) in integer(disposition[name], in: 0...1) == 1 }
            let language = word(tags["language"], limit: 16).flatMap { $0 == "und" ? nil : $0 }
            let title = text(tags["title"], limit: 200)
            switch stream["codec_type"]?.stringValue {
            case "video":
                guard !flag("attached_pic"), let width = integer(stream["width"], in: 1...16_384),
                    let height = integer(stream["height"], in: 1...16_384)
                else { continue }
                probe.video.append(
                    MediaProbe.VideoStream(
                        index: index, codec: codec, profile: text(stream["profile"], limit: 64),
                        level: integer(stream["level"], in: 0...1000), width: width, height: height,
                        frameRate: frameRate(stream["avg_frame_rate"]) ?? frameRate(stream["r_frame_rate"]),
                        bitDepth: bitDepth(stream), hdr: hdr(stream), language: language))
            case "audio":
                guard let channels = integer(stream["channels"], in: 1...64),
                    let sampleRate = integer(stream["sample_rate"], in: 1...768_000)
                else { continue }
                let bits =
                    integer(stream["bits_per_raw_sample"], in: 1...64)
                    ?? integer(stream["bits_per_sample"], in: 1...64)
                probe.audio.append(
                    MediaProbe.AudioStream(
                        index: index, codec: codec, profile: text(stream["profile"], limit: 64), channels: channels,
                        sampleRate: sampleRate, bitDepth: bits, language: language, title: title,
                        isDefault: flag("default")))
            case "subtitle":
                probe.subtitles.append(
                    MediaProbe.SubtitleStream(
                        index: index, codec: codec, language: language, title: title, isDefault: flag("default"),
                        isForced: flag("forced")))
            default:
                continue
            }
        }
        return probe
    }

    /// A number ffprobe writes as a number or as a string ("48000"), if within `range`.
    static func integer(_ value: JSONValue?, in range: ClosedRange<Int>) -> Int? {
        guard let value else { return nil }
        let number: Double?
        if let text = value.stringValue {
            number = text.utf8.count <= 20 ? Double(text) : nil
        } else {
            number = value.doubleValue
        }
        guard let number, number.isFinite, number == number.rounded(), number >= Double(range.lowerBound),
            number <= Double(range.upperBound)
        else { return nil }
        return Int(number)
    }

    /// A duration in seconds ("5.023000"), if finite and under a year.
    static func seconds(_ value: JSONValue?) -> Double? {
        guard let text = value?.stringValue, text.utf8.count <= 32, let number = Double(text), number.isFinite,
            number > 0, number < 366 * 86_400
        else { return nil }
        return number
    }

    /// "30000/1001" as frames a second, if a rate a video can have.
    static func frameRate(_ value: JSONValue?) -> Double? {
        guard let text = value?.stringValue, text.utf8.count <= 32 else { return nil }
        let parts = text.split(separator: "/")
        guard parts.count == 2, let numerator = Double(parts[0]), let denominator = Double(parts[1]), denominator > 0
        else { return nil }
        let rate = numerator / denominator
        return rate.isFinite && rate > 0 && rate <= 1000 ? rate : nil
    }

    /// A codec's or format's name: lowercase ASCII letters, digits and `_`, `-`, `,`, `.`, `:` only.
    static func word(_ value: JSONValue?, limit: Int) -> String? {
        guard let text = value?.stringValue, !text.isEmpty, text.utf8.count <= limit,
            text.utf8.allSatisfy({ byte in
                (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
                    || [0x5F, 0x2D, 0x2C, 0x2E, 0x3A].contains(byte)
            })
        else { return nil }
        return text.lowercased()
    }

    /// Free text (a profile, a title): cut to `limit` characters, without control characters.
    static func text(_ value: JSONValue?, limit: Int) -> String? {
        guard let text = value?.stringValue else { return nil }
        let clean = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(limit))
        return clean.isEmpty || clean == "unknown" ? nil : clean
    }

    /// Bits per sample of a video stream: `bits_per_raw_sample`, else the pixel format's
    /// (`yuv420p10le` is 10), else 8.
    static func bitDepth(_ stream: [String: JSONValue]) -> Int {
        if let bits = integer(stream["bits_per_raw_sample"], in: 1...16), bits >= 8 { return bits }
        let format = word(stream["pix_fmt"], limit: 32) ?? ""
        for bits in [16, 14, 12, 10] where format.contains("p\(bits)") { return bits }
        return 8
    }

    static func hdr(_ stream: [String: JSONValue]) -> MediaProbe.HDR {
        let sideData = stream["side_data_list"]?.arrayValue ?? []
        if sideData.prefix(16).contains(where: {
            ($0["side_data_type"]?.stringValue ?? "").localizedCaseInsensitiveContains("DOVI configuration")
        }) {
            return .dolbyVision
        }
        switch stream["color_transfer"]?.stringValue {
        case "smpte2084": return .hdr10
        case "arib-std-b67": return .hlg
        default: return .none
        }
    }
}
