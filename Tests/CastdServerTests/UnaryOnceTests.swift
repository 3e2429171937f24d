import CastClient
import CastDevices
import CastEmulator
import CastTestSupport
import CastdAPI
import Foundation
import Testing

/// `CastdClient.unaryOnce`: one call on a blocking socket of its own (what castc's commands
/// use), against castd on a real socket: the same answers and the same errors as a call on a
/// `CastdClient` connection.
struct UnaryOnceTests {
    @Test func answersAndDeviceRequestsMatchAConnectedClient() async throws {
        try await withEmulator { emulator, endpoints in
            let tv = StaticDevice(name: "Once TV", endpoint: DeviceEndpoint(host: endpoints.host, port: endpoints.port))
            try await withDaemon(devices: [tv]) { socket, _ in
                let once = try await CastdClient.unaryOnce(
                    socketPath: socket, .listDevices, Castd_V1_ListDevicesRequest(),
                    as: Castd_V1_ListDevicesResponse.self)
                let connected = try await CastdClient.withConnection(socketPath: socket) { try await $0.listDevices() }
                #expect(once.devices.map(\.friendlyName) == ["Once TV"])
                #expect(once.devices.map(\.id) == connected.map(\.id))

                // A request that reaches the device, and its answer.
                try await CastdClient.withConnection(socketPath: socket) { client in
                    var media = CastdMediaInformation()
                    media.contentURL = "https://example.com/once.mp4"
                    media.contentType = "video/mp4"
                    _ = try await client.load(media)
                }
                var pause = Castd_V1_MediaRequest()
                pause.device = "Once TV"
                let paused = try await CastdClient.unaryOnce(
                    socketPath: socket, .pause, pause, as: CastdMediaStatus.self)
                #expect(paused.playerState == .paused)
                #expect(await emulator.state().mediaStatus?.playerState == "PAUSED")
            }
        }
    }

    @Test func castdsErrorsComeBackAsTheyWouldOnAConnection() async throws {
        try await withDaemon { socket, _ in
            var request = Castd_V1_MediaRequest()
            request.device = "no such device"
            let once = await #expect(throws: CastdError.self) {
                try await CastdClient.unaryOnce(socketPath: socket, .pause, request, as: CastdMediaStatus.self)
            }
            let connected = await #expect(throws: CastdError.self) {
                try await CastdClient.withConnection(socketPath: socket) {
                    try await $0.unary(.pause, request, as: CastdMediaStatus.self)
                }
            }
            #expect(once?.code == .notFound)
            #expect(once?.code == connected?.code && once?.message == connected?.message)

            let streaming = await #expect(throws: CastdError.self) {
                try await CastdClient.unaryOnce(
                    socketPath: socket, .watch, Castd_V1_WatchRequest(), as: CastdEvent.self)
            }
            #expect(streaming?.code == .invalidArgument)
        }
    }

    @Test func aRefusedConnectionSaysWhy() async throws {
        try await withDaemon(configure: { $0.maximumConnectionsPerUID = 1 }) { socket, _ in
            try await CastdClient.withConnection(socketPath: socket) { holder in
                _ = try await holder.listDevices()  // admitted: the uid's one connection
                let refused = await #expect(throws: CastdError.self) {
                    try await CastdClient.unaryOnce(
                        socketPath: socket, .getStatus, Castd_V1_GetStatusRequest(), as: CastdStatusResponse.self)
                }
                #expect(refused?.code == .resourceExhausted)
                #expect(refused?.message.contains("max_connections_per_uid") == true, "\(String(describing: refused))")
            }
        }
    }

    @Test func noDaemonIsUnavailableNamingTheSocket() async throws {
        try await withTemporaryDirectory { directory in
            let socket = directory + "/nobody.sock"
            let error = await #expect(throws: CastdError.self) {
                try await CastdClient.unaryOnce(
                    socketPath: socket, .getStatus, Castd_V1_GetStatusRequest(), as: CastdStatusResponse.self)
            }
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains("cannot connect to castd at \(socket)") == true)
            let tooLong = directory + "/" + String(repeating: "s", count: 200)
            let long = await #expect(throws: CastdError.self) {
                try await CastdClient.unaryOnce(
                    socketPath: tooLong, .getStatus, Castd_V1_GetStatusRequest(), as: CastdStatusResponse.self)
            }
            #expect(long?.message.contains("too long for a Unix socket") == true)
        }
    }
}
