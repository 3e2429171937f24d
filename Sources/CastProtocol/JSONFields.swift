/// Reads the members of a JSON object a device or a sender wrote, leniently: a member of the
/// wrong type reads as absent (nil), never fails the message. Numbers that are not finite read
/// as absent too.
struct JSONFields {
    let members: [String: JSONValue]

    init(_ json: JSONValue) { members = json.objectValue ?? [:] }

    func string(_ key: String) -> String? { members[key]?.stringValue }
    func number(_ key: String) -> Double? { members[key]?.doubleValue.flatMap { $0.isFinite ? $0 : nil } }
    func integer(_ key: String) -> Int64? { members[key]?.intValue }
    func bool(_ key: String) -> Bool? { members[key]?.boolValue }
    /// Any JSON but null.
    func json(_ key: String) -> JSONValue? { members[key].flatMap { $0.isNull ? nil : $0 } }
    func integers(_ key: String) -> [Int64]? { members[key]?.arrayValue?.compactMap(\.intValue) }
    func strings(_ key: String) -> [String]? { members[key]?.arrayValue?.compactMap(\.stringValue) }

    /// A member that is an object, read by `read`.
    func object<T>(_ key: String, _ read: (JSONValue) -> T?) -> T? {
        members[key].flatMap { $0.objectValue != nil ? read($0) : nil }
    }

    /// A member that is an array: its objects, each read by `read`; what is not an object is
    /// skipped.
    func objects<T>(_ key: String, _ read: (JSONValue) -> T?) -> [T]? {
        members[key]?.arrayValue.map { $0.filter { $0.objectValue != nil }.compactMap(read) }
    }

    /// The members whose keys are not in `known`: what castd does not read but must not lose.
    func others(known: Set<String>) -> [String: JSONValue] {
        members.filter { !known.contains($0.key) }
    }

    /// A member that is there, not null, and not a finite number.
    func unreadableNumber(_ key: String) -> Bool {
        guard let value = members[key], !value.isNull else { return false }
        return value.doubleValue.map { !$0.isFinite } ?? true
    }
}

/// Writes a JSON object: what is nil is left out.
struct JSONMembers {
    var members: [String: JSONValue]

    init(_ base: [String: JSONValue] = [:]) { members = base }

    mutating func put(_ key: String, _ value: String?) { if let value { members[key] = .string(value) } }
    mutating func put(_ key: String, _ value: Double?) { if let value { members[key] = .number(value) } }
    mutating func put(_ key: String, _ value: Int64?) { if let value { members[key] = .number(Double(value)) } }
    mutating func put(_ key: String, _ value: Bool?) { if let value { members[key] = .bool(value) } }
    mutating func put(_ key: String, _ value: JSONValue?) { if let value { members[key] = value } }
    mutating func put(_ key: String, _ values: [Int64]?) {
        if let values { members[key] = .array(values.map { .number(Double($0)) }) }
    }
    mutating func put(_ key: String, _ values: [String]?) {
        if let values { members[key] = .array(values.map { .string($0) }) }
    }
    mutating func put(_ key: String, _ values: [JSONValue]?) { if let values { members[key] = .array(values) } }

    var json: JSONValue { .object(members) }
}
