import CSystemd
import Glibc

/// What an object exported on the bus answers: its properties, and its methods. Called on the
/// loop's thread only.
protocol BusObjectHandler: AnyObject {
    /// The introspection XML of the object.
    var introspection: String { get }
    /// All the properties of `interface`, or nil if the object has no such interface.
    func properties(of interface: String) -> [(String, BusValue)]?
    /// Sets a writable property; answers through `reply` (now or later).
    func setProperty(_ name: String, of interface: String, to value: BusValue, reply: BusReply)
    /// Runs a method of the object's own interfaces; answers through `reply` (now or later).
    /// Throws for arguments it cannot read, which the caller answers as an error.
    func call(_ member: String, of interface: String, arguments: BusMessageReader, reply: BusReply) throws(BusError)
}

/// One connection to the session bus that owns one well-known name and exports one object.
///
/// Every MPRIS2 player is the object `/org/mpris/MediaPlayer2` of a bus name of its own, and
/// clients tell players apart by the connection that sends their signals: so each player gets a
/// connection of its own, as the players of KDE Connect and mpris-proxy do. Created, used and
/// closed on the loop's thread.
final class BusObjectConnection {
    let name: String
    let path: String
    private var bus: OpaquePointer?
    private var slots: [OpaquePointer] = []
    private weak var handler: (any BusObjectHandler)?
    private let loop: BusLoop
    private let onNameResult: (Result<Void, BusError>) -> Void

