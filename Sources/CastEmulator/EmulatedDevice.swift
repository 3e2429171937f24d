import CastProtocol
import Foundation
import Logging

/// What the device does in answer to one event: the messages it sends and what it logs.
struct DeviceOutcome {
    struct Delivery {
        var connection: Int
        var message: CastMessage
    }

    struct Note {
        var level: Logger.Level
        var message: String
    }

    var deliveries: [Delivery] = []
    var notes: [Note] = []
    /// Playback started, stopped or moved: the end-of-media timer must be re-armed.
    var playbackChanged = false
    /// Media URLs the device left alone (``EmulatorConfiguration/fetchMedia``), for `--log`.
    var fetchRecords: [EmulatorFetchRecord] = []

    mutating func note(_ level: Logger.Level, _ message: String) {
        notes.append(Note(level: level, message: message))
    }
}

/// The device side of CastV2 as a pure state machine: a message in, messages out. No I/O and no
/// clock of its own (time is passed in), so every behaviour can be tested without a socket.
///
/// Connections are the TLS links, numbered by the server. Each holds the virtual connections its
/// senders opened with CONNECT; a message needs one (source → destination) to be delivered,
/// except on the `tp.*` namespaces.
struct EmulatedDevice {
    struct VirtualConnection: Hashable, Sendable {
        /// The sender's id (`source_id` of its CONNECT).
        var sender: String
        /// `receiver-0` or an app's transport id.
        var endpoint: String
    }

    struct RunningApp {
        var app: EmulatorApp
        var sessionID: String
        var transportID: String
    }

    /// What the device is configured to be, beyond its apps.
    struct Settings {
        /// The duration given to media that does not say how long it is.
        var defaultMediaDuration: Double
        /// Content types (lower case, no parameters) whose LOAD fails.
        var unplayableContentTypes: Set<String>
        /// The device volume is fixed (`controlType` "fixed").
        var fixedVolume: Bool
        /// Not empty: the device is a multizone group of these members.
        var groupMembers: [EmulatorGroupMember]
        /// Video content reports `videoInfo` only on a device with a screen.
        var hasDisplay: Bool
        /// Set: the TV's state at start (the device reports one).
        var tv: EmulatorTV?
        /// Set: MEDIA_STATUS carries only this many queue items around the current one.
        var queueWindow: Int?
        /// Items wait, BUFFERING, for their media to be fetched (``EmulatorConfiguration/fetchMedia``).
        var fetchMedia: Bool

        init(
            defaultMediaDuration: Double = 596.5,
            unplayableContentTypes: Set<String> = EmulatorConfiguration.defaultUnplayableContentTypes,
            fixedVolume: Bool = false, groupMembers: [EmulatorGroupMember] = [], hasDisplay: Bool = true,
            tv: EmulatorTV? = nil, queueWindow: Int? = nil, fetchMedia: Bool = false
        ) {
            self.queueWindow = queueWindow
            self.fetchMedia = fetchMedia
            self.defaultMediaDuration = defaultMediaDuration
            self.unplayableContentTypes = Set(unplayableContentTypes.map { $0.lowercased() })
            self.fixedVolume = fixedVolume
            self.groupMembers = groupMembers
            self.hasDisplay = hasDisplay
            self.tv = tv
        }

        init(_ configuration: EmulatorConfiguration) {
            self.init(
                defaultMediaDuration: configuration.defaultMediaDuration,
                unplayableContentTypes: configuration.unplayableContentTypes,
                fixedVolume: configuration.fixedVolume,
                groupMembers: configuration.groupMembers,
                hasDisplay: configuration.capabilities & 1 != 0,
                tv: configuration.tv, queueWindow: configuration.queueWindow, fetchMedia: configuration.fetchMedia
            )
        }
    }

    static let receiverID = CastWire.platformReceiverID

    let apps: [String: EmulatorApp]
    let idleApp: EmulatorApp?
    let settings: Settings
    var defaultMediaDuration: Double { settings.defaultMediaDuration }

    var volumeLevel = 1.0
    var muted = false
    /// The TV's state, on a device that reports one.
    var tv: EmulatorTV?
    var running: RunningApp?
    /// The running app's media session; nil when nothing is loaded.
    var player: MediaPlayer?
    var nextMediaSessionID = 1
    var nextItemID = 1
    var connections: [Int: Set<VirtualConnection>] = [:]
    /// Launches and loads, for tests and app developers (`GET /emulator/state`).
    var history = EmulatorHistory()

