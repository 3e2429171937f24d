import CastProtocol

/// One device of an emulated multizone group, as MULTIZONE_STATUS lists it.
public struct EmulatorGroupMember: Sendable, Hashable {
    /// TXT `ca` bit that marks a Cast group.
    public static let groupCapability: UInt32 = 32

    /// The member's device id (`deviceId`).
    public var deviceID: String
    /// Its friendly name (`name`).
    public var name: String
    /// Its capability bits (`capabilities`); real members of an audio group report 4.
    public var capabilities: Int

    public init(deviceID: String, name: String, capabilities: Int = 4) {
        self.deviceID = deviceID
        self.name = name
        self.capabilities = capabilities
    }

    /// Parses `ID=NAME` (the `--group-member` flag): a non-empty id without spaces, then a
    /// non-empty name.
    public init(parsing value: String) throws(EmulatorError) {
        guard let equals = value.firstIndex(of: "=") else {
            throw EmulatorError(
                .invalidArgument, "a group member is ID=NAME, like 5ab0d00d…=Kitchen speaker; got “\(value)”")
        }
        let id = String(value[..<equals])
        let name = String(value[value.index(after: equals)...])
        guard !id.isEmpty, !id.contains(where: \.isWhitespace) else {
            throw EmulatorError(
                .invalidArgument, "a group member's ID must not be empty or contain spaces; got “\(value)”")
        }
        guard !name.isEmpty else {
            throw EmulatorError(.invalidArgument, "a group member's NAME must not be empty; got “\(value)”")
        }
        self.init(deviceID: id, name: name)
    }

    var json: JSONValue {
        ["deviceId": .string(deviceID), "name": .string(name), "capabilities": .number(Double(capabilities))]
    }
}
