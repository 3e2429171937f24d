import CastProtocol

/// A snapshot of an emulated device: what it would report right now, who is connected, and
/// what senders asked of it.
public struct EmulatorState: Sendable {
    /// One TLS connection and the virtual connections its senders opened.
    public struct Connection: Sendable, Hashable {
        /// The emulator's number for the connection (as in the message log), from 1.
        public var number: Int
        public var virtualConnections: [VirtualConnection]
    }

    /// A CONNECT that is in force: `sender` → `endpoint` (`receiver-0` or a transport id).
    public struct VirtualConnection: Sendable, Hashable {
        public var sender: String
        public var endpoint: String
    }

    /// RECEIVER_STATUS's `status` object, exactly as it would be sent.
    public var receiverStatusJSON: JSONValue
    /// The current media session's MEDIA_STATUS entry, with `currentTime` as of now; nil when
    /// nothing is loaded.
    public var mediaStatusJSON: JSONValue?
    public var connections: [Connection]
    /// The last 100 LAUNCHes the device accepted, oldest first.
    public var launches: [EmulatorLaunchRecord]
    /// The last 100 LOADs and QUEUE_LOADs that reached a media player, oldest first.
    public var loads: [EmulatorLoadRecord]
    /// The last 500 media fetches, and URLs left alone (``EmulatorConfiguration/fetchMedia``),
    /// oldest first.
    public var fetches: [EmulatorFetchRecord] = []
    /// Whether a media fetch is under way (a load's, a seek's, or reading onward while playing,
    /// sleeping between reads included); false once reading has stopped (PAUSE, STOP, the end).
    public var isFetchingMedia = false
    /// The whole snapshot as `GET /emulator/state` serves it (see ``CastDeviceEmulator``).
    public var json: JSONValue
    /// The faults being played (`faults` in the JSON, with `listening`).
    public var faults = EmulatorFaults()
    /// Whether the CastV2 listener accepts connections (false during a restart's downtime).
    public var isListening = false
    /// Where the device listens now (`endpoints` in the JSON); nil before `start()`.
    public var endpoints: EmulatorEndpoints? = nil

    /// The receiver status, parsed as a sender would.
    public var receiverStatus: CastReceiverStatus { CastReceiverStatus(payload: receiverStatusJSON) }
    /// The media status, parsed as a sender would.
    public var mediaStatus: CastMediaStatus? { mediaStatusJSON.flatMap(CastMediaStatus.init(json:)) }
    /// The running app, if any.
    public var runningApp: CastApplication? { receiverStatus.applications.first }
    /// Every sender id with at least one virtual connection, sorted.
    public var senders: [String] {
        Array(Set(connections.flatMap { $0.virtualConnections.map(\.sender) })).sorted()
    }
}

extension EmulatorState {
    /// What `device` would report at `now`, and what it saw.
    init(_ device: EmulatedDevice, at now: Duration) {
        let connections = device.connections.keys.sorted().map { number in
            Connection(
                number: number,
                virtualConnections: device.connections[number, default: []]
                    .map { VirtualConnection(sender: $0.sender, endpoint: $0.endpoint) }
                    .sorted { ($0.sender, $0.endpoint) < ($1.sender, $1.endpoint) }
            )
        }
        self.init(
            receiverStatusJSON: device.receiverStatusObject,
            mediaStatusJSON: device.player?.statusEntry(at: now, includeMedia: true),
            connections: connections,
            launches: device.history.launches,
            loads: device.history.loads,
            fetches: device.history.fetches,
            json: Self.json(of: device, at: now, connections: connections)
        )
    }

    /// The state endpoint's JSON: small, flat facts a test can assert on without parsing
    /// MEDIA_STATUS.
    private static func json(of device: EmulatedDevice, at now: Duration, connections: [Connection]) -> JSONValue {
        let history = device.history
        var app: JSONValue = .null
        if let running = device.running {
            app = [
                "appId": .string(running.app.appID), "displayName": .string(running.app.displayName),
                "sessionId": .string(running.sessionID), "transportId": .string(running.transportID),
                "appType": .string(running.app.appType.rawValue), "isIdleScreen": .bool(running.app.isIdleScreen),
                "namespaces": .array(running.app.namespaces.map(JSONValue.string)),
            ]
        }
        var playerJSON: JSONValue = .null
        if let player = device.player {
            var breakJSON: JSONValue = .null
            if let ad = player.ad {
                breakJSON = [
                    "breakId": .string(ad.adBreak.id), "breakClipId": .string(ad.clip.id),
                    "currentBreakClipTime": .number(MediaPlayer.rounded(player.clipTime(at: now) ?? 0)),
                    "skippable": .bool(player.isSkippable(at: now)),
                ]
            }
            playerJSON = [
                "mediaSessionId": .number(Double(player.mediaSessionID)),
                "playerState": .string(player.playerState),
                "currentTime": .number(MediaPlayer.rounded(player.currentTime(at: now))),
                "playbackRate": .number(player.playbackRate),
                "contentId": .string(player.current.contentID),
                "itemIds": .array(player.items.map { .number(Double($0.itemID)) }),
                "currentItemId": .number(Double(player.current.itemID)),
                "repeatMode": .string(player.repeatMode.rawValue),
                "activeTrackIds": .array(player.current.activeTrackIDs.map { .number(Double($0)) }),
                "break": breakJSON,
                "volume": player.volumeJSON,
            ]
        }
        return [
            "time": .number(MediaPlayer.rounded(now.seconds)),
            "app": app,
            "player": playerJSON,
            "volume": device.volumeJSON,
            "tv": device.tv?.json ?? .null,
            "launches": .array(history.launches.map(\.json)),
            "loads": .array(history.loads.map(\.json)),
            "fetches": .array(
                history.fetches.suffix(EmulatorHistory.limit).map {
                    var entry = $0.json.objectValue ?? [:]
                    entry["time"] = .number(MediaPlayer.rounded($0.time.seconds))
                    return .object(entry)
                }),
            "senders": .array(device.senders.map(JSONValue.string)),
            "connections": .array(
                connections.map { connection in
                    [
                        "number": .number(Double(connection.number)),
                        "virtualConnections": .array(
                            connection.virtualConnections.map {
                                ["sender": .string($0.sender), "endpoint": .string($0.endpoint)]
                            }
                        ),
                    ]
                }
            ),
        ]
    }
}
