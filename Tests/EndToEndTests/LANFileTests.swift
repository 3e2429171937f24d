import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// A local file on the home LAN: castd, in the desktop, serves it at the address its link to
/// the TV uses (the desktop's address on the LAN, not loopback), and the TV, another host,
/// fetches it from there. Offered an address the TV cannot reach, the load fails, and castc says
/// where castd offered the file.
extension LANTests {
    @Test func theTVFetchesALocalFileFromTheAddressCastdReachesItFrom() async throws {
        try await withHome { home in
            let movie = home.lan.directory + "/movie.mp4"
            try Data(repeating: 9, count: 200_000).write(to: URL(fileURLWithPath: movie))
            expectSuccess(try await home.castc(["connect", "LAN TV"]))
            // The TV answers the load only once it has fetched the file's start (--fetch-media,
            // on for a published device): a load that succeeds is a fetch that did.
            expectSuccess(try await home.castc(["load", movie]))
            let url = try #require(try await home.status().media.first?.media.contentID)
            let desktop = try home.lan.address(of: "desktop")
            #expect(url.hasPrefix("http://\(desktop):"), "castd offered \(url); the desktop is \(desktop)")
            #expect(try await home.status().media.first?.playerState != .idle)
        }
    }

    @Test func anAddressTheTVCannotReachFailsTheLoadAndCastcSaysWhere() async throws {
        // The desktop's loopback: on the TV, 127.0.0.1 is the TV itself, where nothing serves.
        try await withHome(castdArguments: { _ in ["--http-address", "127.0.0.1", "--http-port", "8095"] }) { home in
            let movie = home.lan.directory + "/movie.mp4"
            try Data(repeating: 9, count: 1000).write(to: URL(fileURLWithPath: movie))
            expectSuccess(try await home.castc(["connect", "LAN TV"]))
            let failed = try await home.castc(["load", movie])
            #expect(failed.status == 9, "\(failed)")
            #expect(failed.stderr.contains("refused the load"), "\(failed)")
            #expect(failed.stderr.contains("castd offered the file at http://127.0.0.1:8095"), "\(failed)")
            #expect(failed.stderr.contains("firewall"), "\(failed)")
        }
    }
}
