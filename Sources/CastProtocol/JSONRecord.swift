/// A payload type read from and written to a JSON object by a table of its members
/// (``members``): each key is named once, with the property it fills and how.
protocol JSONRecord: Sendable {
    /// Every property unset (nil, or its default).
    init()
    static var members: [JSONMember<Self>] { get }
}

extension JSONRecord {
    /// Reads `json` (an object; anything else reads as nothing): each member leniently, a value
    /// of the wrong type reading as unset.
    init(reading json: JSONValue) {
        self.init()
        let fields = JSONFields(json)
        for member in Self.members { member.read(&self, fields) }
    }

    /// The members that are set, over `base` (keys the type keeps but does not name).
    func writing(over base: [String: JSONValue] = [:]) -> JSONValue {
        var o = JSONMembers(base)
        for member in Self.members { member.write(self, &o) }
        return o.json
    }

    /// The keys the table names.
    static var keys: Set<String> { Set(members.map(\.key).filter { !$0.isEmpty }) }
}

/// One member of a ``JSONRecord``: its key, and how it reads into and writes from a property.
struct JSONMember<Root>: Sendable {
    typealias Path<Value> = WritableKeyPath<Root, Value> & Sendable

    let key: String
    let read: @Sendable (inout Root, JSONFields) -> Void
    let write: @Sendable (Root, inout JSONMembers) -> Void

    static func string(_ key: String, _ path: Path<String?>) -> Self {
        Self(key: key, read: { $0[keyPath: path] = $1.string(key) }, write: { $1.put(key, $0[keyPath: path]) })
    }

    static func number(_ key: String, _ path: Path<Double?>) -> Self {
        Self(key: key, read: { $0[keyPath: path] = $1.number(key) }, write: { $1.put(key, $0[keyPath: path]) })
    }

    static func integer(_ key: String, _ path: Path<Int64?>) -> Self {
        Self(key: key, read: { $0[keyPath: path] = $1.integer(key) }, write: { $1.put(key, $0[keyPath: path]) })
    }

    static func bool(_ key: String, _ path: Path<Bool?>) -> Self {
        Self(key: key, read: { $0[keyPath: path] = $1.bool(key) }, write: { $1.put(key, $0[keyPath: path]) })
    }

    /// Any JSON but null (`customData`).
    static func json(_ key: String, _ path: Path<JSONValue?>) -> Self {
        Self(key: key, read: { $0[keyPath: path] = $1.json(key) }, write: { $1.put(key, $0[keyPath: path]) })
    }

    static func integers(_ key: String, _ path: Path<[Int64]?>) -> Self {
        Self(key: key, read: { $0[keyPath: path] = $1.integers(key) }, write: { $1.put(key, $0[keyPath: path]) })
    }

    static func strings(_ key: String, _ path: Path<[String]?>) -> Self {
        Self(key: key, read: { $0[keyPath: path] = $1.strings(key) }, write: { $1.put(key, $0[keyPath: path]) })
    }

    /// An object member that is a record of its own.
    static func record<Record: JSONRecord>(_ key: String, _ path: Path<Record?>) -> Self {
        Self(
            key: key, read: { $0[keyPath: path] = $1.object(key, Record.init(reading:)) },
            write: { $1.put(key, $0[keyPath: path]?.writing()) })
    }

    /// An array member of records (what is not an object in it is skipped).
    static func records<Record: JSONRecord>(_ key: String, _ path: Path<[Record]?>) -> Self {
        Self(
            key: key, read: { $0[keyPath: path] = $1.objects(key, Record.init(reading:)) },
            write: { $1.put(key, $0[keyPath: path]?.map { $0.writing() }) })
    }
}

extension JSONMember {
    /// A member that is always there, with `value` when a device leaves it out or sends it
    /// unreadable.
    static func string(_ key: String, _ path: Path<String>, default value: String) -> Self {
        Self(
            key: key, read: { $0[keyPath: path] = $1.string(key) ?? value },
            write: { $1.put(key, $0[keyPath: path]) })
    }

    static func number(_ key: String, _ path: Path<Double>, default value: Double) -> Self {
        Self(
            key: key, read: { $0[keyPath: path] = $1.number(key) ?? value },
            write: { $1.put(key, $0[keyPath: path]) })
    }

    static func integer(_ key: String, _ path: Path<Int64>, default value: Int64) -> Self {
        Self(
            key: key, read: { $0[keyPath: path] = $1.integer(key) ?? value },
            write: { $1.put(key, $0[keyPath: path]) })
    }

    /// The keys the type does not name (`known`), kept so that nothing is lost on the way
    /// through; written first, under the named members.
    static func others(_ path: Path<[String: JSONValue]>, known: @escaping @Sendable () -> Set<String>) -> Self {
        Self(
            key: "", read: { $0[keyPath: path] = $1.others(known: known()) },
            write: { root, o in for (key, value) in root[keyPath: path] { o.members[key] = value } })
    }
}
