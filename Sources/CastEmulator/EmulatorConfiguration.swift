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
    /// How long the generated TLS certificate is valid (real devices: about two days; senders
    /// refuse more than four).
    public var certificateLifetime: Duration = .seconds(48 * 3600)
    /// Who issues the device certificate used for device authentication (`tp.deviceauth`).
    /// `nil`: ``EmulatorDeviceAuthority/shared()``, one per process.
    public var deviceAuthority: EmulatorDeviceAuthority? = nil

    public init() {}

    /// A random device id in the form real devices use.
    public static func randomDeviceID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in hex2(UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }
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
