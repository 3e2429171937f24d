import ArgumentParser
import CastClient

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the Cast devices castd knows, or forget a device's pinned key.",
        usage: GlobalOptions.usage("devices", "[list] [--app <app-id> ...] [--capability <capability> ...]")
            + "\n" + GlobalOptions.usage("devices forget", "<device>"),
        discussion: """
            Without a subcommand, `castc devices` lists the devices (castc devices list --help).

            castd pins the key each device first proves it holds (device authentication), and \
            refuses a device that later proves another: some other device answering for it. \
            When you know why the key changed (the device was replaced or reset), \
            `castc devices forget DEVICE` forgets the pin; castd tries the device again at once \
            and pins the key it proves then.

            Examples:
              castc devices
              castc devices --capability video-out
              castc devices forget "Living Room TV"
            """,
        subcommands: [DevicesListCommand.self, DevicesForgetCommand.self],
        defaultSubcommand: DevicesListCommand.self
    )
}

struct DevicesForgetCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget the key castd pinned for a device, and try the device again.",
        usage: GlobalOptions.usage("devices forget", "<device>"),
        discussion: """
            For a device castd refuses because it proved another key than the one it first \
            authenticated with ("another key than the one castd pinned"), once you know why: \
            the device was replaced, or reset. castd tries the device again at once and pins \
            the key it proves then.

            Examples:
              castc devices forget "Living Room TV"
              castc devices forget 4d6e0c3f9a1b2c3d4e5f60718293a4b5
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("The device: its name or id (castc devices lists them).", valueName: "device"))
    var device: String

    func validate() throws {
        if device.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("name the device whose pinned key castd should forget")
        }
    }

    func run() async throws {
        let forgotten = try await options.withClient { client in try await client.forgetDevice(device) }
        try options.print(forgotten) {
            "Forgot the key pinned for \(DeviceTable.plainName(forgotten)); castd is trying it again and will pin the key it proves"
        }
    }
}

struct DevicesListCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the Cast devices castd knows (what `castc devices` does).",
        usage: GlobalOptions.usage("devices list", "[--app <app-id> ...] [--capability <capability> ...]"),
        discussion: """
            Devices found on the local network (mDNS) and those given to castd by address, sorted \
            by name: name, model, address, connection state and the app each one runs. Speaker \
            groups are marked (group), with their members below them. --device narrows the \
            list to the device it names. With no device, castc says why (discovery off, Avahi \
            out of reach, no network interface for mDNS, no answer) and what to try.

            --app lists only devices that can run the app (castd asks each device, which takes \
            a moment); --capability only devices that can do that: video-out (a screen), \
            video-in, audio-out (speakers), audio-in (a microphone), group (speaker groups). \
            Both repeat; a device must meet every one. A castd set to list only the devices \
            that can run its default app (launch.filter_devices) says so under the list; --all \
            lists every device.

            Examples:
              castc devices
              castc devices --app 233637DE
              castc devices --capability video-out
              castc devices --capability audio-out --capability group
              castc devices --json | jq -r '.devices[].friendlyName'
              castc devices list --device kitchen
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(
        name: .customLong("app"),
        help: ArgumentHelp("Only devices that can run this receiver app (repeatable).", valueName: "app-id"))
    var appIDs: [String] = []

    @Option(
        name: .customLong("capability"),
        help: ArgumentHelp("Only devices with this capability (repeatable).", valueName: "capability"))
    var capabilities: [CapabilityArgument] = []

    @Flag(help: "Every device, even when castd lists only those that can run its default app.")
    var all = false

    func validate() throws {
        if let bad = appIDs.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw ValidationError("--app '\(bad)' is not an app id: give one such as CC1AD845")
        }
        if all, !appIDs.isEmpty { throw ValidationError("--all lists every device; leave out --app, or --all") }
    }

    func call() -> CastcCall<Castd_V1_ListDevicesRequest, Castd_V1_ListDevicesResponse> {
        var request = Castd_V1_ListDevicesRequest()
        request.appIds = appIDs
        request.capabilities = capabilities.reduce(into: CastdDeviceCapabilities()) { $0.formUnion($1.castd) }.rawValue
        request.all = all
        return CastcCall(CastdMethods.listDevices, request)
    }

    func run() async throws {
        var response = try await options.send(call())
        if let selector = options.device {
            response.devices = try DeviceFilter.devices(response.devices, matching: selector)
        }
        let criterion = response.criterionAppIds
        let filtered = !appIDs.isEmpty || !capabilities.isEmpty || !criterion.isEmpty
        // None: why not, from castd's discovery (one more call, only then).
        var help: String?
        if response.devices.isEmpty, !filtered, !options.json {
            let status = try await options.send(CastcCall(CastdMethods.getStatus, Castd_V1_GetStatusRequest()))
            help = NoDevicesHelp.explain(status.daemon)
        }
        try options.print(response) {
            var text = help ?? DeviceTable.render(response.devices, filtered: filtered)
            if !criterion.isEmpty { text += "\n" + DeviceTable.criterionNote(criterion) }
            return text
        }
    }
}
