import CastTestSupport
import CastdAPI
import Foundation
import SwiftProtobuf
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `castc load ./file` end to end: castc opens the file and hands castd the descriptor, castd
/// serves it on its media server at the address it reaches the device from, the device is given
/// that URL; an independent HTTP client (curl) fetches what the device would. The file stops
/// being served once other media replaces it, or the session ends.
extension SystemServiceTests {
    /// The start of an MP4 file (an `ftyp` box), then `count` bytes that vary.
    static func mp4Bytes(count: Int) -> Data {
        var bytes: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        var state: UInt32 = 12345
        for _ in 0..<count {
            state = state &* 1_103_515_245 &+ 12345
            bytes.append(UInt8(truncatingIfNeeded: state >> 16))
        }
        return Data(bytes)
    }

    /// The media status castd last had for the device, from `castc status --json`.
    static func loadedMedia(_ daemon: Daemon) async throws -> Castd_V1_MediaInformation? {
        try await daemon.status().media.first?.media
    }

    /// curl's status code and body for `url` (a Range header when given).
    static func fetch(_ url: String, range: String? = nil, to file: String) async throws -> Int {
        var arguments = ["-s", "-o", file, "-w", "%{http_code}", "--max-time", "20"]
        if let range { arguments += ["-H", "Range: bytes=\(range)"] }
        let result = try await run("/usr/bin/curl", arguments + [url])
        return Int(result.stdout) ?? -1
    }

    @Test func castcLoadsAFileCastdServes() async throws {
        try await withDaemon { daemon in
            let movie = daemon.directory + "/Holiday 2024.mp4"
            let bytes = Self.mp4Bytes(count: 300_000)
            try bytes.write(to: URL(fileURLWithPath: movie))

            let loaded = try await daemon.castc(["load", movie])
            #expect(loaded.status == 0, "\(loaded)")
            let media = try #require(try await Self.loadedMedia(daemon))
            // castd's URL: its media server on the address it reaches the device from
            // (loopback here), a token, the extension; never the path.
            #expect(media.contentID.hasPrefix("http://127.0.0.1:"), "\(media.contentID)")
            #expect(!media.contentID.contains("Holiday") && media.contentID.hasSuffix(".mp4"), "\(media.contentID)")
            #expect(media.contentType == "video/mp4")
            #expect(media.metadata.title == "Holiday 2024")

            let copy = daemon.directory + "/fetched"
            #expect(try await Self.fetch(media.contentID, to: copy) == 200)
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes)
            #expect(try await Self.fetch(media.contentID, range: "1000-1999", to: copy) == 206)
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes[1000..<2000])

            // Other media replaces it: the file's URL stops working.
            let other = try await daemon.castc(["load", "https://example.com/other.mp4"])
            #expect(other.status == 0, "\(other)")
            #expect(try await Self.fetch(media.contentID, to: copy) == 404)

