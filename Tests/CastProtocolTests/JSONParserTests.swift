import CastTestSupport
import CastProtocol
import Foundation
import Testing

/// `JSONValue.parse` reads JSON itself (JSONParser) rather than through Foundation's JSONDecoder
/// and `Decodable`, which made castd fall seconds behind a busy device (found by `make soak`:
/// with two devices answering ~2,000 requests/s, castd took 0.3 ms to read each MEDIA_STATUS,
/// its devices' messages piled up by the thousand, and a dropped link was noticed only 2-13 s
/// later, once the backlog had been read). It must read exactly what JSONDecoder read.
@Suite(.tags(.cpuBound)) struct JSONParserTests {
    /// The reading it replaces: JSONDecoder through `JSONValue: Decodable`.
    static func decoded(_ text: String) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    static func fixtureLines() throws -> [String] {
        var lines: [String] = []
        for name in [
            "receiver_status", "media_status", "errors", "app_availability", "connection", "other", "sender_requests",
        ] {
            let url = try #require(
                Bundle.module.url(forResource: "Fixtures/real-messages/\(name)", withExtension: "jsonl"))
            let text = try String(contentsOf: url, encoding: .utf8)
            lines += text.split(separator: "\n").map(String.init).filter {
                !$0.trimmingCharacters(in: .whitespaces).isEmpty
            }
        }
        return lines
    }

    @Test func readsEveryRealMessageAsJSONDecoderDid() throws {
        let lines = try Self.fixtureLines()
        #expect(lines.count >= 30)
        for line in lines {
            let expected = try #require(Self.decoded(line), "JSONDecoder reads \(line.prefix(80))")
            #expect(try JSONValue.parse(line) == expected, "\(line.prefix(120))")
            #expect(try JSONValue.parse(Data(line.utf8)) == expected)
        }
    }

    @Test(arguments: [
        #"null"#, #"true"#, #"false"#, #"0"#, #"-0"#, #"12"#, #"-12.5e3"#, #"1E+2"#, #"1e-07"#, #"0.000001"#,
        #"123456789012345678901234567890"#, #"5e-324"#, #"1.7976931348623157e308"#,
        #""""#, #""a\"b\\c\/d\b\f\n\r\t""#, #""\u00e9\u0041\u20AC""#, #""\ud83d\ude00 smile""#, #""héllo wörld ✓""#,
        #"[]"#, #"{}"#, #"[1,[2,[3,{}]]]"#, #"{"a":{"b":[true,null,"x"]},"c":-1}"#,
        " \n\t\r {\"k\" : [ 1 , 2 ] } \n", "\u{FEFF}{\"bom\":1}", "[1,]", "{\"a\":1,}", "[1 ,\n]",
    ])
    func readsValidJSONAsJSONDecoderDid(_ text: String) throws {
        let expected = try #require(Self.decoded(text), "JSONDecoder reads \(text)")
        #expect(try JSONValue.parse(text) == expected)
    }

    @Test(arguments: [
        "", " ", "nul", "tru", "True", "NaN", "Infinity", "-Infinity", "+1", "01", "-", "1.", ".5", "1e", "1e+",
        "0x10", "1e400", "-1e400", "\"abc", "\"a\u{01}b\"", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud83d\"",
        "\"\\ude00\"", "\"\\ud83d\\u0041\"", "[,]", "[,1]", "{,}", "[1,,]", "[1 2]", "{\"a\" 1}", "{a:1}", "{\"a\":}",
        "[", "{", "]", "1 2", "{} x", "// c\n1", "'a'",
    ])
    func refusesWhatJSONDecoderRefused(_ text: String) {
        #expect(Self.decoded(text) == nil, "JSONDecoder refuses \(text.debugDescription)")
        #expect(throws: CastProtocolError.self, "\(text.debugDescription)") { try JSONValue.parse(text) }
    }

    @Test func refusesInvalidUTF8() {
        var bytes = Array("\"ok".utf8)
        bytes += [0xC3, 0x28]  // a truncated two-byte sequence
        bytes += Array("\"".utf8)
        #expect(throws: CastProtocolError.self) { try JSONValue.parse(Data(bytes)) }
    }

    /// Arrays and objects `depth` deep, alternating, with a value in the middle.
    static func nested(_ depth: Int) -> String {
        (0..<depth).map { $0 % 2 == 0 ? "[" : "{\"k\":" }.joined() + "1"
            + (0..<depth).reversed().map { $0 % 2 == 0 ? "]" : "}" }.joined()
    }

    /// How deep `value` nests arrays and objects.
    static func depth(_ value: JSONValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(depth).max() ?? 0)
        case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
        default: 0
        }
    }

    @Test func nests64DeepAndNoDeeper() throws {
        let fine = Self.nested(64)
        #expect(try Self.depth(JSONValue.parse(fine)) == 64)
        #expect(try JSONValue.parse(fine) == Self.decoded(fine))
        for deep in [
            Self.nested(65), Self.nested(512),
            String(repeating: "{\"a\":", count: 10_000) + "1" + String(repeating: "}", count: 10_000),
            String(repeating: "[", count: 100_000),
        ] {
            #expect {
                try JSONValue.parse(deep)
            } throws: { error in
                "\(error)".contains("more than 64 arrays and objects nested")
            }
        }
    }

    /// The deepest value castd takes, read, printed, compared and freed on a thread with a
    /// small stack (512 KiB; glibc gives new threads 2 to 8 MiB): a hostile device's message
    /// cannot take a thread's stack, in any build. At the old limit, 512, this crashed: a
    /// sanitized build takes 2 to 4 KiB of stack a level.
    @Test func theDeepestValueFitsASmallStack() async throws {
        let text = Self.nested(JSONValue.maximumDepth)
        let same = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            let thread = Thread {
                let value = try? JSONValue.parse(text)
                let again = try? JSONValue.parse(value?.jsonString ?? "")
                done.resume(returning: value != nil && value == again)
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
        #expect(same)
    }

    /// The payload fuzzer's corpus (hostile numbers, nesting, strings): read alike, or refused
    /// by both, or nested deeper than castd takes (``nests64DeepAndNoDeeper()``) and refused.
    @Test func readsThePayloadFuzzCorpusAsJSONDecoderDid() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/Corpus/CastPayloadFuzzer").standardizedFileURL
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
        #expect(files.count >= 20)
        for file in files {
            let data = try Data(contentsOf: corpus.appendingPathComponent(file))
            let expected = try? JSONDecoder().decode(JSONValue.self, from: data)
            let parsed = try? JSONValue.parse(data)
            if let expected, Self.depth(expected) > JSONValue.maximumDepth {
                #expect(parsed == nil, "\(file)")
            } else {
                #expect(parsed == expected, "\(file)")
            }
        }
    }

    @Test func aKeyGivenTwiceKeepsItsFirstValue() throws {
        let text = #"{"a":1,"b":[true],"a":2}"#
        #expect(try JSONValue.parse(text) == ["a": 1, "b": [true]])
        #expect(try JSONValue.parse(text) == Self.decoded(text))
    }

    @Test func printedJSONReadsBack() throws {
        let value: JSONValue = [
            "small": 1e-7, "big": 1e300, "int": 42, "negative": -3.25, "text": "tab\tquote\"\u{1F600}\u{07}",
            "list": [nil, true, false, [:], []],
        ]
        #expect(try JSONValue.parse(value.jsonString) == value)
    }

    @Test func aMediaStatusReadsTheSame() throws {
        let lines = try Self.fixtureLines().filter { $0.contains("MEDIA_STATUS") }
        #expect(!lines.isEmpty)
        for line in lines {
            let parsed = try JSONValue.parse(line)
            let payload = try #require(parsed["payload"])
            #expect(
                CastMediaStatus.entries(in: payload)
                    == CastMediaStatus.entries(in: try #require(Self.decoded(line)?["payload"])))
        }
    }
}
