import CastdSupport
import CastProtocol
import Foundation
import Logging
import NIOCore

/// What tests and app developers see of the emulated device: its state, its history, its messages.
extension CastDeviceEmulator {
    // MARK: observing

    /// The `_googlecast._tcp` TXT record this device would publish right now: `id`, `cd`, `rm`,
    /// `ve`, `md`, `ic`, `fn`, `ca`, `st` (1 while a non-idle app runs), `bs`, `nf`, `rs`.
    public var txtRecord: [String: String] {
        let app = core.withLock { $0.device.running?.app }
        return deviceDescription.txtRecord(runningApp: app)
    }

    /// The TXT record now, then again each time it changes (`st` and `rs` follow the running
    /// app): what an mDNS publisher re-announces. Ends when the emulator shuts down.
    public func txtRecordChanges() -> AsyncStream<[String: String]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [String: String].self)
        let id = core.withLock { core -> Int in
            defer { core.nextTXTWatcher += 1 }
            core.txtWatchers[core.nextTXTWatcher] = continuation
            continuation.yield(deviceDescription.txtRecord(runningApp: core.device.running?.app))
            return core.nextTXTWatcher
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.core.withLock { $0.txtWatchers.removeValue(forKey: id) }
        }
        if lifecycle.withLock({ if case .shutDown = $0 { true } else { false } }) { continuation.finish() }
        return stream
    }

    /// The mDNS instance name real devices use: `<model>-<id>`, spaces as dashes.
    public var serviceInstanceName: String {
        configuration.model.replacingOccurrences(of: " ", with: "-") + "-" + configuration.deviceID
    }

    /// The authority whose root a sender must trust to authenticate this device
    /// (``EmulatorConfiguration/deviceAuthority``, else ``EmulatorDeviceAuthority/shared()``).
    public func deviceAuthority() throws -> EmulatorDeviceAuthority {
        try configuration.deviceAuthority ?? EmulatorDeviceAuthority.shared()
    }

    /// What the device would report now, who is connected, and what senders asked of it.
    /// ``EmulatorState/json`` is what `GET /emulator/state` serves.
    public func state() async -> EmulatorState {
        currentState()
    }

    func currentState() -> EmulatorState {
        let now = clock.now()
        let (snapshot, app, faults, listener, fetching) = core.withLock {
            (EmulatorState($0.device, at: now), $0.device.running?.app, $0.faults, $0.listener, $0.mediaFetch.isBusy)
        }
        var state = snapshot
        state.isFetchingMedia = fetching
        state.faults = faults
        state.isListening = listener.isListening
        state.endpoints = listener.endpoints
        if case .object(var fields) = state.json {
            fields["device"] = configuration.deviceJSON(txt: deviceDescription.txtRecord(runningApp: app))
            fields["faults"] = Self.faultsJSON(faults, isListening: listener.isListening)
            fields["endpoints"] = listener.endpoints?.json ?? .null
            state.json = .object(fields)
        }
        return state
    }
}