            // Loaded again (a file:// URL this time), then the session ends: gone again.
            let again = try await daemon.castc(["load", "file://" + movie.replacingOccurrences(of: " ", with: "%20")])
            #expect(again.status == 0, "\(again)")
            let second = try #require(try await Self.loadedMedia(daemon))
            #expect(second.contentID != media.contentID)
            #expect(try await Self.fetch(second.contentID, to: copy) == 200)
            let ended = try await daemon.castc(["disconnect", "--stop-app"])
            #expect(ended.status == 0, "\(ended)")
            try await eventually("the file to stop being served once the session ended") {
                try await Self.fetch(second.contentID, to: copy) == 404
            }
        }
    }

    @Test func aFileCastcCannotOpenIsReportedBeforeCastdIsAsked() async throws {
        try await withDaemon { daemon in
            let missing = try await daemon.castc(["load", daemon.directory + "/nope.mp4"])
            #expect(missing.status == 66, "\(missing)")
            #expect(missing.stderr.contains("cannot open \(daemon.directory)/nope.mp4: No such file"), "\(missing)")

            let folder = try await daemon.castc(["load", daemon.directory])
            #expect(folder.status == 66 && folder.stderr.contains("is a folder"), "\(folder)")

            // A file only root may read, cast by a user who may control castd: castc opens it
            // with the user's permissions, and fails as the user would.
            let secret = daemon.directory + "/secret.mp4"
            try Self.mp4Bytes(count: 100).write(to: URL(fileURLWithPath: secret))
            chmod(secret, 0o600)
            let denied = try await daemon.castc(uid: Self.controller, groups: [], ["load", secret])
            #expect(denied.status == 66 && denied.stderr.contains("Permission denied"), "\(denied)")

            let noScheme = try await daemon.castc(["load", "example.com/movie.mp4"])
            #expect(noScheme.status == 66 && noScheme.stderr.contains("https://example.com/movie.mp4"), "\(noScheme)")
        }
    }

    @Test func aFolderIsQueuedInNaturalOrderAndFilesAreAdded() async throws {
        try await withDaemon { daemon in
            let album = daemon.directory + "/Album"
            try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
            // Not in the queue: a hidden file, a cover, a text file.
            for name in ["Track 10.mp4", "Track 2.mp4", "track 1.mp4", ".hidden.mp4", "cover.jpg", "notes.txt"] {
                try Self.mp4Bytes(count: 1000 + name.count).write(to: URL(fileURLWithPath: album + "/" + name))
            }
            let loaded = try await daemon.castc(["queue", "load", album])
            #expect(loaded.status == 0, "\(loaded)")
            let bonus = daemon.directory + "/bonus.mp4"
            try Self.mp4Bytes(count: 500).write(to: URL(fileURLWithPath: bonus))
            let added = try await daemon.castc(["queue", "add", bonus])
            #expect(added.status == 0, "\(added)")

            let listed = try await daemon.castc(["queue", "--json"])
            #expect(listed.status == 0, "\(listed)")
            var options = JSONDecodingOptions()
            options.ignoreUnknownFields = true
            let queue = try Castd_V1_Queue(jsonString: listed.stdout, options: options)
            #expect(queue.items.map(\.media.metadata.title) == ["track 1", "Track 2", "Track 10", "bonus"])
            let copy = daemon.directory + "/fetched"
            for (item, name) in zip(
                queue.items, ["Album/track 1.mp4", "Album/Track 2.mp4", "Album/Track 10.mp4", "bonus.mp4"])
            {
                #expect(item.media.contentID.hasPrefix("http://127.0.0.1:"), "\(item.media.contentID)")
                #expect(try await Self.fetch(item.media.contentID, to: copy) == 200)
                #expect(
                    try Data(contentsOf: URL(fileURLWithPath: copy))
                        == Data(contentsOf: URL(fileURLWithPath: daemon.directory + "/" + name)))
            }

            let empty = daemon.directory + "/Empty"
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
            let nothing = try await daemon.castc(["queue", "load", empty])
            #expect(nothing.status == 66 && nothing.stderr.contains("holds nothing castc can play"), "\(nothing)")
        }
    }

    /// The system castd runs as its own user, which cannot open a file that only the caller may
    /// read; it serves it all the same, from the descriptor the caller handed it.
    @Test func castdAsAnotherUserServesAFileOnlyTheCallerCanRead() async throws {
        try await withDaemon(castdArguments: ["--state-directory", ""], castdUser: Self.stranger) { daemon in
            let privateDirectory = daemon.directory + "/private"
            try FileManager.default.createDirectory(
                atPath: privateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let movie = privateDirectory + "/mine.mp4"
            let bytes = Self.mp4Bytes(count: 50_000)
            try bytes.write(to: URL(fileURLWithPath: movie))
            chmod(movie, 0o600)
            // castd's user cannot open it by its path.
            let byPath = try await run(
                "/usr/bin/setpriv",
                ["--reuid", "\(Self.stranger)", "--regid", "\(Self.stranger)", "--clear-groups", "/bin/cat", movie])
            #expect(byPath.status != 0 && byPath.stderr.contains("Permission denied"), "\(byPath)")

            let loaded = try await daemon.castc(["load", movie])
            #expect(loaded.status == 0, "\(loaded)")
            let media = try #require(try await Self.loadedMedia(daemon))
            let copy = daemon.directory + "/fetched"
            #expect(try await Self.fetch(media.contentID, to: copy) == 200)
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes)
        }
    }
}
