import CastDevices
import CastdAPI
import CastdMediaServer
import CastdServer

/// Loads that name handed-over files (`media.file`, rpc.proto "The files socket"): each file is
/// taken by its handle, served by castd's media server at the address the device reaches castd
/// at, and loaded by that URL. What the device took stays served (`ServedFiles`); what it did
/// not is revoked at once.
extension CastdService {
    /// Load, QueueLoad and QueueInsert, with their files served. A Load or QueueLoad replaces
    /// the device's media, so the files served for what it played before are let go.
    func load(_ request: Castd_V1_LoadRequest, peer: PeerCredentials?) async throws -> CastdMediaStatus {
        var request = request
        return try await servingFiles(on: request.device, peer: peer, replacing: true) { serve in
            try await serve(&request.media)
            return .load(request)
        }
    }

    func queueLoad(_ request: Castd_V1_QueueLoadRequest, peer: PeerCredentials?) async throws -> CastdMediaStatus {
        var request = request
        return try await servingFiles(on: request.device, peer: peer, replacing: true) { serve in
            for index in request.items.indices { try await serve(&request.items[index].media) }
            return .queueLoad(request)
        }
    }

    func queueInsert(_ request: Castd_V1_QueueInsertRequest, peer: PeerCredentials?) async throws -> CastdMediaStatus {
        var request = request
        return try await servingFiles(on: request.device, peer: peer, replacing: false) { serve in
            for index in request.items.indices { try await serve(&request.items[index].media) }
            return .queueInsert(request)
        }
    }

    /// QueueRemove: the files castd served for the items removed are no longer served.
    func queueRemove(_ request: Castd_V1_QueueRemoveRequest) async throws -> CastdMediaStatus {
        let device = try await registry.sessionController(for: request.device)
        var urls: [String] = []
        if let served, served.serves(deviceID: device.id) {
            // What the items are, as castd knows the queue (asked of the device if castd lacks
            // it); when it cannot be had, their files are let go with the session.
            let removed = Set(request.itemIds)
            if let queue = try? await device.queue() {
                urls = queue.items.filter { removed.contains($0.itemID) }.flatMap(\.media.urls)
            }
        }
        let status = try await device.media(MediaCall.queueRemove(itemIDs: request.itemIds))
        served?.release(urls: urls, deviceID: device.id)
        return status
    }

    /// Runs the media call `make` builds on the device `selector` names; `make` passes each
    /// media of its request through `serve`, which serves a named file and rewrites it to the
    /// file's URL.
    private func servingFiles(
        on selector: String, peer: PeerCredentials?, replacing: Bool,
        _ make: ((inout CastdMediaInformation) async throws -> Void) async throws -> MediaCall
    ) async throws -> CastdMediaStatus {
        let device = try await registry.sessionController(for: selector)
        var tokens: [MediaToken] = []
        var address: String?
        /// `http://ADDRESS:PORT` where castd offers the files, for a device that cannot fetch them.
        var offered: String?
        let served = self.served
        let call: MediaCall
        do {
            call = try await make { media in
                guard media.namesFiles else { return }
                guard let served else {
                    throw CastdError(.failedPrecondition, "this castd serves no files (it runs without a media server)")
                }
                guard let peer else {
                    throw CastdError(.failedPrecondition, "files can be loaded only by a client of castd's socket")
                }
                if address == nil {
                    if let fixed = served.fixedAddress {
                        address = fixed
                    } else {
                        // This end of the device's link: the address the device reaches.
                        address = try await device.link().localAddress
                    }
                }
                guard let address else {
                    throw CastdError(.unavailable, "castd cannot tell which of its addresses \(device.id) reaches")
                }
                tokens += try await served.serve(&media, uid: peer.uid, address: address)
                if offered == nil, let port = served.server.port {
                    offered = "http://" + MediaServer.authority(host: address, port: port)
                }
            }
        } catch {
            served?.revoke(tokens)
            throw error
        }
        do {
            let status = try await device.media(call)
            if replacing || !tokens.isEmpty { served?.adopt(tokens, deviceID: device.id, replacing: replacing) }
            return status
        } catch var error as CastdError {
            served?.revoke(tokens)
            // The device could not fetch what castd served: say where castd offered it.
            if !tokens.isEmpty, error.deviceError?.type == "LOAD_FAILED", let offered {
                error.message +=
                    "; castd offered the file at \(offered): if the device cannot reach that address and port (a firewall on this machine, or an address the device has no route to), open the port or set http.address and http.port (README: Your own files)"
            }
            throw error
        } catch {
            served?.revoke(tokens)
            throw error
        }
    }
}
