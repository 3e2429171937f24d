import CastProtocol

/// What a SET_VOLUME asks for (`volume: {level?, muted?}`), of the device on receiver-0 or of
/// the media stream: at least one of the two, a level within 0…1.
struct VolumeChange {
    /// Kept as a float32, the precision real devices report levels in (0.05000000074505806).
    var level: Double?
    var muted: Bool?

    /// Nil when the request gives neither, or a level out of range.
    init?(_ volume: JSONValue?) {
        let level = volume?["level"]?.doubleValue
        let muted = volume?["muted"]?.boolValue
        guard level != nil || muted != nil, level.map({ (0.0...1.0).contains($0) }) ?? true else { return nil }
        self.level = level.map { Double(Float($0)) }
        self.muted = muted
    }

    /// Sets what was asked for; leaves the rest.
    func apply(level currentLevel: inout Double, muted currentlyMuted: inout Bool) {
        if let level { currentLevel = level }
        if let muted { currentlyMuted = muted }
    }
}
