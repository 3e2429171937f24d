#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import LengthPrefixFraming
import NIOCore
import SwiftProtobuf

/// Shared facts of the castd.v1 wire: frames, methods, status codes, the socket's location.
public enum CastdRPC {
    /// Default largest frame either side accepts.
    public static let defaultMaximumFrameLength = 4 * 1024 * 1024

    public static let serviceName = "castd.v1.Cast"

    /// Encodes one frame (length prefix included) into `buffer`: the one way castd.v1 frames
    /// get their length, on both sides.
    public static func write(_ frame: Castd_V1_Frame, into buffer: inout ByteBuffer) throws {
        let bytes: [UInt8] = try frame.serializedBytes()
        buffer.reserveCapacity(minimumWritableBytes: 4 + bytes.count)
        buffer.writeLengthPrefixedFrame(bytes)
    }

    /// Decodes a frame body (without its length prefix).
    public static func decodeFrame(_ body: ByteBuffer) throws(CastdError) -> Castd_V1_Frame {
        do {
            return try Castd_V1_Frame(serializedBytes: Array(body.readableBytesView))
        } catch {
            throw CastdError(.invalidArgument, "malformed castd.v1 frame: \(error)")
        }
    }
}

/// Where a method is found on the wire, and by what. The methods themselves, their kinds and the
/// access each needs are generated from cast.proto (`Generated/cast.methods.swift`).
extension CastdMethod {
    /// "/castd.v1.Cast/Load"
    public var path: String { "/\(CastdRPC.serviceName)/\(rawValue)" }

    /// The method named by `path` (as `path` spells it), or nil. A table, not string surgery:
    /// castd looks up every call's method this way.
    public init?(path: String) {
        guard let method = Self.byPath[path] else { return nil }
        self = method
    }

    private static let byPath = Dictionary(uniqueKeysWithValues: allCases.map { ($0.path, $0) })
}

/// A unary method of castd.v1.Cast with its request and response types (`CastdMethods.pause`):
/// castd's router registers a handler by it, and clients call by it, so that a request or an
/// answer of the wrong type does not compile.
public struct CastdUnaryMethod<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>: Sendable {
    public let method: CastdMethod

    init(_ method: CastdMethod) {
        self.method = method
    }
}

/// A server-streaming method of castd.v1.Cast with its request and response types
/// (`CastdMethods.watch`).
public struct CastdServerStreamingMethod<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>: Sendable {
    public let method: CastdMethod

    init(_ method: CastdMethod) {
        self.method = method
    }
}

public typealias CastdCode = Castd_V1_Code

/// An error with a gRPC canonical status code and a message for people: what every castd.v1
/// call ends with when it does not succeed.
public struct CastdError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: CastdCode
    public var message: String
    /// For programs: "REPLACED", "DEVICE_ERROR" or "" (see `Castd_V1_Status.reason`).
    public var reason: String
    /// The device's own error, when the device refused the request.
    public var deviceError: Castd_V1_DeviceError?

    public init(_ code: CastdCode, _ message: String, reason: String = "", deviceError: Castd_V1_DeviceError? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
        self.deviceError = deviceError
    }

    public init(status: Castd_V1_Status) {
        self.init(
            status.code, status.message, reason: status.reason,
            deviceError: status.hasDeviceError ? status.deviceError : nil)
    }

    public var status: Castd_V1_Status {
        var status = Castd_V1_Status()
        status.code = code
        status.message = message
        status.reason = reason
        if let deviceError { status.deviceError = deviceError }
        return status
    }

    /// A request superseded by a newer one of the same kind.
    public static func replaced(_ message: String) -> CastdError {
        CastdError(.aborted, message, reason: Reason.replaced)
    }

    public enum Reason {
        public static let replaced = "REPLACED"
        public static let deviceError = "DEVICE_ERROR"
    }

    public var description: String { "\(code.name): \(message)" }
}

extension CastdCode {
    /// The canonical upper-case name, as gRPC spells it ("NOT_FOUND").
    public var name: String {
        switch self {
        case .ok: return "OK"
        case .cancelled: return "CANCELLED"
        case .unknown: return "UNKNOWN"
        case .invalidArgument: return "INVALID_ARGUMENT"
        case .deadlineExceeded: return "DEADLINE_EXCEEDED"
        case .notFound: return "NOT_FOUND"
        case .alreadyExists: return "ALREADY_EXISTS"
        case .permissionDenied: return "PERMISSION_DENIED"
        case .resourceExhausted: return "RESOURCE_EXHAUSTED"
        case .failedPrecondition: return "FAILED_PRECONDITION"
        case .aborted: return "ABORTED"
        case .outOfRange: return "OUT_OF_RANGE"
        case .unimplemented: return "UNIMPLEMENTED"
        case .internal: return "INTERNAL"
        case .unavailable: return "UNAVAILABLE"
        case .dataLoss: return "DATA_LOSS"
        case .unauthenticated: return "UNAUTHENTICATED"
        case .UNRECOGNIZED(let n): return "CODE_\(n)"
        }
    }
}

/// Where a client finds the daemon's socket: `--socket PATH`, else `$CASTD_SOCKET`, else the
/// desktop session's daemon at `$XDG_RUNTIME_DIR/castd/castd.sock` if it is there, else the
/// system daemon's `/run/castd/castd.sock` if that is there, else the session's path (so that
/// the error names the socket a user would start).
public enum CastdSocketPath {
    public static let system = "/run/castd/castd.sock"

    public static func resolve(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
    ) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let path = environment["CASTD_SOCKET"], !path.isEmpty { return path }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return system }
        let user = runtime + "/castd/castd.sock"
        if !exists(user) && exists(system) { return system }
        return user
    }

    /// The files socket beside the RPC socket at `socketPath` (rpc.proto: "The files socket").
    public static func files(forSocket socketPath: String) -> String { socketPath + filesSuffix }

    /// What the files socket's path ends in: the RPC socket's path is the rest.
    public static let filesSuffix = ".files"
}
