import CastProtocol
import CastdAPI
import Foundation

/// A device given on the command line or in the configuration, not discovered.
public struct StaticDevice: Sendable, Hashable {
    public var name: String?
    public var endpoint: DeviceEndpoint

    public init(name: String? = nil, endpoint: DeviceEndpoint) {
        self.name = name
        self.endpoint = endpoint
    }

    /// Parses `HOST`, `HOST:PORT`, `[V6]:PORT`, or `NAME=HOST[:PORT]`.
    public init(parsing text: String) throws {
        var spec = Substring(text.trimmingCharacters(in: .whitespaces))
        var name: String?
        if let eq = spec.lastIndex(of: "=") {
            name = String(spec[..<eq]).trimmingCharacters(in: .whitespaces)
            spec = spec[spec.index(after: eq)...]
            if name?.isEmpty == true { name = nil }
        }
        var host = String(spec)
        var port = CastWire.defaultPort
        if spec.hasPrefix("[") {
            guard let close = spec.firstIndex(of: "]") else {
                throw CastdError(.invalidArgument, "bad device address '\(text)': missing ']'")
            }
            host = String(spec[spec.index(after: spec.startIndex)..<close])
            let rest = spec[spec.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let p = Int(rest.dropFirst()), (1...65535).contains(p) else {
                    throw CastdError(.invalidArgument, "bad port in device address '\(text)'")
                }
                port = p
            }
        } else if spec.filter({ $0 == ":" }).count == 1, let colon = spec.firstIndex(of: ":") {
            host = String(spec[..<colon])
            guard let p = Int(spec[spec.index(after: colon)...]), (1...65535).contains(p) else {
                throw CastdError(.invalidArgument, "bad port in device address '\(text)' (expected HOST[:PORT])")
            }
            port = p
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) else {
            throw CastdError(
                .invalidArgument, "bad device address '\(text)' (expected HOST[:PORT] or NAME=HOST[:PORT])")
        }
        self.name = name
        self.endpoint = DeviceEndpoint(host: host, port: port)
    }

    public var id: String { endpoint.description }
}
