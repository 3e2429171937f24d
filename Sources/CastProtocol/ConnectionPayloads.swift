/// Messages on tp.connection and tp.heartbeat.
public enum ConnectionMessage {
    /// CONNECT to a virtual endpoint. `senderInfo` and `userAgent` are what Chromium sends;
    /// protocol versions are not offered, so no CONNECTED reply is expected.
    public static func connect(userAgent: String) -> JSONValue {
        [
            "type": .string(CastMessageType.connect),
            "origin": [:],
            "userAgent": .string(userAgent),
            "senderInfo": [
                "sdkType": 2, "version": "castd", "browserVersion": "castd",
                "platform": 6, "connectionType": 1,
            ],
        ]
    }

    public static let close: JSONValue = ["type": .string(CastMessageType.close)]
    public static let ping: JSONValue = ["type": .string(CastMessageType.ping)]
    public static let pong: JSONValue = ["type": .string(CastMessageType.pong)]
}
