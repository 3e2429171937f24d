import CastdAPI
import Logging
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One device's MPRIS2 player on the session bus: a connection of its own that owns
/// `org.mpris.MediaPlayer2.castd.<id>` and exports `/org/mpris/MediaPlayer2`. Lives on the
/// ``BusLoop``'s thread: created, updated and closed there.
final class MPRISPlayer: BusObjectHandler {
    typealias Perform = (_ action: MPRISAction, _ deviceID: String, _ reply: BusReply) -> Void

    let deviceID: String
    let busName: String
    private(set) var snapshot: MPRISPlayerSnapshot
    private var rootProperties: [(String, BusValue)]
    private var playerProperties: [(String, BusValue)]
    private var connection: BusObjectConnection?
    private let loop: BusLoop
    private let perform: Perform
    private let logger: Logger

    init(
        loop: BusLoop, snapshot: MPRISPlayerSnapshot, logger: Logger, perform: @escaping Perform
    ) throws(BusError) {
        deviceID = snapshot.device.id
        busName = MPRISBusName.name(forDeviceID: deviceID)
        self.snapshot = snapshot
        self.loop = loop
        self.perform = perform
        self.logger = logger
        rootProperties = MPRISProperties.root(snapshot)
        playerProperties = MPRISProperties.player(snapshot)
        logCutTexts(snapshot.media, previous: nil)
        let name = busName
        connection = try BusObjectConnection(
            loop: loop, name: name, path: MPRISProperties.objectPath, handler: self
        ) { [logger] result in
            switch result {
            case .success: logger.info("\(name): on the session bus")
            case .failure(let error): logger.warning("\(name): not on the session bus: \(error)")
            }
        }
    }

    /// Shows `new`: emits PropertiesChanged with what changed, on each interface, and Seeked when
    /// the position jumped.
    func update(_ new: MPRISPlayerSnapshot) {
        let old = snapshot
        snapshot = new
        logCutTexts(new.media, previous: old.media)
        let root = MPRISProperties.root(new)
        let player = MPRISProperties.player(new)
        let rootChanges = MPRISProperties.changes(from: rootProperties, to: root)
        let playerChanges = MPRISProperties.changes(from: playerProperties, to: player)
        rootProperties = root
        playerProperties = player
        guard let connection else { return }
        do throws(BusError) {
            if !rootChanges.isEmpty {
                try connection.emitPropertiesChanged(of: MPRISProperties.rootInterface, rootChanges)
            }
            if !playerChanges.isEmpty {
                try connection.emitPropertiesChanged(of: MPRISProperties.playerInterface, playerChanges)
            }
            if let position = MPRISProperties.seekedPosition(from: old.media, to: new.media) {
                try connection.emit("Seeked", of: MPRISProperties.playerInterface, [.int64(position)])
            }
        } catch {
            logger.warning("\(busName): cannot signal a change: \(error)")
        }
    }

    /// Says once per media which of its texts clients get cut: a device (or an app) that sends
    /// a title of 60 KiB is worth a line, not a line per status.
    private func logCutTexts(_ media: CastdMediaStatus, previous: CastdMediaStatus?) {
        guard previous?.media.metadata != media.media.metadata else { return }
        for (field, bytes) in MPRISProperties.cutTexts(media) {
            let what = "\(field) is \(bytes) bytes or holds a NUL or a character D-Bus refuses"
            logger.notice(
                "\(busName): \(what); D-Bus clients get it cut to \(BusText.maximumBytes) bytes, such characters as U+FFFD"
            )
        }
    }

    /// Leaves the bus: the name is released, and clients see the player go.
    func close() {
        connection?.close()
        connection = nil
    }

    // MARK: BusObjectHandler

    var introspection: String { MPRISIntrospection.xml }

    func properties(of interface: String) -> [(String, BusValue)]? {
        switch interface {
        case MPRISProperties.rootInterface:
            return rootProperties
        case MPRISProperties.playerInterface:
            // Position is read live: castd's last position moved on by the time since, at the rate.
            var properties = playerProperties
            properties.append(("Position", .int64(MPRISProperties.position(snapshot.media))))
            return properties
        default:
            return nil
        }
    }

