/// What `AvahiBrowser.events()` reports, in order.
public enum DiscoveryEvent: Sendable, Equatable {
    /// A device appeared (its first service instance resolved).
    case added(DiscoveredDevice)
    /// Something about a known device changed (TXT, address, port, the instance that represents it).
    case updated(DiscoveredDevice)
    /// The last service instance of this device went away.
    case removed(id: String)
    /// Avahi cannot be used, e.g. "Avahi is not running (avahi_client_new: Daemon not running)".
    /// Reported once per outage; the browser keeps trying to reconnect.
    case unavailable(reason: String)
    /// Avahi is reachable: the first event of a browse that could connect, and the end of an outage.
    case available
}
