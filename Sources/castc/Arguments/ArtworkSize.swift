import ArgumentParser

/// `castc artwork --size`: `512x512`, or `64` for 64x64.
struct ArtworkSize: Equatable {
    var width: Int
    var height: Int

    static func parse(_ text: String) throws -> ArtworkSize {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        let numbers = parts.map { part in part.allSatisfy(\.isASCIIDigit) ? Int(part) : nil }
        guard (1...2).contains(parts.count), let width = numbers[0], let height = numbers.last ?? nil,
            (1...16384).contains(width), (1...16384).contains(height)
        else {
            throw ValidationError(
                "'\(text)' is not a size: give WIDTHxHEIGHT in pixels, such as 512x512, or 64 for 64x64")
        }
        return ArtworkSize(width: width, height: height)
    }
}