    func setProperty(_ name: String, of interface: String, to value: BusValue, reply: BusReply) {
        let call: MPRISCall
        switch (interface, name, value) {
        case (MPRISProperties.playerInterface, "LoopStatus", .string(let status)): call = .setLoopStatus(status)
        case (MPRISProperties.playerInterface, "Shuffle", .bool(let on)): call = .setShuffle(on)
        case (MPRISProperties.playerInterface, "Rate", .double(let rate)): call = .setRate(rate)
        case (MPRISProperties.playerInterface, "Volume", .double(let level)): call = .setVolume(level)
        case (MPRISProperties.playerInterface, "LoopStatus", _), (MPRISProperties.playerInterface, "Shuffle", _),
            (MPRISProperties.playerInterface, "Rate", _), (MPRISProperties.playerInterface, "Volume", _):
            reply.fail(.invalidArguments("\(name) of type \(value.signature) is not accepted"))
            return
        default:
            guard properties(of: interface) != nil else { return reply.fail(.unknownInterface(interface)) }
            guard properties(of: interface)!.contains(where: { $0.0 == name }) else {
                return reply.fail(.unknownProperty(name, interface))
            }
            reply.fail(.propertyReadOnly(name))
            return
        }
        run(call, reply: reply)
    }

    func call(_ member: String, of interface: String, arguments: BusMessageReader, reply: BusReply) throws(BusError) {
        if interface == MPRISProperties.rootInterface {
            switch member {
            case "Raise", "Quit":
                // CanRaise and CanQuit are false: the specification has these do nothing.
                reply.succeed()
                return
            default:
                throw .unknownMethod(member, interface)
            }
        }
        guard interface == MPRISProperties.playerInterface else { throw .unknownInterface(interface) }
        let call: MPRISCall
        switch member {
        case "Play": call = .play
        case "Pause": call = .pause
        case "PlayPause": call = .playPause
        case "Stop": call = .stop
        case "Next": call = .next
        case "Previous": call = .previous
        case "Seek": call = .seek(offset: try arguments.readInt64())
        case "SetPosition":
            let trackID = try arguments.readObjectPath()
            call = .setPosition(trackID: trackID, position: try arguments.readInt64())
        case "OpenUri": call = .openURI(try arguments.readString())
        default: throw .unknownMethod(member, interface)
        }
        run(call, reply: reply)
    }

    private func run(_ call: MPRISCall, reply: BusReply) {
        do throws(BusError) {
            guard let action = try MPRISProperties.action(for: call, on: snapshot) else {
                logger.debug("\(busName): \(call) has no effect now")
                reply.succeed()
                return
            }
            logger.debug("\(busName): \(call) → \(action)")
            perform(action, deviceID, reply)
        } catch {
            reply.fail(error)
        }
    }
}

/// What `org.freedesktop.DBus.Introspectable.Introspect` answers for `/org/mpris/MediaPlayer2`.
enum MPRISIntrospection {
    static let xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface" type="s" direction="in"/><arg name="property" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface" type="s" direction="in"/><arg name="property" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface" type="s"/><arg name="changed" type="a{sv}"/><arg name="invalidated" type="as"/>
            </signal>
          </interface>
          <interface name="org.mpris.MediaPlayer2">
            <method name="Raise"/>
            <method name="Quit"/>
            <property name="CanQuit" type="b" access="read"/>
            <property name="CanRaise" type="b" access="read"/>
            <property name="HasTrackList" type="b" access="read"/>
            <property name="Identity" type="s" access="read"/>
            <property name="DesktopEntry" type="s" access="read"/>
            <property name="SupportedUriSchemes" type="as" access="read"/>
            <property name="SupportedMimeTypes" type="as" access="read"/>
          </interface>
          <interface name="org.mpris.MediaPlayer2.Player">
            <method name="Next"/>
            <method name="Previous"/>
            <method name="Pause"/>
            <method name="PlayPause"/>
            <method name="Stop"/>
            <method name="Play"/>
            <method name="Seek"><arg name="Offset" type="x" direction="in"/></method>
            <method name="SetPosition">
              <arg name="TrackId" type="o" direction="in"/><arg name="Position" type="x" direction="in"/>
            </method>
            <method name="OpenUri"><arg name="Uri" type="s" direction="in"/></method>
            <signal name="Seeked"><arg name="Position" type="x"/></signal>
            <property name="PlaybackStatus" type="s" access="read"/>
            <property name="LoopStatus" type="s" access="readwrite"/>
            <property name="Rate" type="d" access="readwrite"/>
            <property name="Shuffle" type="b" access="readwrite"/>
            <property name="Metadata" type="a{sv}" access="read"/>
            <property name="Volume" type="d" access="readwrite"/>
            <property name="Position" type="x" access="read"/>
            <property name="MinimumRate" type="d" access="read"/>
            <property name="MaximumRate" type="d" access="read"/>
            <property name="CanGoNext" type="b" access="read"/>
            <property name="CanGoPrevious" type="b" access="read"/>
            <property name="CanPlay" type="b" access="read"/>
            <property name="CanPause" type="b" access="read"/>
            <property name="CanSeek" type="b" access="read"/>
            <property name="CanControl" type="b" access="read"/>
          </interface>
        </node>
        """
}
