import CastArtwork
import CastdAPI
import Testing

/// The Cast SDK's default choice: the smallest image at least as large as the hint, else the
/// largest; images without a size after those with one; the first when none has a size.
@Suite struct ArtworkPickerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var images: [(String, UInt32, UInt32)]
        var hint: (Int, Int)
        var expected: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "no images", images: [], hint: (512, 512), expected: nil),
        Case(name: "one image without a size", images: [("a", 0, 0)], hint: (512, 512), expected: "a"),
        Case(
            name: "the smallest that is large enough",
            images: [("small", 100, 100), ("large", 1000, 1000), ("fits", 600, 600)], hint: (512, 512),
            expected: "fits"),
        Case(
            name: "exactly the hint's size fits", images: [("big", 1024, 1024), ("exact", 512, 512)],
            hint: (512, 512), expected: "exact"),
        Case(
            name: "none large enough: the largest", images: [("a", 100, 100), ("b", 300, 200), ("c", 200, 200)],
            hint: (512, 512), expected: "b"),
        Case(
            name: "both dimensions must be large enough",
            images: [("wide", 1000, 300), ("square", 600, 600)], hint: (512, 512), expected: "square"),
        Case(
            name: "one dimension large enough is not enough; then the largest area",
            images: [("wide", 1000, 300), ("square", 400, 400)], hint: (512, 512), expected: "wide"),
        Case(
            name: "equal areas that fit keep the earlier", images: [("tall", 600, 800), ("wide", 800, 600)],
            hint: (512, 512), expected: "tall"),
        Case(
            name: "equal largest areas keep the earlier", images: [("tall", 200, 300), ("wide", 300, 200)],
            hint: (512, 512), expected: "tall"),
        Case(
            name: "an image without a size ranks after one too small", images: [("unsized", 0, 0), ("tiny", 10, 10)],
            hint: (512, 512), expected: "tiny"),
        Case(
            name: "a width without a height is no size", images: [("half", 2000, 0), ("sized", 100, 100)],
            hint: (512, 512), expected: "sized"),
        Case(
            name: "no sizes at all: the first", images: [("first", 0, 0), ("second", 0, 0), ("third", 5, 0)],
            hint: (512, 512), expected: "first"),
        Case(
            name: "empty URLs are skipped", images: [("", 600, 600), ("small", 100, 100)], hint: (512, 512),
            expected: "small"),
        Case(name: "only empty URLs", images: [("", 600, 600), ("", 0, 0)], hint: (512, 512), expected: nil),
        Case(
            name: "a 0x0 hint: the smallest", images: [("b", 300, 300), ("a", 100, 100)], hint: (0, 0),
            expected: "a"),
        Case(
            name: "a background",
            images: [("hd", 1280, 720), ("uhd", 3840, 2160), ("fhd", 1920, 1080)], hint: (1920, 1080),
            expected: "fhd"),
        Case(
            name: "sizes too large for 32-bit areas",
            images: [("huge", 4_000_000_000, 4_000_000_000), ("big", 70000, 70000)], hint: (100_000, 100_000),
            expected: "huge"),
    ]

    @Test(arguments: cases)
    func picks(_ example: Case) {
        let images = example.images.map { url, width, height in
            var image = CastdImage()
            image.url = url
            image.width = width
            image.height = height
            return image
        }
        let hint = ArtworkHint(width: example.hint.0, height: example.hint.1)
        #expect(ArtworkPicker.pick(images, hint: hint)?.url == example.expected)
    }

    @Test func theKindDoesNotChangeTheChoice() {
        var image = CastdImage()
        image.url = "a"
        image.width = 10
        image.height = 10
        #expect(ArtworkPicker.pick([image], hint: .background)?.url == "a")
        #expect(ArtworkHint.thumbnail == ArtworkHint(kind: .thumbnail, width: 512, height: 512))
        #expect(ArtworkHint.background == ArtworkHint(kind: .background, width: 1920, height: 1080))
    }
}