    init(apps: [EmulatorApp], settings: Settings) {
        var byID: [String: EmulatorApp] = [:]
        for app in apps where byID[app.appID] == nil { byID[app.appID] = app }
        self.apps = byID
        self.idleApp = apps.first(where: \.isIdleScreen)
        self.settings = settings
        self.tv = settings.tv
        if let idleApp { running = Self.start(idleApp) }
    }

    init(apps: [EmulatorApp], defaultMediaDuration: Double) {
        self.init(apps: apps, settings: Settings(defaultMediaDuration: defaultMediaDuration))
    }

    static func start(_ app: EmulatorApp) -> RunningApp {
        // Current firmware uses one lower-case UUID for both ids.
        let id = UUID().uuidString.lowercased()
        return RunningApp(app: app, sessionID: id, transportID: id)
    }

    // MARK: connections

    mutating func connectionOpened(_ connection: Int) {
        connections[connection] = []
    }

    mutating func connectionClosed(_ connection: Int) {
        connections[connection] = nil
    }

    // MARK: messages

    /// Handles one message that arrived on `connection`.
    mutating func receive(_ message: CastMessage, on connection: Int, now: Duration) -> DeviceOutcome {
        var outcome = DeviceOutcome()
        let deadlineBefore = nextDeadline
        route(message, on: connection, now: now, into: &outcome)
        if nextDeadline != deadlineBefore { outcome.playbackChanged = true }
        return outcome
    }

    private mutating func route(
        _ message: CastMessage, on connection: Int, now: Duration, into outcome: inout DeviceOutcome
    ) {
        let namespace = message.namespace
        if namespace == CastNamespace.heartbeat {
            return  // PING and PONG are the DeviceHeartbeatHandler's business.
        }
        guard message.payloadType == .string else {
            outcome.note(.info, "ignored a binary message on \(namespace) (not supported by the emulator)")
            return
        }
        if namespace == CastNamespace.connection {
            guard let payload = jsonObject(message, &outcome) else { return }
            handleConnectionMessage(message, payload: payload, on: connection, into: &outcome)
            return
        }
        if CastNamespace.isTransport(namespace) {
            outcome.note(.info, "ignored a message on \(namespace)")
            return
        }

        let virtualConnection = VirtualConnection(sender: message.sourceID, endpoint: message.destinationID)
        guard connections[connection]?.contains(virtualConnection) == true else {
            outcome.note(
                .info,
                "dropped: no virtual connection \(message.sourceID) → \(message.destinationID) (send CONNECT first): \(message.summary)"
            )
            return
        }

        // An echoing app answers any string, JSON or not.
        if let running, message.destinationID == running.transportID, running.app.echoes(on: namespace) {
            echo(message, from: running, on: connection, into: &outcome)
            return
        }
        guard let payload = jsonObject(message, &outcome) else { return }

        if message.destinationID == Self.receiverID {
            switch namespace {
            case CastNamespace.receiver:
                handleReceiverRequest(payload, from: message.sourceID, on: connection, now: now, into: &outcome)
            case CastNamespace.multizone where !settings.groupMembers.isEmpty:
                handleMultizoneRequest(payload, from: message.sourceID, on: connection, into: &outcome)
            default:
                outcome.note(.info, "ignored a message to receiver-0 on \(namespace)")
            }
        } else if let running, message.destinationID == running.transportID {
            if namespace == CastNamespace.media, running.app.hasMediaPlayer {
                handleMediaRequest(payload, from: message.sourceID, on: connection, now: now, into: &outcome)
            } else {
                outcome.note(.info, "dropped: \(running.app.displayName) does not handle \(namespace)")
            }
        } else {
            outcome.note(.info, "dropped: no endpoint \(message.destinationID)")
        }
    }

    /// The payload as a JSON object, or nil (noted) when it is not one.
    private func jsonObject(_ message: CastMessage, _ outcome: inout DeviceOutcome) -> JSONValue? {
        let payload: JSONValue
        do {
            payload = try JSONValue.parse(message.payloadUtf8)
        } catch {
            outcome.note(.warning, "ignored a message whose payload is not JSON (\(error)): \(message.summary)")
            return nil
        }
        guard payload.objectValue != nil else {
            outcome.note(.warning, "ignored a message whose payload is not a JSON object: \(message.summary)")
            return nil
        }
        return payload
    }