    /// Connects to the user's session bus (`$DBUS_SESSION_BUS_ADDRESS`, else the user's bus in
    /// `$XDG_RUNTIME_DIR`), exports the object at `path` and asks for `name`.
    init(
        loop: BusLoop, name: String, path: String, handler: any BusObjectHandler,
        onNameResult: @escaping (Result<Void, BusError>) -> Void
    ) throws(BusError) {
        self.name = name
        self.path = path
        self.handler = handler
        self.onNameResult = onNameResult
        self.loop = loop
        var bus: OpaquePointer? = nil
        try check(sd_bus_open_user(&bus), "connect to the session bus")
        self.bus = bus
        do throws(BusError) {
            try check(sd_bus_attach_event(bus, loop.event, 0), "attach the bus to the event loop")
            let me = Unmanaged.passUnretained(self).toOpaque()
            var slot: OpaquePointer? = nil
            try check(
                sd_bus_add_object(
                    bus, &slot, path,
                    { message, userdata, _ in
                        Unmanaged<BusObjectConnection>.fromOpaque(userdata!).takeUnretainedValue().handle(message!)
                    }, me), "export \(path)")
            slots.append(slot!)
            try check(
                sd_bus_request_name_async(
                    bus, &slot, name, 0,
                    { message, userdata, _ in
                        Unmanaged<BusObjectConnection>.fromOpaque(userdata!).takeUnretainedValue().nameReply(message!)
                        return 0
                    }, me), "ask for the name \(name)")
            slots.append(slot!)
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Releases the name and the object, and closes the connection.
    func close() {
        for slot in slots { sd_bus_slot_unref(slot) }
        slots.removeAll()
        if let bus { sd_bus_flush_close_unref(bus) }
        bus = nil
    }

    /// Sends the signal `member` of `interface` from the object, with `arguments`.
    func emit(_ member: String, of interface: String, _ arguments: [BusValue]) throws(BusError) {
        guard let bus else { return }
        var message: OpaquePointer? = nil
        try check(sd_bus_message_new_signal(bus, &message, path, interface, member), "create the signal \(member)")
        defer { sd_bus_message_unref(message) }
        let writer = BusMessageWriter(message: message!)
        for argument in arguments { try writer.append(argument) }
        try check(sd_bus_send(bus, message, nil), "send the signal \(member)")
    }

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` for `changed` properties of `interface`.
    func emitPropertiesChanged(of interface: String, _ changed: [(String, BusValue)]) throws(BusError) {
        try emit(
            "PropertiesChanged", of: "org.freedesktop.DBus.Properties",
            [.string(interface), .dictionary(changed), .strings([])])
    }

    private func nameReply(_ message: OpaquePointer) {
        if let error = sd_bus_message_get_error(message), error.pointee.name != nil {
            let text = error.pointee.message.map { String(cString: $0) } ?? ""
            onNameResult(.failure(BusError(name: String(cString: error.pointee.name), message: text)))
            return
        }
        var code: UInt32 = 0
        let read = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &code)
        // 1: the primary owner; 2: queued; 3: somebody else owns it; 4: already ours.
        if read >= 0, code == 1 || code == 4 {
            onNameResult(.success(()))
        } else {
            onNameResult(
                .failure(.failed("the name \(name) is owned by another connection (RequestName answered \(code))")))
        }
    }

    /// Answers a method call on the object. Returns 1: every call is answered here, at once or
    /// later through its ``BusReply``.
    private func handle(_ message: OpaquePointer) -> Int32 {
        guard let handler else { return 0 }
        let interface = sd_bus_message_get_interface(message).map { String(cString: $0) } ?? ""
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        let reply = BusReply(call: message, loop: loop)
        let arguments = BusMessageReader(message: message)
        do throws(BusError) {
            switch (interface, member) {
            case ("org.freedesktop.DBus.Properties", "Get"):
                let interface = try arguments.readString()
                let property = try arguments.readString()
                guard let properties = handler.properties(of: interface) else { throw .unknownInterface(interface) }
                guard let value = properties.first(where: { $0.0 == property })?.1 else {
                    throw .unknownProperty(property, interface)
                }
                reply.succeed([value], inVariant: true)
            case ("org.freedesktop.DBus.Properties", "GetAll"):
                let interface = try arguments.readString()
                guard let properties = handler.properties(of: interface) else { throw .unknownInterface(interface) }
                reply.succeed([.dictionary(properties)])
            case ("org.freedesktop.DBus.Properties", "Set"):
                let interface = try arguments.readString()
                let property = try arguments.readString()
                let value = try arguments.readVariant()
                handler.setProperty(property, of: interface, to: value, reply: reply)
            case ("org.freedesktop.DBus.Introspectable", "Introspect"):
                reply.succeed([.string(handler.introspection)])
            default:
                try handler.call(member, of: interface, arguments: arguments, reply: reply)
            }
        } catch {
            reply.fail(error)
        }
        return 1
    }
}

extension BusError {
    static func unknownInterface(_ interface: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownInterface", message: "no interface \(interface) here")
    }

    static func unknownProperty(_ property: String, _ interface: String) -> BusError {
        BusError(
            name: "org.freedesktop.DBus.Error.UnknownProperty", message: "\(interface) has no property \(property)")
    }

    static func unknownMethod(_ member: String, _ interface: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "\(interface) has no method \(member)")
    }

    static func propertyReadOnly(_ property: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(property) is read-only")
    }
}

/// The answer owed to one method call: a return or an error, given once, on the loop's thread
/// (post to the ``BusLoop`` from elsewhere). A call never answered is answered with an error
/// when its reply is released, so that no caller waits for its D-Bus timeout.
final class BusReply: @unchecked Sendable {
    private var call: OpaquePointer?
    private let loop: BusLoop?

    init(call: OpaquePointer, loop: BusLoop? = nil) {
        self.call = sd_bus_message_ref(call)
        self.loop = loop
    }

    deinit {
        guard let call else { return }
        let pending = UnsafeSendable(call)
        let answer = { @Sendable in
            var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
            sd_bus_error_set(&error, "org.freedesktop.DBus.Error.Failed", "cast-mpris dropped this call")
            sd_bus_reply_method_error(pending.value, &error)
            sd_bus_error_free(&error)
            sd_bus_message_unref(pending.value)
        }
        if let loop, !loop.isCurrent { loop.post(answer) } else { answer() }
    }

    /// Answers with `values` (each in a variant if `inVariant`).
    func succeed(_ values: [BusValue] = [], inVariant: Bool = false) {
        guard let call else { return }
        self.call = nil
        defer { sd_bus_message_unref(call) }
        var reply: OpaquePointer? = nil
        guard sd_bus_message_new_method_return(call, &reply) >= 0, let reply else { return }
        defer { sd_bus_message_unref(reply) }
        let writer = BusMessageWriter(message: reply)
        do throws(BusError) {
            for value in values {
                if inVariant { try writer.appendVariant(value) } else { try writer.append(value) }
            }
        } catch {
            self.call = sd_bus_message_ref(call)
            fail(error)
            return
        }
        _ = sd_bus_send(nil, reply, nil)
    }

    /// Answers with the D-Bus error `error`, its name and message made valid for D-Bus
    /// (``BusText``): a message with a character sd-bus refuses would make the reply fail, and
    /// the caller wait for its timeout. Should the reply fail all the same, a plain Failed goes.
    func fail(_ error: BusError) {
        guard let call else { return }
        self.call = nil
        var busError = sd_bus_error(name: nil, message: nil, _need_free: 0)
        sd_bus_error_set(&busError, BusText.errorName(error.name), BusText.valid(error.message))
        if sd_bus_reply_method_error(call, &busError) < 0 {
            sd_bus_error_free(&busError)
            sd_bus_error_set(&busError, "org.freedesktop.DBus.Error.Failed", "cast-mpris could not send its error")
            sd_bus_reply_method_error(call, &busError)
        }
        sd_bus_error_free(&busError)
        sd_bus_message_unref(call)
    }
}

/// A value handed between threads by a protocol of our own (here: only the loop touches it).
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
