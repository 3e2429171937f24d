import CSystemd

/// A connection that receives the signals a match rule selects: how a D-Bus client sees a
/// player's PropertiesChanged. For castd-bench's latency figure and for tests; cast-mpris itself
/// only sends signals.
public final class BusSignalWatch: @unchecked Sendable {
    /// The signal's interface and member, and for PropertiesChanged the names of the properties
    /// that changed (empty for other signals).
    public typealias Handler = @Sendable (_ interface: String, _ member: String, _ changed: [String]) -> Void

    private let loop: BusLoop
    /// Touched on the loop's thread only.
    private var bus: OpaquePointer?
    private var slot: OpaquePointer?
    private let handler: Handler

    private init(loop: BusLoop, handler: @escaping Handler) {
        self.loop = loop
        self.handler = handler
    }

    /// Connects to the bus at `address` (nil: the session bus) on `loop`, and calls `handler`, on
    /// the loop's thread, for each signal that `match` (a D-Bus match rule) selects.
    public static func start(
        loop: BusLoop, address: String?, match: String, handler: @escaping Handler
    ) async throws(BusError) -> BusSignalWatch {
        let watch = BusSignalWatch(loop: loop, handler: handler)
        let result: Result<Void, BusError> = await withCheckedContinuation { continuation in
            loop.post {
                do throws(BusError) {
                    try watch.open(address: address, match: match)
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        try result.get()
        return watch
    }

    /// Closes the connection (on the loop).
    public func close() {
        loop.post { [self] in
            if let slot { sd_bus_slot_unref(slot) }
            if let bus { sd_bus_flush_close_unref(bus) }
            slot = nil
            bus = nil
        }
    }

    /// The property names of a PropertiesChanged signal (`s a{sv} as`), or none if it does not read.
    private static func changedNames(_ message: OpaquePointer) -> [String] {
        let reader = BusMessageReader(message: message)
        var names: [String] = []
        do throws(BusError) {
            _ = try reader.readString()
            try check(sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sv}"), "enter a{sv}")
            while sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sv") > 0 {
                names.append(try reader.readString())
                try check(sd_bus_message_skip(message, "v"), "skip a value")
                try check(sd_bus_message_exit_container(message), "leave an entry")
            }
        } catch {
            return names
        }
        return names
    }

    private func open(address: String?, match: String) throws(BusError) {
        var bus: OpaquePointer? = nil
        if let address {
            try check(sd_bus_new(&bus), "create a bus connection")
            self.bus = bus
            try check(sd_bus_set_address(bus, address), "use the bus at \(address)")
            try check(sd_bus_set_bus_client(bus, 1), "be a bus client")
            try check(sd_bus_start(bus), "connect to \(address)")
        } else {
            try check(sd_bus_open_user(&bus), "connect to the session bus")
            self.bus = bus
        }
        try check(sd_bus_attach_event(bus, loop.event, 0), "attach the bus to the event loop")
        var slot: OpaquePointer? = nil
        try check(
            sd_bus_add_match(
                bus, &slot, match,
                { message, userdata, _ in
                    let watch = Unmanaged<BusSignalWatch>.fromOpaque(userdata!).takeUnretainedValue()
                    let interface = sd_bus_message_get_interface(message).map { String(cString: $0) } ?? ""
                    let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
                    let changed = member == "PropertiesChanged" ? BusSignalWatch.changedNames(message!) : []
                    watch.handler(interface, member, changed)
                    return 0
                }, Unmanaged.passUnretained(self).toOpaque()), "add the match \(match)")
        self.slot = slot
    }
}
