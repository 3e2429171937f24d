/// Content types of the media a Cast device plays, from a file's first bytes or its name.
public enum MediaContentType {
    /// How many of a file's first bytes ``sniff(head:name:)`` looks at (an EBML header's DocType,
    /// an Ogg page's first packet): what the server reads from a file as it is published.
    public static let headLength = 64

    /// The Content-Type from the first bytes (magic), else from the name's extension, else nil.
    /// Where the bytes name a container that holds audio or video alike (MP4 under a generic
    /// brand, Matroska), the extension says which (`song.m4a` with brand `isom` is audio).
    public static func sniff(head: [UInt8], name: String) -> String? {
        guard let magic = fromMagic(head) else { return fromExtension(of: name) }
        if let named = fromExtension(of: name), named.hasPrefix("audio/"),
            let container = containers[magic], container == containers[named]
        {
            return named
        }
        return magic
    }

    /// Content types whose container is the same for audio and video, by container.
    static let containers = [
        "video/mp4": "mp4", "audio/mp4": "mp4", "video/x-matroska": "matroska", "audio/x-matroska": "matroska",
    ]

    /// The Content-Type that `head`, a file's first bytes, announces; nil for none known.
    static func fromMagic(_ head: [UInt8]) -> String? {
        func starts(_ prefix: String, at offset: Int = 0) -> Bool {
            let bytes = Array(prefix.utf8)
            return head.count >= offset + bytes.count && head[offset..<offset + bytes.count].elementsEqual(bytes)
        }
        if head.count >= 12, starts("ftyp", at: 4) {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            return brand == "M4A " || brand == "M4B " ? "audio/mp4" : "video/mp4"
        }
        if starts("\u{1A}\u{45}") && head.count >= 4 && head[2] == 0xDF && head[3] == 0xA3 {
            return ebmlDocType(head) == "webm" ? "video/webm" : "video/x-matroska"
        }
        if starts("fLaC") { return "audio/flac" }
        if starts("OggS") { return contains(head, [0x80] + Array("theora".utf8)) ? "video/ogg" : "audio/ogg" }
        if starts("RIFF") && starts("WAVE", at: 8) { return "audio/wav" }
        if starts("ID3") { return "audio/mpeg" }
        if head.count >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF { return "image/jpeg" }
        if head.count >= 8 && head[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return "image/png"
        }
        if isWebVTT(head) { return "text/vtt" }
        if head.count >= 2 && head[0] == 0xFF {
            // ADTS: 12 sync bits, then the layer (always 00), which MPEG audio never has.
            if head[1] & 0xF6 == 0xF0 { return "audio/aac" }
            // An MPEG audio frame: 11 sync bits, a version other than the reserved 01, a layer.
            if head[1] & 0xE0 == 0xE0 && head[1] & 0x18 != 0x08 && head[1] & 0x06 != 0 { return "audio/mpeg" }
        }
        return nil
    }

    /// The Content-Type for the extension of `name` (the part after its last dot), nil for none known.
    static func fromExtension(of name: String) -> String? {
        guard let ext = fileExtension(of: name) else { return nil }
        return byExtension[ext]
    }

    /// The extension of `name`, lowercased: 1 to 8 ASCII letters and digits after the last dot
    /// of its last path component ("movie.MP4" → "mp4"); nil for none (".bashrc", "a.b c").
    /// The only part of a file's name that its URL shows.
    static func fileExtension(of name: String) -> String? {
        let last = name.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return nil }
        let ext = last[last.index(after: dot)...]
        guard (1...8).contains(ext.utf8.count),
            ext.utf8.allSatisfy({
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            })
        else { return nil }
        return ext.lowercased()
    }

    static let byExtension: [String: String] = [
        "mp4": "video/mp4", "m4v": "video/mp4", "m4a": "audio/mp4", "m4b": "audio/mp4",
        "webm": "video/webm", "mkv": "video/x-matroska", "mka": "audio/x-matroska",
        "mp3": "audio/mpeg", "flac": "audio/flac", "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg",
        "ogv": "video/ogg", "wav": "audio/wav", "aac": "audio/aac",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "vtt": "text/vtt",
    ]

    /// The DocType of an EBML header ("webm", "matroska"): the string after the DocType element's
    /// ID (0x4282) and its one-byte size; nil if `head` has none.
    private static func ebmlDocType(_ head: [UInt8]) -> String? {
        var index = 4
        while index + 2 < head.count {
            if head[index] == 0x42 && head[index + 1] == 0x82 {
                let sizeByte = head[index + 2]
                guard sizeByte & 0x80 != 0 else { return nil }  // a longer size: not a DocType seen here
                let size = Int(sizeByte & 0x7F)
                let start = index + 3
                guard start + size <= head.count else { return nil }
                return String(decoding: head[start..<start + size], as: UTF8.self)
            }
            index += 1
        }
        return nil
    }

    /// "WEBVTT" (after an optional UTF-8 byte order mark), then the end, a space, a tab or a line break.
    private static func isWebVTT(_ head: [UInt8]) -> Bool {
        let body = head.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(head.dropFirst(3)) : head
        guard body.starts(with: Array("WEBVTT".utf8)) else { return false }
        guard body.count > 6 else { return true }
        return [0x20, 0x09, 0x0A, 0x0D].contains(body[6])
    }

    private static func contains(_ head: [UInt8], _ bytes: [UInt8]) -> Bool {
        guard head.count >= bytes.count else { return false }
        return (0...head.count - bytes.count).contains { head[$0..<$0 + bytes.count].elementsEqual(bytes) }
    }
}
