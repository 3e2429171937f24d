import ArgumentParser
import CastClient

struct DevicesCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the Cast devices castd knows.",
        usage: GlobalOptions.usage("devices", "[--app <app-id> ...] [--capability <capability> ...]"),
        discussion: """
            Devices found on the local network (mDNS) and those given to castd by address, sorted \
            by name: name, model, address, connection state and the app each one runs. Speaker \
            groups are marked (group), with their members below them. --device narrows the \
            list to the device it names.

            --app lists only devices that can run the app (castd asks each device, which takes \
            a moment); --capability only devices that can do that: video-out (a screen), \
            video-in, audio-out (speakers), audio-in (a microphone), group (speaker groups). \
            Both repeat; a device must meet every one.

            Examples:
              castc devices
              castc devices --app 233637DE
              castc devices --capability video-out
              castc devices --capability audio-out --capability group
              castc devices --json | jq -r '.devices[].friendlyName'
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

    func validate() throws {
        if let bad = appIDs.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw ValidationError("--app '\(bad)' is not an app id: give one such as CC1AD845")
        }
    }

    func call() -> CastcCall<Castd_V1_ListDevicesRequest, Castd_V1_ListDevicesResponse> {
        var request = Castd_V1_ListDevicesRequest()
        request.appIds = appIDs
        request.capabilities = capabilities.reduce(into: CastdDeviceCapabilities()) { $0.formUnion($1.castd) }.rawValue
        return CastcCall(.listDevices, request)
    }

    func run() async throws {
        var response = try await options.send(call())
        if let selector = options.device {
            response.devices = try DeviceFilter.devices(response.devices, matching: selector)
        }
        let filtered = !appIDs.isEmpty || !capabilities.isEmpty
        try options.print(response) { DeviceTable.render(response.devices, filtered: filtered) }
    }
}
