import ArgumentParser
import CastClient

struct VolumeCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Show or set a device's volume, or the stream's.",
        usage: GlobalOptions.usage(
            "volume", "[<level> | up | down] [--steps <n>]", "[--mute | --unmute] [--stream]"),
        discussion: """
            Without a level, prints the device's volume: its level, whether it is muted, how \
            much one press of its volume buttons changes it (its step), or that it is fixed (a \
            device whose volume is set elsewhere, e.g. on an amplifier).

            A level is 0 to 1 or a percentage. up and down change the volume as the device's \
            volume buttons do, one step, or --steps presses.

            --stream sets (or shows) the volume of the stream that plays instead of the \
            device's: a level, --mute or --unmute (the stream has no steps).

            Examples:
              castc volume
              castc volume 0.4
              castc volume 40%
              castc volume up
              castc volume down --steps 3
              castc volume --mute
              castc volume 25% --unmute
              castc volume 80% --stream
            """
    )

    enum Muting: String, EnumerableFlag {
        case mute, unmute

        static func help(for value: Muting) -> ArgumentHelp? {
            value == .mute ? "Mute (the device, or with --stream the stream)." : "Unmute."
        }
    }

    /// What the command does.
    enum Action: Equatable {
        /// Print the device's (or with `stream`, the stream's) volume.
        case show(stream: Bool)
        /// SetVolume with this request.
        case setDevice(Castd_V1_SetVolumeRequest)
        /// SetStreamVolume with this request.
        case setStream(Castd_V1_SetVolumeRequest)
    }

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("0 to 1 (0.4), 0% to 100% (40%), up or down.", valueName: "level"))
    var level: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("With up or down: how many steps (1 to 100). Default: 1.", valueName: "n"))
    var steps: Int32?

    @Flag(exclusivity: .exclusive)
    var muting: Muting?

    @Flag(help: "The stream's volume instead of the device's.")
    var stream = false

    func validate() throws {
        _ = try action()
    }

    func action() throws -> Action {
        let direction: Int32? =
            switch level?.lowercased() {
            case "up": 1
            case "down": -1
            default: nil
            }
        if let steps {
            guard direction != nil else {
                throw ValidationError(
                    "--steps goes with up or down: castc volume up --steps \(max(1, min(100, steps.magnitude)))")
            }
            guard (1...100).contains(steps) else {
                throw ValidationError("--steps \(steps) is out of range: give 1 to 100")
            }
        }
        var request = Castd_V1_SetVolumeRequest()
        request.device = options.deviceSelector
        if let direction {
            if stream {
                throw ValidationError(
                    "the stream's volume has no steps: give --stream a level (castc volume 60% --stream), or leave --stream out"
                )
            }
            if muting != nil { throw ValidationError("give up/down or --mute/--unmute, not both") }
            request.steps = direction * (steps ?? 1)
            return .setDevice(request)
        }
        if let level { request.level = try VolumeLevel.parse(level) }
        if let muting { request.muted = muting == .mute }
        guard request.hasLevel || request.hasMuted else { return .show(stream: stream) }
        return stream ? .setStream(request) : .setDevice(request)
    }

    func run() async throws {
        try await Self.perform(action(), options: options)
    }

    /// Carries out `action` and prints the volume it shows or leaves.
    static func perform(_ action: Action, options: GlobalOptions) async throws {
        switch action {
        case .show(stream: false):
            let (name, volume) = try await options.withClient { client in
                try await DeviceVolume.find(client: client, selector: options.deviceSelector)
            }
            try options.print(volume) { "\(name): volume \(MediaSummary.deviceVolume(volume))" }
        case .show(stream: true):
            let status = try await options.send(
                CastcCall(CastdMethods.requestMediaStatus, options.mediaRequest))
            try options.print(status.volume) {
                status.hasVolume
                    ? "stream volume " + MediaSummary.volume(status.volume) : "the stream has no volume of its own"
            }
        case .setDevice(let request):
            let volume = try await options.send(CastcCall(CastdMethods.setVolume, request))
            try options.print(volume) { "volume " + MediaSummary.deviceVolume(volume) }
        case .setStream(let request):
            let status = try await options.send(CastcCall(CastdMethods.setStreamVolume, request))
            try options.print(status) { "stream volume " + MediaSummary.volume(status.volume) }
        }
    }
}

struct MuteCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Mute a device (or with --stream, the stream).",
        usage: GlobalOptions.usage("mute", "[--stream]"),
        discussion: """
            Examples:
              castc mute
              castc mute --device kitchen
              castc mute --stream
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Mute the stream that plays instead of the device.")
    var stream = false

    func call() -> CastcCall<Castd_V1_SetVolumeRequest, CastdVolume> {
        muteCall(options: options, muted: true)
    }

    func run() async throws {
        try await runMute(options: options, muted: true, stream: stream)
    }
}

struct UnmuteCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmute",
        abstract: "Unmute a device (or with --stream, the stream).",
        usage: GlobalOptions.usage("unmute", "[--stream]"),
        discussion: """
            Examples:
              castc unmute
              castc unmute --device kitchen
              castc unmute --stream
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Unmute the stream that plays instead of the device.")
    var stream = false

    func call() -> CastcCall<Castd_V1_SetVolumeRequest, CastdVolume> {
        muteCall(options: options, muted: false)
    }

    func run() async throws {
        try await runMute(options: options, muted: false, stream: stream)
    }
}

/// The SetVolume call of `castc mute` and `castc unmute` (SetStreamVolume takes the same request).
private func muteCall(options: GlobalOptions, muted: Bool) -> CastcCall<Castd_V1_SetVolumeRequest, CastdVolume> {
    var request = Castd_V1_SetVolumeRequest()
    request.device = options.deviceSelector
    request.muted = muted
    return CastcCall(CastdMethods.setVolume, request)
}

private func runMute(options: GlobalOptions, muted: Bool, stream: Bool) async throws {
    let request = muteCall(options: options, muted: muted).request
    try await VolumeCommand.perform(stream ? .setStream(request) : .setDevice(request), options: options)
}

/// A device's volume, for `castc volume` without a level: castd resolves the selector
/// (GetDevice), by the rules every call follows.
enum DeviceVolume {
    static func find(client: CastdClient, selector: String) async throws -> (name: String, volume: CastdVolume) {
        let device = try await client.device(selector)
        let name = DeviceTable.plainName(device)
        guard device.hasReceiver, device.receiver.hasVolume else {
            throw CastdError(
                .failedPrecondition,
                "castd is not connected to \(name), so its volume is not known; `castc connect --device \"\(name)\"` connects"
            )
        }
        return (name, device.receiver.volume)
    }
}
