import CastProtocol
import CastdAPI

/// Stream transfer, as a sender sees it: castd's session vanished from one device while playing,
/// and turns up on another.
extension DeviceRegistry {
    /// castd's session vanished from `source` while playing: if it shows up on another device
    /// within ``transferWindow`` (the same app, playing the same media), follow it there.
    ///
    /// A real transfer (a voice command, the Google Home app, another sender's output switcher)
    /// is orchestrated between the two receivers (the source's app answers `STORE_SESSION` with
    /// `SESSION_STATE`, the destination's app gets `RESUME_SESSION`); a sender sees only the
    /// results: the app stops on the source and starts on the destination with the same media.
    /// That is what castd watches for.
    func followTransfer(from source: String, session: CastdSession, media: CastMediaInformation) async {
        let deadline = ContinuousClock.now + Self.transferWindow
        sessionLogger.info(
            "session vanished while playing; looking for it on other devices", metadata: ["device.id": "\(source)"])
        while ContinuousClock.now < deadline, !Task.isCancelled {
            let candidates = controllers.values.filter { candidate in
                guard candidate.id != source, let device = store.device(id: candidate.id) else { return false }
                return device.linkState != .failed && device.linkState != .reconnecting
            }
            let found = await withTaskGroup(of: (DeviceController, CastdSession)?.self) { group in
                for candidate in candidates {
                    group.addTask {
                        await candidate.adoptTransferred(appID: session.appID, media: media, from: source)
                            .map { (candidate, $0) }
                    }
                }
                var first: (DeviceController, CastdSession)?
                for await result in group where first == nil { first = result }
                return first
            }
            if let (target, adopted) = found {
                transfers.record(from: source, to: target.id)
                var transfer = Castd_V1_SessionTransfer()
                transfer.fromDeviceID = source
                transfer.fromDeviceName = session.deviceName
                transfer.toDeviceID = target.id
                transfer.toDeviceName = adopted.deviceName
                transfer.session = adopted
                store.publishTransfer(transfer)
                sessionLogger.info(
                    "session transferred",
                    metadata: ["from": "\(source)", "to": "\(target.id)", "session": "\(adopted.sessionID)"])
                return
            }
            do {
                try await Task.sleep(for: .milliseconds(500))
            } catch {
                return
            }
        }
        sessionLogger.info("the session did not reappear on another device", metadata: ["device.id": "\(source)"])
    }
}

/// Where castd's sessions went when they moved to another device (stream transfer): requests
/// for the device a session left go to the one it moved to, until the old device gets a session
/// of its own.
struct SessionTransfers {
    /// The device a session left → the device it moved to.
    private var moved: [String: String] = [:]

    mutating func record(from source: String, to destination: String) { moved[source] = destination }

    /// Forgets what castd noted for `id` (castd forgets the device).
    mutating func forget(_ id: String) { moved[id] = nil }

    /// Where requests for the session of device `id` go, if not to `id`: the device its session
    /// moved to, while that one holds a session and `id` holds none. A device with a session of
    /// its own again is no longer followed elsewhere.
    mutating func destination(of id: String, hasSession: (String) -> Bool) -> String? {
        guard let target = moved[id] else { return nil }
        if hasSession(id) {
            moved[id] = nil
            return nil
        }
        return hasSession(target) ? target : nil
    }
}
