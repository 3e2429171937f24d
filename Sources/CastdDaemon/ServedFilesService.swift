import CastDevices
import CastdAPI
import CastdHandlers
import CastdMediaServer
import Logging
import ServiceLifecycle

/// castd's media server as a service: follows the devices' sessions, so that a device's files
/// stop being served once its session has ended (or the device has gone), and shuts the server
/// down with castd.
struct ServedFilesService: Service {
    let store: CastdStateStore
    let served: ServedFiles
    let server: MediaServer

    func run() async throws {
        let events = store.watch(ownedByCastd: true)
        await cancelWhenGracefulShutdown {
            for await event in events {
                switch event.kind {
                case .session(let session)?:
                    if Self.isOver(session.state) { served.release(deviceID: session.deviceID) }
                case .transferred(let transfer)?:
                    served.move(from: transfer.fromDeviceID, to: transfer.toDeviceID)
                case .deviceRemoved(let device)?:
                    served.release(deviceID: device.id)
                case .snapshot(let snapshot)?:
                    // The first event, and the one after a lag: whatever ended meanwhile.
                    let open = Set(snapshot.sessions.filter { !Self.isOver($0.state) }.map(\.deviceID))
                    for deviceID in served.deviceIDs where !open.contains(deviceID) {
                        served.release(deviceID: deviceID)
                    }
                default:
                    break
                }
            }
        }
        events.cancel()
        await server.shutdown()
    }

    static func isOver(_ state: Castd_V1_SessionState) -> Bool {
        switch state {
        case .ended, .startFailed, .resumeFailed: true
        default: false
        }
    }
}
