import Foundation

/// What a device says of itself at `/setup/eureka_info` (served on 8443 over HTTPS, and on 8008
/// over HTTP by older firmware): its friendly name, model, manufacturer, id and build. Senders
/// read it for a device they know only by address, where mDNS's TXT record would have said
/// the same.
///
/// Current firmware answers what `params=name,device_info,build_info` asks for; older firmware
/// answers everything, with some fields at the top level. Both are read, leniently: a field that
/// is missing, of the wrong type, empty or over ``maximumFieldLength`` reads as absent; an id
/// that is not a UUID reads as absent.
public struct CastDeviceInfo: Sendable, Hashable {
    /// The friendly name (`name`).
    public var name: String?
    /// `device_info.model_name` (older firmware: `detail.model_name`, or `model_name`).
    public var model: String?
    /// `device_info.manufacturer` (older firmware: `detail.manufacturer`).
    public var manufacturer: String?
    /// The device id in mDNS's form (`id` of the TXT record: 32 lower-case hex digits), from
    /// `device_info.ssdp_udn` or the top-level `ssdp_udn` (a UUID with dashes).
    public var id: String?
    /// The Cast firmware build (`build_info.cast_build_revision`, or the top-level
    /// `cast_build_revision`, else `build_version`).
    public var build: String?

    /// Longer strings read as absent: no real device sends names anywhere near this long.
    public static let maximumFieldLength = 256

    /// The query senders send.
    public static let path = "/setup/eureka_info?params=name,device_info,build_info"

    public init(name: String? = nil, model: String? = nil, manufacturer: String? = nil, id: String? = nil) {
        self.name = name
        self.model = model
        self.manufacturer = manufacturer
        self.id = id
    }

    /// Reads an answer; nil when it is not a JSON object.
    public init?(json: JSONValue) {
        guard json.objectValue != nil else { return nil }
        // Text only where the device wrote a JSON string: a number or a boolean in a name is a
        // device's mistake, not a name.
        func string(_ object: JSONValue?, _ key: String) -> String? {
            guard case .string(let value)? = object?[key] else { return nil }
            return value
        }
        func text(_ candidates: String?...) -> String? {
            for candidate in candidates {
                guard let value = candidate?.trimmingSpaces, !value.isEmpty else { continue }
                return value.utf8.count <= Self.maximumFieldLength ? value : nil
            }
            return nil
        }
        let deviceInfo = json["device_info"]
        let detail = json["detail"]
        name = text(string(json, "name"))
        model = text(string(deviceInfo, "model_name"), string(detail, "model_name"), string(json, "model_name"))
        manufacturer = text(string(deviceInfo, "manufacturer"), string(detail, "manufacturer"))
        id =
            [string(deviceInfo, "ssdp_udn"), string(json, "ssdp_udn")].lazy.compactMap { $0.flatMap(Self.deviceID) }
            .first
        build = text(
            string(json["build_info"], "cast_build_revision"), string(json, "cast_build_revision"),
            string(json, "build_version"))
    }

    /// Parses an answer's bytes; nil when they are not a JSON object.
    public init?(bytes: some Collection<UInt8>) {
        guard let json = try? JSONValue.parse(Data(bytes)) else { return nil }
        self.init(json: json)
    }

    /// A UDN (`5d1a2f9c-8b3e-4f21-a0c4-9e7b6d5c4a3b`, any case, with or without dashes, or
    /// `uuid:` in front) in mDNS's form: 32 lower-case hex digits. Nil for anything else.
    public static func deviceID(fromUDN udn: String) -> String? {
        var text = Substring(udn)
        if text.lowercased().hasPrefix("uuid:") { text = text.dropFirst(5) }
        let digits = text.filter { $0 != "-" }.lowercased()
        guard digits.utf8.count == 32,
            digits.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return digits
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
