import CastTestSupport
import Testing

@testable import CastdMediaServer

@Suite(.tags(.cpuBound)) struct WebVTTTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The WebVTT of `srt` (UTF-8) as text.
    static func converted(_ srt: String) throws -> String {
        String(decoding: try WebVTT.fromSubRip(bytes(srt)), as: UTF8.self)
    }

    static let twoCues = "1\n00:00:01,000 --> 00:00:02,500\nHello\n\n2\n00:00:03,000 --> 00:00:04,000\nWorld\nagain\n"
    static let twoCuesVTT =
        "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello\n\n00:00:03.000 --> 00:00:04.000\nWorld\nagain\n\n"

    @Test func plainSubRip() throws {
        #expect(try Self.converted(Self.twoCues) == Self.twoCuesVTT)
    }

    @Test func byteOrderMarkAndLineEnds() throws {
        let crlf = Self.twoCues.replacingAll("\n", "\r\n")
        #expect(try Self.converted(crlf) == Self.twoCuesVTT)
        #expect(try Self.converted("\u{FEFF}" + crlf) == Self.twoCuesVTT)
        #expect(try Self.converted(Self.twoCues.replacingAll("\n", "\r")) == Self.twoCuesVTT)
        #expect(try Self.converted(Self.twoCues.replacingAll("\n", "\r\r\n")) == Self.twoCuesVTT)
        // No final line end, blank lines of white space, extra blank lines, no cue numbers.
        let messy = "\n\n00:00:01,000 --> 00:00:02,500\nHello\n \t\n\n\n7\n00:00:03,000 --> 00:00:04,000\nWorld\nagain"
        #expect(try Self.converted(messy) == Self.twoCuesVTT)
        // Cue numbers not numeric, no blank line before the next cue.
        let unnumbered = "one\n00:00:01,000 --> 00:00:02,500\nHello\n2\n00:00:03,000 --> 00:00:04,000\nWorld\nagain\n"
        #expect(try Self.converted(unnumbered) == Self.twoCuesVTT)
        let noBlank = "00:00:01,000 --> 00:00:02,500\nHello\n00:00:03,000 --> 00:00:04,000\nWorld\nagain\n"
        #expect(try Self.converted(noBlank) == Self.twoCuesVTT)
    }

    @Test func timingVariants() throws {
        let srt = """
            1
            0:00:01.5 --> 0:00:02.25 X1:100 X2:600 Y1:20 Y2:50
            dots, one-digit hours, short fractions, a position hint
            2
            01:02,000-->01:03,000
            no hours, no spaces
            3
            100:00:00,000 --> 100:00:01,000
            three-digit hours
            4
              00:00:05,000   -->   00:00:06,123456
            spaces, a long fraction
            """
        let expected = """
            WEBVTT

            00:00:01.500 --> 00:00:02.250
            dots, one-digit hours, short fractions, a position hint

            00:00:05.000 --> 00:00:06.123
            spaces, a long fraction

            00:01:02.000 --> 00:01:03.000
            no hours, no spaces

            100:00:00.000 --> 100:00:01.000
            three-digit hours


            """
        #expect(try Self.converted(srt) == expected)
    }

    @Test func tagsAndEscapes() throws {
        let srt = """
            1
            00:00:01,000 --> 00:00:02,000
            {\\an8}<B>Bold</B> <i class="x">it</i> <u>under</u>
            <font color="#ff0000">red</font> & <FONT face=x>Tom &amp; Jerry</FONT>
            1 < 2 > 0, I <3 you, a -> b, c --> d, &#233; &eacute; &#xE9; & ;
            {not an override} <s>struck</s> <br/>{\\i1}x{\\i0}
            """
        let expected = """
            WEBVTT

            00:00:01.000 --> 00:00:02.000
            <b>Bold</b> <i>it</i> <u>under</u>
            red &amp; Tom &amp; Jerry
            1 &lt; 2 &gt; 0, I &lt;3 you, a -&gt; b, c --&gt; d, &#233; &amp;eacute; &#xE9; &amp; ;
            {not an override} struck x


            """
        #expect(try Self.converted(srt) == expected)
    }

    @Test func lineWithArrowInTextStaysText() throws {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\n-->\nA --> B\n00:00 --> soon\n"
        #expect(
            try Self.converted(srt)
                == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n--&gt;\nA --&gt; B\n00:00 --&gt; soon\n\n")
    }

    @Test func overlappingCuesKeptAndSortedStably() throws {
        let srt = """
            1
            00:00:05,000 --> 00:00:08,000
            late
            2
            00:00:01,000 --> 00:00:06,000
            early, overlapping
            3
            00:00:05,000 --> 00:00:07,000
            late too, after "late"
            """
        let expected = """
            WEBVTT

            00:00:01.000 --> 00:00:06.000
            early, overlapping

            00:00:05.000 --> 00:00:08.000
            late

            00:00:05.000 --> 00:00:07.000
            late too, after "late"


            """
        #expect(try Self.converted(srt) == expected)
    }

    @Test func cuesEndingAtOrBeforeTheirStartOrEmptyAreDropped() throws {
        let srt = """
            1
            00:00:02,000 --> 00:00:01,000
            backwards
            2
            00:00:03,000 --> 00:00:03,000
            zero length
            3
            00:00:04,000 --> 00:00:05,000
            <font color=red></font> {\\an8}

            4
            00:00:06,000 --> 00:00:07,000
            kept
            """
        #expect(try Self.converted(srt) == "WEBVTT\n\n00:00:06.000 --> 00:00:07.000\nkept\n\n")
    }

    @Test func latin1AndWindows1252() throws {
        let latin1: [UInt8] =
            Self.bytes("1\n00:00:01,000 --> 00:00:02,000\nCaf") + [0xE9] + Self.bytes(" ") + [0x93]
            + Self.bytes("ok") + [0x94, 0x20, 0x80, 0x0A]
        let vtt = String(decoding: try WebVTT.fromSubRip(latin1), as: UTF8.self)
        #expect(vtt == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nCafé “ok” €\n\n")
        // UTF-8 but for a stray Latin-1 byte: UTF-8, the stray byte U+FFFD.
        let mostlyUTF8 = Self.bytes("1\n00:00:01,000 --> 00:00:02,000\nCafé, crème, ") + [0xE9, 0x0A]
        #expect(
            String(decoding: try WebVTT.fromSubRip(mostlyUTF8), as: UTF8.self)
                == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nCafé, crème, \u{FFFD}\n\n")
    }

    @Test func utf16WithAndWithoutByteOrderMark() throws {
        let text = "1\r\n00:00:01,000 --> 00:00:02,000\r\nSigur Rós — 東京 🎵\r\n"
        let expected = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nSigur Rós — 東京 🎵\n\n"
        let units = Array(text.utf16)
        let little = units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let big = units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        for input in [[0xFF, 0xFE] + little, [0xFE, 0xFF] + big, little, big] {
            #expect(String(decoding: try WebVTT.convert(input), as: UTF8.self) == expected)
        }
        // An odd last byte is dropped.
        #expect(String(decoding: try WebVTT.convert([0xFF, 0xFE] + little + [0x41]), as: UTF8.self) == expected)
    }

    @Test func webVTTPassesThrough() throws {
        let vtt = Self.bytes(
            "WEBVTT - a title\n\nNOTE kept as is\n\n00:01.000 --> 00:02.000 line:0\n<c.yellow>Hi</c>\n")
        #expect(try WebVTT.convert(vtt) == vtt)
        #expect(try WebVTT.convert([0xEF, 0xBB, 0xBF] + vtt) == vtt)
        #expect(try WebVTT.convert(Self.bytes("WEBVTT")) == Self.bytes("WEBVTT"))
        let units = Array("WEBVTT\n\n00:01.000 --> 00:02.000\nÀ bientôt\n".utf16)
        let utf16: [UInt8] = [0xFF, 0xFE] + units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(try WebVTT.convert(utf16) == Self.bytes("WEBVTT\n\n00:01.000 --> 00:02.000\nÀ bientôt\n"))
        // Not the header: read as SubRip.
        #expect(throws: WebVTT.ConversionError.noCues) { try WebVTT.convert(Self.bytes("WEBVTTX\n")) }
        #expect(try WebVTT.convert(Self.bytes(Self.twoCues)) == Self.bytes(Self.twoCuesVTT))
    }

    @Test func emptyAndGarbageHaveNoCues() {
        var random = SeededRandom(seed: 42)
        let inputs: [[UInt8]] = [
            [], Self.bytes("\n\n \r\n"), [0xEF, 0xBB, 0xBF], [0xFF, 0xFE], Self.bytes("1\n2\n3\n"),
            Self.bytes("00:00:01,000 --> \nnothing"), Self.bytes("00:00:01,000 -> 00:00:02,000\nhalf an arrow"),
            Self.bytes("-00:00:01,000 --> 00:00:02,000\nnegative"), Self.bytes("00:61:00,000 --> 00:62:00,000\nx"),
            (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) },
        ]
        for input in inputs {
            #expect(throws: WebVTT.ConversionError.noCues, "\(input.prefix(16))") { try WebVTT.convert(input) }
        }
    }

    @Test func boundedInput() throws {
        let large = [UInt8](repeating: 0x61, count: WebVTT.maximumInputBytes + 1)
        let tooLarge = WebVTT.ConversionError.tooLarge(bytes: large.count, limit: WebVTT.maximumInputBytes)
        #expect(throws: tooLarge) { try WebVTT.convert(large) }
        #expect(throws: tooLarge) { try WebVTT.fromSubRip(large) }
        // A file of the largest size is read (here: one line, no cues).
        #expect(throws: WebVTT.ConversionError.noCues) { try WebVTT.convert(Array(large.dropFirst())) }
        // The count of cues, with a small limit (the real one's files take long in a debug build).
        let cue = Self.bytes("00:00:01,000 --> 00:00:02,000\nx\n\n")
        let four = Array([[UInt8]](repeating: cue, count: 4).joined())
        #expect(throws: WebVTT.ConversionError.tooManyCues(limit: 3)) {
            try WebVTT.fromSubRip(text: four, maximumCues: 3)
        }
        let three = try WebVTT.fromSubRip(text: Array(four.dropLast(cue.count)), maximumCues: 3)
        #expect(three.count == 8 + 3 * Self.bytes("00:00:01.000 --> 00:00:02.000\nx\n\n").count)
        #expect(WebVTT.maximumCues == 100_000)
    }

    /// Random bytes, and a real file mutated: every input converts or throws, and what converts
    /// is WebVTT a parser takes (the header, then cues of a timing line and non-blank text).
    @Test func fuzzedInputNeverCrashes() {
        var random = SeededRandom(seed: 0x5EED_5AB5)
        let seeds: [[UInt8]] = [
            Self.bytes(Self.twoCues), Self.bytes("WEBVTT\n\n00:01.000 --> 00:02.000\nx\n"),
            Self.bytes("1\r\n00:00:01,000 --> 00:00:02,000 X1:1\r\n<i>{\\an8}a & b</i>\r\n\r\n"),
        ]
        let alphabet = Self.bytes("0123456789:,.-> \n\r<>/&;{}\\biufont") + [0x00, 0xE9, 0xC3, 0xFF, 0xFE]
        for iteration in 0..<4000 {
            var input: [UInt8]
            if iteration % 4 == 0 {
                input = (0..<Int(random.next() % 512)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                input = seeds[Int(random.next() % UInt64(seeds.count))]
                for _ in 0..<(1 + Int(random.next() % 8)) {
                    let position = Int(random.next() % UInt64(input.count + 1))
                    let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    switch random.next() % 3 {
                    case 0: input.insert(byte, at: position)
                    case 1: if position < input.count { input[position] = byte }
                    default: if position < input.count { input.remove(at: position) }
                    }
                }
            }
            guard let output = try? WebVTT.convert(input) else { continue }
            #expect(output.starts(with: Self.bytes("WEBVTT")))
            guard !WebVTT.hasHeader(SubtitleText.utf8(input).bytes) else { continue }
            let text = String(decoding: output, as: UTF8.self)
            #expect(text.hasPrefix("WEBVTT\n\n") && text.hasSuffix("\n\n"))
            for block in String(text.dropFirst(8).dropLast(2)).components("\n\n") {
                let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.count >= 2 && lines[0].contains(" --> "), "\(input)")
                #expect(lines.dropFirst().allSatisfy { !$0.isEmpty && !$0.contains("-->") }, "\(input)")
            }
        }
    }
}

/// A deterministic generator for the fuzz tests (SplitMix64).
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }

    fileprivate func components(_ separator: String) -> [Substring] {
        split(separator: separator, omittingEmptySubsequences: false)
    }
}
