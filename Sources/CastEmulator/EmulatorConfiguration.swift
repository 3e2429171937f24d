import CastProtocol

/// How an emulated Cast device presents itself and where it listens.
public struct EmulatorConfiguration: Sendable {
    /// The friendly name (`fn` in the TXT record, `name` in eureka_info).
    public var name = "Emulated TV"
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The CastV2 port (TLS). Real devices use 8009; 0 picks a free port.
    public var port = 0
    /// Plain-HTTP device description (`/setup/eureka_info`), as real devices serve on 8008.
    /// `nil` turns it off; 0 picks a free port.
    public var httpPort: Int? = nil
    /// HTTPS device description, as real devices serve on 8443 (pychromecast reads it).
    /// `nil` turns it off; 0 picks a free port.
    public var httpsPort: Int? = nil
    /// The device id: 32 lower-case hex digits, random by default.
    public var deviceID: String = EmulatorConfiguration.randomDeviceID()
    /// The model name (`md`).
    public var model = "Chromecast"
    /// Capability bits (`ca`): video out 1, video in 2, audio out 4, audio in 8, dev mode 16.
    public var capabilities: UInt32 = 5
    /// When set, every CastV2 message received and sent is appended to this file as one JSON
    /// object per line. The file is truncated at start.
    public var logFile: String? = nil
    /// The clock that media playback follows.
    public var clock: any EmulatorClock = SystemEmulatorClock()
    /// Heartbeat intervals. Real devices: PING after 5 s of silence, close after 10 s.
    public var heartbeat = EmulatorHeartbeat()
    /// The apps this device can launch. The first idle-screen app is running at start.
    public var apps: [EmulatorApp] = EmulatorApp.builtIn
    /// The duration given to loaded media that does not say how long it is.
    public var defaultMediaDuration = 596.5
    /// Content types the device says it cannot play: a LOAD of one fails with LOAD_FAILED
    /// (detailedErrorCode 104, media source not supported) after an IDLE/ERROR status. Compared
    /// case-insensitively, without parameters (`video/x-flv; codecs=…` is `video/x-flv`).
    public var unplayableContentTypes: Set<String> = EmulatorConfiguration.defaultUnplayableContentTypes
    /// The device volume cannot be changed (`controlType` "fixed"): SET_VOLUME with a level is
    /// refused with INVALID_REQUEST BAD_PARAMETER; muting still works.
    public var fixedVolume = false
    /// Set: MEDIA_STATUS carries only this many queue items around the current one (at least
    /// one), as real receivers do with long queues; senders fetch the rest with
    /// QUEUE_GET_ITEM_IDS and QUEUE_GET_ITEMS. Nil: every item.
    public var queueWindow: Int?
    /// Fault injection: every message the device sends (but tp.*) is written this much later,
    /// like a slow device. Zero: prompt. The delay at start; it can be changed while the device
    /// runs (``EmulatorFaults/replyDelay``).
    public var replyDelay: Duration = .zero
    /// When not empty, the device is a multizone group of these members: TXT `ca` gains bit 32
    /// and it answers MULTIZONE_STATUS on `urn:x-cast:com.google.cast.multizone`. Set ``model``
    /// to "Google Cast Group" too, as real groups do (``makeGroup(of:)`` does both).
    public var groupMembers: [EmulatorGroupMember] = []
    /// How long the generated TLS certificate is valid (real devices: about two days; senders
    /// refuse more than four).
    public var certificateLifetime: Duration = .seconds(48 * 3600)
    /// Who issues the device certificate used for device authentication (`tp.deviceauth`).
    /// `nil`: ``EmulatorDeviceAuthority/shared()``, one per process.
    public var deviceAuthority: EmulatorDeviceAuthority? = nil
    /// Fault injection for device authentication: the device fails it in this way (everything
    /// else it does as usual). `nil`: a genuine device.
    public var impostor: EmulatorImpostor? = nil
    /// Called for every CastV2 message as it passes the device's framing: received (decoded,
    /// before the device handles it) or sent (as it is written to TLS). It runs on the
    /// connection's event loop, so it must be quick; it is for timing what arrives and leaves
    /// (castd-bench stamps PAUSE arrivals and MEDIA_STATUS departures on its own clock).
    /// `nil`: none.
    public var messageTap: EmulatorMessageTap? = nil
    /// Set: the device is on a TV that reports its state over HDMI-CEC, as Google TVs and
    /// Chromecasts in a TV's HDMI port do (`isStandBy`, `isActiveInput` in RECEIVER_STATUS),
    /// starting in this state; it changes with ``CastDeviceEmulator/changeTV(standBy:activeInput:)``
    /// or `POST /emulator/tv`. `nil`: the device says nothing of a TV, as most do.
    public var tv: EmulatorTV? = nil
    /// Fetch media as a real device does: when an item becomes current (LOAD, QUEUE_LOAD, the
    /// next item) the device stays BUFFERING while it GETs the start of `contentId`
    /// (`Range: bytes=0-65535`) and each text track (whole, at most 1 MiB); if a fetch fails
    /// (refused, no answer within ``mediaFetchTimeout``, an HTTP status other than 2xx) the
    /// session ends IDLE ERROR and the LOAD fails with LOAD_FAILED, detailedErrorCode 103
    /// (MEDIA_NETWORK). After a SEEK it reads at the byte offset the position maps to, and while
    /// playing it reads onward in 64 KiB ranges at the rate the content plays.
    ///
    /// Only `http://` URLs whose host is an IP address or `localhost` are fetched, what castd's
    /// media server and local test servers hand out; any other URL (`https://`, a host name:
    /// no name is ever resolved) is left alone, recorded as not fetched, and loads as if the
    /// device had played it. Every fetch is in ``EmulatorState/fetches`` and the `--log` file.
    /// Off by default (cast-emulator turns it on with `--publish`).
    public var fetchMedia = false
    /// How long a media fetch may take, connection and answer (a device's player gives up too).
    public var mediaFetchTimeout: Duration = .seconds(5)
    /// The device plays only what its ``model`` plays (with ``fetchMedia``): once the start of
    /// the content is fetched, the emulator probes the URL with ffprobe (Debian's `ffmpeg`; its
    /// player reads as much of the file as ffprobe needs) and fails a LOAD whose container or
    /// codecs the model cannot play, or that ffprobe cannot read, with LOAD_FAILED,
    /// detailedErrorCode 104 (MEDIA_SRC_NOT_SUPPORTED), as a real device does. What the model
    /// plays is castd's own table (`DeviceCapabilities.forModel`): the emulator checks castd
    /// against the same rows castd decides by. Off by default: a test's stand-in media (random
    /// bytes after an `ftyp` box) plays as it always has.
    public var probeMedia = false

