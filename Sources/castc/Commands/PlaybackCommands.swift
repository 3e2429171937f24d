import ArgumentParser
import CastClient

/// A command that sends a `MediaRequest` for the device to one method: play, pause, stop, skip-ad.
protocol MediaRequestCommand: MediaStatusCommand where Request == Castd_V1_MediaRequest {
    static var method: CastdUnaryMethod<Castd_V1_MediaRequest, CastdMediaStatus> { get }
}

extension MediaRequestCommand {
    func call() -> CastcCall<Castd_V1_MediaRequest, CastdMediaStatus> {
        CastcCall(Self.method, options.mediaRequest)
    }
}

struct PlayCommand: MediaRequestCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Resume playback.",
        discussion: """
            Prints the player's state afterwards.

            Examples:
              castc play
              castc play --device kitchen
            """
    )
    static let method = CastdMethods.play

    @OptionGroup var options: GlobalOptions
}

struct PauseCommand: MediaRequestCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause playback.",
        discussion: """
            Prints the player's state afterwards.

            Examples:
              castc pause
              castc pause --device kitchen
            """
    )
    static let method = CastdMethods.pause

    @OptionGroup var options: GlobalOptions
}

struct StopCommand: MediaRequestCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop playback (the media session ends; the app keeps running).",
        discussion: """
            Prints the player's state afterwards.

            Examples:
              castc stop
              castc stop --device kitchen
            """
    )
    static let method = CastdMethods.stop

    @OptionGroup var options: GlobalOptions
}

struct RateCommand: MediaStatusCommand {
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
        return CastcCall(CastdMethods.setPlaybackRate, request)
    }
}

struct SkipAdCommand: MediaRequestCommand {
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
    static let method = CastdMethods.skipAd

    @OptionGroup var options: GlobalOptions
}
