import CastEmulator
import Foundation

/// `--ready-file`: tells a test harness that the emulator listens, and where.
struct ReadyFile: Encodable {
    var host: String
    var port: Int
    var httpPort: Int?
    var httpsPort: Int?
    var id: String
    var name: String
    var model: String
    var pid: Int32

    init(endpoints: EmulatorEndpoints, configuration: EmulatorConfiguration) {
        host = endpoints.host
        port = endpoints.port
        httpPort = endpoints.httpPort
        httpsPort = endpoints.httpsPort
        id = configuration.deviceID
        name = configuration.name
        model = configuration.model
        pid = ProcessInfo.processInfo.processIdentifier
    }

    enum CodingKeys: String, CodingKey {
        case host, port, httpPort, httpsPort, id, name, model, pid
    }

    /// Absent ports are written as null, so every key is always there.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(host, forKey: .host)
        try container.encode(port, forKey: .port)
        try container.encode(httpPort, forKey: .httpPort)
        try container.encode(httpsPort, forKey: .httpsPort)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(model, forKey: .model)
        try container.encode(pid, forKey: .pid)
    }

    /// Written to a temporary file in the same directory and renamed, so a reader never sees
    /// half of it.
    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
