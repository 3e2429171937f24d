// swift-tools-version: 6.1
import PackageDescription

// Targets layer from the wire upward; dependencies point one way (see README "Layout").
// Clients (CastClient, castc) never import device-side targets.
let package = Package(
    name: "castd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "castd", targets: ["castd"]),
        .executable(name: "castc", targets: ["castc"]),
        .executable(name: "cast-emulator", targets: ["cast-emulator"]),
        .executable(name: "castd-bench", targets: ["castd-bench"]),
        .executable(name: "cast-mpris", targets: ["cast-mpris"]),
        .library(name: "CastClient", targets: ["CastClient", "CastArtwork"]),
        .library(name: "CastEmulator", targets: ["CastEmulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // Without the default BinaryDelimitedStreams trait, which nothing here uses: it imports
        // all of Foundation into every program that uses SwiftProtobuf (castc is quicker to
        // start with FoundationEssentials alone; see "castc start-up" in BENCHMARKS.md).
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0", traits: ["FieldMaskUtilities"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // MARK: wire
        .target(
            name: "LengthPrefixFraming",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        // A pthread-backed lock that ThreadSanitizer understands (Sources/CastdSupport/Locked.swift).
        .target(name: "CastdSupport", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .target(
            name: "CastProtocol",
            dependencies: [
                "LengthPrefixFraming",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["Generated/README.md"]
        ),
        .target(
            name: "CastdAPI",
            dependencies: [
                "LengthPrefixFraming",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // MARK: system libraries (headers in /usr/include; linked by their module maps. No pkgConfig:
        // avahi-client.pc adds -D_REENTRANT, which SwiftPM warns about and drops anyway.)
        .systemLibrary(name: "CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CSystemd", providers: [.apt(["libsystemd-dev"])]),

        // MARK: device side
        .target(
            name: "CastSenderLink",
            dependencies: [
                "CastdSupport",
                "CastProtocol",
                "LengthPrefixFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CastDiscovery",
            dependencies: [
                "CastdSupport",
                "CAvahi",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CastDevices",
            dependencies: [
                "CastdSupport",
                "CastdAPI",
                "CastSenderLink",
                "CastDiscovery",
                "CastProtocol",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: daemon
        .target(
            name: "CastdLogging",
            dependencies: [
                "CastdSupport",
                "CastdAPI",
                "CSystemd",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CastdServer",
            dependencies: [
                "CastdSupport",
                "CastdAPI",
                "CastdLogging",
                "LengthPrefixFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .target(
            name: "CastdHandlers",
            dependencies: [
                "CastdSupport",
                "CastdAPI",
                "CastdServer",
                "CastDevices",
                "CastdLogging",
                "CastdMediaServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .target(
            name: "CastdDaemon",
            dependencies: [
                "CastdServer",
                "CastdHandlers",
                "CastdMediaServer",
                "CastDevices",
                "CastSenderLink",
                "CastDiscovery",
                "CastdAPI",
                "CastdLogging",
                "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "castd",
            dependencies: [
                "CastdDaemon",
                "CastdServer",
                "CastdLogging",
                "CastdAPI",
                "CSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib",
                        "-Xlinker", "-lCoreFoundation", "-Xlinker", "-l_FoundationICU",
                        "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims",
                        "-Xlinker", "-lswiftSynchronization",
                    ],
                    .when(platforms: [.linux], configuration: .release))
            ]
        ),

        // MARK: media: serves a user's local files to Cast devices over HTTP (a module of its own,
        // wired into castd separately; see Sources/CastdMediaServer/MediaServer.swift)
        // What a file holds (ffprobe) and what a device plays: whether castd serves a file as it
        // is, remuxed or converted (issue 38).
        .target(
            name: "CastdConversion",
            dependencies: [
                "CastdSupport",
                "CastProtocol",
            ]
        ),
        .target(
            name: "CastdMediaServer",
            dependencies: [
                "CastdSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: clients
        .target(
            name: "CastClient",
            dependencies: [
                "CastdSupport",
                "CastdAPI",
                "LengthPrefixFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        // The client's artwork: the Cast SDK's image picker and an image cache, fetched over
        // SwiftNIO (no AsyncHTTPClient, no Foundation: castc links it and starts quickly).
        .target(
            name: "CastArtwork",
            dependencies: [
                "CastdSupport",
                "CastdAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Only what this target imports is visible: no Foundation API through a dependency's import.
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        ),
        .executableTarget(
            name: "castc",
            dependencies: [
                "CastdSupport",
                "CastClient",
                "CastArtwork",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            // castc lives for one command: link the Swift runtime and FoundationEssentials into
            // it, so that it starts without loading and relocating twenty shared libraries (see
            // "castc start-up" in BENCHMARKS.md). Debug builds, which the tests use, stay dynamic.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib",
                        // The libraries the Foundation modules name only when their users are
                        // compiled for static linking (`--static-swift-stdlib` recompiles every
                        // dependency for that): FoundationEssentials needs the last two, and
                        // Foundation, should castc import it again, the first two as well.
                        // Both use the standard library's Mutex (Synchronization), which castc's
                        // own code no longer names (CastdSupport), so it is named here.
                        "-Xlinker", "-lCoreFoundation", "-Xlinker", "-l_FoundationICU",
                        "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims",
                        "-Xlinker", "-lswiftSynchronization",
                    ],
                    .when(platforms: [.linux], configuration: .release))
            ]
        ),

        // MARK: the desktop's media controls: MPRIS2 players on the session bus, a client of castd
        .target(
            name: "CastMPRIS",
            dependencies: [
                "CastdSupport",
                "CastdAPI",
                "CastClient",
                "CastArtwork",
                "CSystemd",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "cast-mpris",
            dependencies: [
                "CastdSupport",
                "CastArtwork",
                "CastMPRIS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: emulated device
        .target(
            name: "CastEmulator",
            dependencies: [
                "CastdSupport",
                "CastProtocol",
                "CastdConversion",
                "LengthPrefixFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "cast-emulator",
            dependencies: [
                "CastdSupport",
                "CastEmulator",
                "CastdConversion",
                "CastDiscovery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: benchmarks (make bench; see BENCHMARKS.md) and the soak (make soak; SOAK.md). It
        // hosts emulated devices and drives castd, castc and the Python peers as processes.
        .executableTarget(
            name: "castd-bench",
            dependencies: [
                "CastdSupport",
                "CastDiscovery",
                "CastClient",
                "CastArtwork",
                "CastMPRIS",
                "CastEmulator",
                "CastProtocol",
                "LengthPrefixFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The README's Swift example, as a reader would build it (ReadmeExampleTests runs it and
        // checks that the README's copy is this file).
        .executableTarget(name: "castd-readme-example", dependencies: ["CastClient"], path: "Examples/ReadmeExample"),

        // MARK: fuzz targets (`make fuzz`, scripts/fuzz.sh; a normal build replays Fuzz/Corpus)
        .target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"], path: "Fuzz/FuzzSupport"),
        .executableTarget(
            name: "CastFrameFuzzer",
            dependencies: [
                "FuzzSupport", "CastProtocol", "LengthPrefixFraming", .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Fuzz/CastFrameFuzzer"
        ),
        .executableTarget(
            name: "CastPayloadFuzzer",
            dependencies: [
                "FuzzSupport", "CastProtocol", "CastDevices", "CastdAPI",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            path: "Fuzz/CastPayloadFuzzer"
        ),
        .executableTarget(
            name: "DeviceAuthFuzzer",
            dependencies: [
                "FuzzSupport", "CastSenderLink", "CastProtocol", .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            path: "Fuzz/DeviceAuthFuzzer",
            exclude: ["make-fixture.py"]
        ),
        .executableTarget(
            name: "CastdRequestFuzzer",
            dependencies: [
                "FuzzSupport", "CastDevices", "CastdServer", "CastdAPI", "CastProtocol", "LengthPrefixFraming",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            path: "Fuzz/CastdRequestFuzzer"
        ),
        .executableTarget(
            name: "CastTXTFuzzer",
            dependencies: ["FuzzSupport", "CastDiscovery"],
            path: "Fuzz/CastTXTFuzzer"
        ),
        .executableTarget(
            name: "CastdConfigFuzzer",
            dependencies: ["FuzzSupport", "CastdDaemon"],
            path: "Fuzz/CastdConfigFuzzer"
        ),
        .executableTarget(
            name: "CastdStateFuzzer",
            dependencies: ["FuzzSupport", "CastDevices"],
            path: "Fuzz/CastdStateFuzzer"
        ),

        // MARK: tests
        .target(
            name: "CastTestSupport",
            dependencies: [
                "CastdSupport",
                "CastEmulator",
                "CastClient",
                "CastDevices",
                "CastdServer",
                "CastdHandlers",
                "CastdDaemon",
                "CastdLogging",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CastTestSupport"
        ),
        .testTarget(
            name: "CastProtocolTests",
            dependencies: [
                "CastProtocol", "LengthPrefixFraming", "CastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "CastDiscoveryTests", dependencies: ["CastdSupport", "CastDiscovery", "CastTestSupport"]),
        .testTarget(
            name: "CastEmulatorTests",
            dependencies: [
                "CastdSupport",
                "CastEmulator", "CastProtocol", "CastDiscovery", "LengthPrefixFraming", "CastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "CastSenderLinkTests",
            dependencies: [
                "CastdSupport",
                "CastSenderLink", "CastTestSupport", "CastEmulator", "CastProtocol",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "CastDevicesTests",
            dependencies: [
                "CastDevices", "CastSenderLink", "CastDiscovery", "CastProtocol", "CastdAPI", "CastTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .testTarget(
            name: "CastClientTests",
            dependencies: [
                "CastClient", "CastdAPI", "CastdSupport", "LengthPrefixFraming", "CastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .testTarget(
            name: "CastdServerTests",
            dependencies: [
                "CastdSupport", "CastdServer", "CastdHandlers", "CastClient", "CastTestSupport",
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        .testTarget(
            name: "CastdDaemonTests", dependencies: ["CastdDaemon", "CastdServer", "CastDevices", "CastTestSupport"]),
        .testTarget(
            name: "CastMPRISTests",
            dependencies: [
                "CastMPRIS", "CastArtwork", "CastClient", "CastdAPI", "CastdSupport", "CastTestSupport", "CastDevices",
                "CastEmulator", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "CastdSupport",
                "CastTestSupport", "CastdAPI", "CastClient",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ]
        ),
        .testTarget(
            name: "CastdLoggingTests",
            dependencies: [
                "CastdLogging", "CastdServer", "CastClient", "CastTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CastArtworkTests",
            dependencies: [
                "CastArtwork", "CastdAPI", "CastTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CastcTests",
            dependencies: [
                "CastdSupport", "castc", "CastClient", "CastArtwork", "CastdAPI", "CastTestSupport", "CastDevices",
                "CastEmulator", "CastProtocol",
            ]),
        .testTarget(
            name: "CastdBenchTests",
            dependencies: [
                "castd-bench", "CastClient", "CastdAPI", "CastEmulator", "CastTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "CastdMediaServerTests",
            dependencies: [
                "CastdMediaServer", "CastTestSupport", "CastdSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CastdConversionTests",
            dependencies: ["CastdConversion", "CastTestSupport", "CastdSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
