import CastArtwork
import CastTestSupport
import Foundation
import Testing

/// `castc artwork` as a user runs it: cast-emulator, castd and castc as processes (the emulator
/// given to castd by address, no mDNS), the media's images served by the test's HTTP server,
/// the cache in a directory of the test's own (XDG_CACHE_HOME).
@Suite(.timeLimit(.minutes(3))) struct ArtworkEndToEndTests {
    struct Setup {
        var directory: String
        var socket: String
        var server: ImageServer
        var environment: [String: String] { ["CASTD_SOCKET": socket, "XDG_CACHE_HOME": directory + "/cache"] }
        var cacheDirectory: String { directory + "/cache/castd/artwork" }

        func castc(_ arguments: [String]) async throws -> CommandResult {
            try await run("castc", arguments, environment: environment)
        }
    }

    func withSetup<T>(_ body: (Setup) async throws -> T) async throws -> T {
        try await ImageServer.with { server in
            try await withTemporaryDirectory { directory in
                try await withProcesses { launch in
                    let ready = directory + "/emulator.json"
                    let emulator = try launch(
                        "cast-emulator",
                        ["--name", "Art TV", "--port", "0", "--http-port", "0", "--ready-file", ready]
                            + ["--authority", directory + "/authority"],
                        [:])
                    try await eventually(timeout: processStartTimeout, "the emulator's ready file") {
                        guard emulator.isRunning else { throw CommandFailed(description: emulator.stderr) }
                        return FileManager.default.fileExists(atPath: ready)
                    }
                    let readyFile =
                        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ready)))
                        as? [String: Any]
                    let port = try #require(readyFile?["port"] as? Int)
                    let socket = directory + "/castd.sock"
                    _ = try launch(
                        "castd",
                        [
                            "--mode", "user", "--socket", socket, "--no-discovery", "--device",
                            "Art TV=127.0.0.1:\(port)",
                        ]
                            + ["--trust-root", directory + "/authority/root.pem"]
                            + ["--state-directory", directory + "/state"],
                        [:])
                    let setup = Setup(directory: directory, socket: socket, server: server)
                    try await eventually("castd to serve \(socket)") { try await setup.castc(["devices"]).status == 0 }
                    return try await body(setup)
                }
            }
        }
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var description: String
    }

    @Test func printsTheCachedFileOrWritesTheImage() async throws {
        try await withSetup { setup in
            let server = setup.server
            let cover = ImageServer.png(count: 40_000, seed: 7)
            let small = ImageServer.png(count: 900, seed: 3)
            server.answer("/cover.png", .body(cover))
            server.answer("/small.png", .body(small))
            server.answer("/page.png", .status(200))

            // Nothing plays yet.
            let nothing = try await setup.castc(["artwork"])
            #expect(nothing.status == 9, "\(nothing)")
            #expect(nothing.stderr.hasPrefix("castc: FAILED_PRECONDITION: nothing plays on Art TV"), "\(nothing)")

            let load = try await setup.castc([
                "load", server.url("/movie.mp4"), "--title", "Art", "--image", server.url("/small.png") + "@100x100",
                "--image", server.url("/cover.png") + "@600x600",
            ])
            expectSuccess(load)

            // The smallest image at least 512x512: the cover, fetched once, then from the cache.
            let printed = try await setup.castc(["artwork"])
            expectSuccess(printed)
            let path = printed.stdout.trimmingCharacters(in: .newlines)
            #expect(printed.stdout == path + "\n")
            #expect(path.hasPrefix(setup.cacheDirectory + "/") && path.hasSuffix(".png"), "\(path)")
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == cover)
            expectSuccess(try await setup.castc(["artwork"]))
            #expect(server.hits("/cover.png") == 1)

            // A 64x64 thumbnail: the small one fits.
            let thumbnail = try await setup.castc(["artwork", "--size", "64x64"])
            expectSuccess(thumbnail)
            let smallPath = thumbnail.stdout.trimmingCharacters(in: .newlines)
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: smallPath))) == small)

            // --output FILE: the same bytes, nothing printed.
            let output = setup.directory + "/out.png"
            let written = try await setup.castc(["artwork", "--output", output])
            expectSuccess(written)
            #expect(written.stdout.isEmpty)
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))) == cover)

            // A file that cannot be written: exit 73, and nothing left beside it.
            let unwritable = try await setup.castc(["artwork", "--output", setup.directory + "/missing/out.png"])
            #expect(unwritable.status == 73, "\(unwritable)")
            #expect(unwritable.stderr.hasPrefix("castc: artwork: cannot write \(setup.directory)/missing/out.png: "))

            // --output -: the bytes on stdout (read as bytes, not text).
            try await withProcesses { launch in
                let child = try launch("castc", ["artwork", "--output", "-"], setup.environment)
                #expect(try await child.waitForExit() == 0, "\(child.stderr)")
                #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: child.stdoutPath))) == cover)
            }

            // --json: the file, its format and size, the image's URL.
            let json = try await setup.castc(["artwork", "--json"])
            expectSuccess(json)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(object?["path"] as? String == path)
            #expect(object?["format"] as? String == "png")
            #expect(object?["bytes"] as? Int == cover.count)
            #expect(object?["url"] as? String == server.url("/cover.png"))
            #expect(server.hits("/cover.png") == 1)

            // An "image" that is a web page: a clear line, exit 69, nothing cached.
            expectSuccess(
                try await setup.castc(["load", server.url("/movie.mp4"), "--image", server.url("/page.png")]))
            let page = try await setup.castc(["artwork"])
            #expect(page.status == 69, "\(page)")
            #expect(
                page.stderr == "castc: artwork: \(server.url("/page.png")) is not an image (starts with `<!DO`)\n",
                "\(page)")
            #expect(
                !FileManager.default.fileExists(
                    atPath: setup.cacheDirectory + "/" + SHA256.hex(server.url("/page.png")) + ".png"))

            // Media without images.
            expectSuccess(try await setup.castc(["load", server.url("/movie.mp4"), "--title", "No art"]))
            let none = try await setup.castc(["artwork"])
            #expect(none.status == 9, "\(none)")
            #expect(none.stderr.contains("has no images"), "\(none)")
        }
    }
}