    private mutating func handleConnectionMessage(
        _ message: CastMessage, payload: JSONValue, on connection: Int, into outcome: inout DeviceOutcome
    ) {
        let sender = message.sourceID
        let endpoint = message.destinationID
        switch CastEnvelope(payload).type {
        case CastMessageType.connect:
            guard sender != CastWire.broadcastID, endpoint != CastWire.broadcastID else {
                outcome.note(.info, "ignored a CONNECT from or to *")
                return
            }
            guard endpoint == Self.receiverID || endpoint == running?.transportID else {
                // Like a receiver refusing a virtual connection: it answers with CLOSE.
                outcome.note(.info, "refused CONNECT \(sender) → \(endpoint): no such endpoint")
                send(
                    from: endpoint, to: sender, on: connection, CastNamespace.connection, ConnectionMessage.close,
                    &outcome)
                return
            }
            let (inserted, _) = connections[connection, default: []].insert(
                VirtualConnection(sender: sender, endpoint: endpoint)
            )
            if inserted { outcome.note(.info, "virtual connection \(sender) → \(endpoint) opened") }
            // Only senders that offer protocol versions get CONNECTED (older senders never expect it).
            if let version = Self.negotiatedProtocolVersion(payload) {
                send(
                    from: endpoint, to: sender, on: connection, CastNamespace.connection,
                    ["type": "CONNECTED", "protocolVersion": .number(Double(version))], &outcome
                )
            }
        case CastMessageType.close:
            if connections[connection]?.remove(VirtualConnection(sender: sender, endpoint: endpoint)) != nil {
                outcome.note(.info, "virtual connection \(sender) → \(endpoint) closed")
            }
        default:
            outcome.note(.info, "ignored \(CastEnvelope(payload).type) on tp.connection")
        }
    }

    /// The highest protocol version in `protocolVersion` / `protocolVersionList`, if any is offered.
    static func negotiatedProtocolVersion(_ payload: JSONValue) -> Int? {
        var offered: [Int64] = []
        if let single = payload["protocolVersion"]?.intValue { offered.append(single) }
        for item in payload["protocolVersionList"]?.arrayValue ?? [] {
            if let version = item.intValue { offered.append(version) }
        }
        return offered.filter { (0...3).contains($0) }.max().map { Int($0) }
    }

    // MARK: sending

    func send(
        from source: String, to destination: String, on connection: Int, _ namespace: String,
        _ payload: JSONValue, _ outcome: inout DeviceOutcome
    ) {
        outcome.deliveries.append(
            .init(
                connection: connection,
                message: .json(source: source, destination: destination, namespace: namespace, payload: payload)
            )
        )
    }

    /// Sends `payload` to `*` once on every connection that has a virtual connection to `endpoint`.
    func broadcast(from endpoint: String, _ namespace: String, _ payload: JSONValue, _ outcome: inout DeviceOutcome) {
        broadcast(from: endpoint, namespace, text: payload.jsonString, &outcome)
    }

    /// Sends `text` as it is to `*` once on every connection with a virtual connection to `endpoint`.
    func broadcast(from endpoint: String, _ namespace: String, text: String, _ outcome: inout DeviceOutcome) {
        for (connection, virtualConnections) in connections.sorted(by: { $0.key < $1.key })
        where virtualConnections.contains(where: { $0.endpoint == endpoint }) {
            outcome.deliveries.append(
                .init(
                    connection: connection,
                    message: .string(
                        source: endpoint, destination: CastWire.broadcastID, namespace: namespace, text: text)
                )
            )
        }
    }

    /// Closes every virtual connection to `endpoint`, telling each sender with CLOSE, as a
    /// receiver does when an app goes away.
    mutating func closeVirtualConnections(to endpoint: String, _ outcome: inout DeviceOutcome) {
        for connection in connections.keys.sorted() {
            let closing = connections[connection, default: []].filter { $0.endpoint == endpoint }
            for virtualConnection in closing.sorted(by: { $0.sender < $1.sender }) {
                connections[connection]?.remove(virtualConnection)
                send(
                    from: endpoint, to: virtualConnection.sender, on: connection, CastNamespace.connection,
                    ConnectionMessage.close, &outcome
                )
            }
        }
    }

    static func error(_ type: String, requestID: JSONValue, reason: String? = nil) -> JSONValue {
        var payload: [String: JSONValue] = ["type": .string(type), "requestId": requestID]
        if let reason { payload["reason"] = .string(reason) }
        return .object(payload)
    }

    // MARK: state

    /// Every sender id with at least one virtual connection, sorted.
    var senders: [String] {
        Array(Set(connections.values.flatMap { $0.map(\.sender) })).sorted()
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
