import CastdAPI

/// Discovery's state, as `castc status` shows it.
public enum DiscoveryState: Sendable, Equatable {
    case off
    case starting
    case running
    case unavailable(String)

    /// As castd.v1 says it.
    public var api: Castd_V1_DiscoveryState {
        switch self {
        case .off: .off
        case .starting: .starting
        case .running: .running
        case .unavailable: .unavailable
        }
    }

    /// Why discovery is unavailable; empty in the other states.
    public var reason: String {
        if case .unavailable(let reason) = self { reason } else { "" }
    }

    public var description: String {
        switch self {
        case .off: return "off (--no-discovery)"
        case .starting: return "starting"
        case .running: return "running (Avahi reachable)"
        case .unavailable(let reason): return "unavailable: \(reason)"
        }
    }
}
