import ArgumentParser
import CastClient

struct DevicesCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the Cast devices castd knows.",
        discussion: """
            Devices found on the local network (mDNS) and those given to castd by address, sorted \
            by name: name, model, address, connection state and the app each one runs. \
            --device narrows the list to the device it names.

            Examples:
              castc devices
              castc devices --json | jq -r '.devices[].friendlyName'
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        var devices = try await options.withClient { try await $0.listDevices() }
        if let selector = options.device { devices = try DeviceFilter.devices(devices, matching: selector) }
        var response = Castd_V1_ListDevicesResponse()
        response.devices = devices
        try options.print(response) { DeviceTable.render(devices) }
    }
}