    public init() {}

    /// `video/x-flv`, `video/x-ms-wmv` and `application/x-castd-unplayable` (the last one for
    /// tests that need a LOAD to fail whatever the device).
    public static let defaultUnplayableContentTypes: Set<String> = [
        "video/x-flv", "video/x-ms-wmv", "application/x-castd-unplayable",
    ]

    /// The model real Cast groups announce (`md`).
    public static let groupModel = "Google Cast Group"

    /// Makes this device a multizone group of `members`, with the group model name.
    public mutating func makeGroup(of members: [EmulatorGroupMember]) {
        groupMembers = members
        model = Self.groupModel
    }

    /// The capability bits announced: ``capabilities``, plus 32 for a group.
    public var announcedCapabilities: UInt32 {
        groupMembers.isEmpty ? capabilities : capabilities | EmulatorGroupMember.groupCapability
    }

    /// A random device id in the form real devices use.
    public static func randomDeviceID() -> String {
        (0..<16).map { _ in hex2(UInt8.random(in: .min ... .max)) }.joined()
    }
}

extension EmulatorConfiguration {
    /// The `device` part of the state: how the device presents itself, with its TXT record now.
    func deviceJSON(txt: [String: String]) -> JSONValue {
        [
            "id": .string(deviceID),
            "name": .string(name),
            "model": .string(model),
            "capabilities": .number(Double(announcedCapabilities)),
            "isGroup": .bool(!groupMembers.isEmpty),
            "groupMembers": .array(groupMembers.map(\.json)),
            "fixedVolume": .bool(fixedVolume),
            "unplayableContentTypes": .array(unplayableContentTypes.sorted().map(JSONValue.string)),
            "fetchMedia": .bool(fetchMedia),
            "probeMedia": .bool(probeMedia),
            "txt": .object(txt.mapValues(JSONValue.string)),
        ]
    }
}

/// See ``EmulatorConfiguration/messageTap``: the direction, the connection number (one per TLS
/// link, as in the `--log` file) and the message.
public typealias EmulatorMessageTap =
    @Sendable (_ direction: EmulatorMessageDirection, _ connection: Int, _ message: CastMessage) -> Void

/// Whether a message reached the device or left it.
public enum EmulatorMessageDirection: Sendable, Hashable {
    case received
    case sent
}

/// What a TV says of itself over HDMI-CEC.
public struct EmulatorTV: Sendable, Hashable {
    /// The TV is in standby (`isStandBy`).
    public var standBy: Bool
    /// The TV shows this device's input (`isActiveInput`).
    public var activeInput: Bool

    /// A TV that is on and shows this device: what a TV says once a sender cast to it.
    public init(standBy: Bool = false, activeInput: Bool = true) {
        self.standBy = standBy
        self.activeInput = activeInput
    }

    var json: JSONValue { ["standBy": .bool(standBy), "activeInput": .bool(activeInput)] }
}

/// When a device pings a quiet sender and when it gives up on it.
public struct EmulatorHeartbeat: Sendable, Hashable {
    /// A PING is sent when nothing has been received for this long.
    public var pingAfter: Duration
    /// The connection is closed when nothing has been received for this long.
    public var closeAfter: Duration

    public init(pingAfter: Duration = .seconds(5), closeAfter: Duration = .seconds(10)) {
        self.pingAfter = pingAfter
        self.closeAfter = closeAfter
    }
}

/// Where a started emulator listens.
public struct EmulatorEndpoints: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    /// The CastV2 (TLS) port.
    public var port: Int
    public var httpPort: Int?
    public var httpsPort: Int?

    public init(host: String, port: Int, httpPort: Int? = nil, httpsPort: Int? = nil) {
        self.host = host
        self.port = port
        self.httpPort = httpPort
        self.httpsPort = httpsPort
    }

    public var description: String {
        var s = "\(host):\(port)"
        if let httpPort { s += " http:\(httpPort)" }
        if let httpsPort { s += " https:\(httpsPort)" }
        return s
    }
}

func hex2(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
