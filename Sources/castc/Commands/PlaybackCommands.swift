import ArgumentParser
import CastClient

struct RateCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "rate",
        abstract: "Set the playback rate (speed).",
        usage: GlobalOptions.usage("rate", "<rate>"),
        discussion: """
            0.5 (half speed) to 2.0 (double speed); 1 is normal speed. Not every receiver app \
            supports it (`castc status --verbose` lists playback_rate among the supported \
            commands when it does).

            Examples:
              castc rate 1.5
              castc rate 0.75
              castc rate 1
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("0.5 to 2.0, e.g. 1.25 (or 1.25x).", valueName: "rate"),
        transform: PlaybackRateArgument.parse)
    var rate: Double

    func call() -> CastcCall<Castd_V1_SetPlaybackRateRequest, CastdMediaStatus> {
        var request = Castd_V1_SetPlaybackRateRequest()
        request.device = options.deviceSelector
        request.rate = rate
        return CastcCall(.setPlaybackRate, request)
    }

    func run() async throws {
        try options.printMedia(try await options.send(call()))
    }
}

struct SkipAdCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip-ad",
        abstract: "Skip the ad that plays, once it can be skipped.",
        discussion: """
            `castc status` shows whether an ad plays and when it can be skipped.

            Examples:
              castc skip-ad
              castc skip-ad --device kitchen
            """
    )

    @OptionGroup var options: GlobalOptions

    func call() -> CastcCall<Castd_V1_MediaRequest, CastdMediaStatus> {
        CastcCall(.skipAd, options.mediaRequest)
    }

    func run() async throws {
        try options.printMedia(try await options.send(call()))
    }
}
