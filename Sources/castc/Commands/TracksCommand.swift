import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct TracksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tracks",
        abstract: "Show and switch subtitles and audio tracks, and style subtitles.",
        usage: GlobalOptions.usage("tracks", "<subcommand> [<arguments>]"),
        discussion: """
            The media's tracks (subtitles, captions, audio languages, video) have ids, which \
            `castc tracks list` shows. Without a subcommand, `castc tracks` lists them.

            Examples:
              castc tracks list
              castc tracks enable 2
              castc tracks disable --all
              castc tracks style --font-scale 1.5 --foreground '#FFFF00FF'
            """,
        subcommands: [
            TracksListCommand.self, TracksEnableCommand.self, TracksDisableCommand.self, TracksStyleCommand.self,
        ],
        defaultSubcommand: TracksListCommand.self
    )
}

struct TracksListCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the media's tracks and which are active.",
        usage: GlobalOptions.usage("tracks list"),
        discussion: """
            Asks the device for its media status. --json prints the whole media status (tracks \
            are under .media.tracks, the active ones in .activeTrackIds).

            Examples:
              castc tracks list
              castc tracks list --json | jq '.media.tracks'
            """
    )

    @OptionGroup var options: GlobalOptions

    func call() -> CastcCall<Castd_V1_MediaRequest, CastdMediaStatus> {
        CastcCall(CastdMethods.requestMediaStatus, options.mediaRequest)
    }

    func run() async throws {
        let status = try await options.send(call())
        try requireLoadedMedia(status, device: options.device)
        try options.print(status) { TrackTable.render(status) }
    }
}

/// Like every command about the loaded media: nothing loaded is FAILED_PRECONDITION (exit 9).
private func requireLoadedMedia(_ status: CastdMediaStatus, device: String?) throws {
    guard status.hasMedia else {
        let device = device.map { "\"\($0)\"" } ?? "the device"
        throw CastdError(.failedPrecondition, "nothing is loaded on \(device); load something first (castc load URL)")
    }
}

/// Refuses track ids the media does not have (NOT_FOUND), for enable and disable alike; a
/// status that does not describe the media leaves the judgement to castd and the device.
private func requireKnownTracks(_ ids: [Int64], in status: CastdMediaStatus) throws {
    let known = Set(status.media.tracks.map(\.trackID))
    guard status.hasMedia, let unknown = ids.first(where: { !known.contains($0) }) else { return }
    guard !known.isEmpty else { throw CastdError(.notFound, "the media has no track \(unknown): it has no tracks") }
    let list = known.sorted().map(String.init).joined(separator: ", ")
    throw CastdError(.notFound, "the media has no track \(unknown) (its tracks: \(list); castc tracks lists them)")
}

struct TracksEnableCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Turn tracks on.",
        usage: GlobalOptions.usage("tracks enable", "<id>..."),
        discussion: """
            A track turned on replaces the active track of its kind: one subtitles track and one \
            audio track show at a time. Other active tracks stay on.

            Examples:
              castc tracks enable 1
              castc tracks enable 3 --device kitchen
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The tracks to turn on (see `castc tracks list`).", valueName: "id"),
        transform: ItemIDArgument.track)
    var trackIDs: [Int64] = []

    func validate() throws {
        guard !trackIDs.isEmpty else {
            throw ValidationError("give the ids of the tracks to turn on (castc tracks list)")
        }
    }

    /// The EditTracks call, given the media status as it is now.
    func call(current status: CastdMediaStatus) throws -> CastcCall<Castd_V1_EditTracksRequest, CastdMediaStatus> {
        try requireKnownTracks(trackIDs, in: status)
        let known = Dictionary(status.media.tracks.map { ($0.trackID, $0) }, uniquingKeysWith: { first, _ in first })
        func kind(_ id: Int64) -> String? {
            guard let track = known[id] else { return nil }
            return track.type == .text ? "text" : track.type == .audio ? "audio" : nil
        }
        let replaced = Set(trackIDs.compactMap(kind))
        var active = status.activeTrackIds.filter { id in
            guard let kind = kind(id) else { return true }
            return !replaced.contains(kind)
        }
        for id in trackIDs where !active.contains(id) { active.append(id) }
        return activeTracksCall(active, options: options)
    }

    func run() async throws {
        try await editTracks(options: options, call: call(current:))
    }
}

struct TracksDisableCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Turn tracks off.",
        usage: GlobalOptions.usage("tracks disable", "<id>... | --all"),
        discussion: """
            --all turns every subtitles and captions track off; audio and video tracks stay.

            Examples:
              castc tracks disable 1
              castc tracks disable --all
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The tracks to turn off (see `castc tracks list`).", valueName: "id"),
        transform: ItemIDArgument.track)
    var trackIDs: [Int64] = []

    @Flag(help: "Turn every text track (subtitles, captions) off.")
    var all = false

    func validate() throws {
        if all, !trackIDs.isEmpty { throw ValidationError("give track ids or --all, not both") }
        if !all, trackIDs.isEmpty {
            throw ValidationError("give the ids of the tracks to turn off (castc tracks list), or --all")
        }
    }

    /// The EditTracks call, given the media status as it is now.
    func call(current status: CastdMediaStatus) throws -> CastcCall<Castd_V1_EditTracksRequest, CastdMediaStatus> {
        try requireKnownTracks(trackIDs, in: status)
        let textTracks = Set(status.media.tracks.filter { $0.type == .text }.map(\.trackID))
        let active: [Int64]
        if all {
            // Without track descriptions nothing says which are text: turn everything off.
            active = status.media.tracks.isEmpty ? [] : status.activeTrackIds.filter { !textTracks.contains($0) }
        } else {
            active = status.activeTrackIds.filter { !trackIDs.contains($0) }
        }
        return activeTracksCall(active, options: options)
    }

    func run() async throws {
        try await editTracks(options: options, call: call(current:))
    }
}

/// The EditTracks call that makes `active` the active tracks (`[]`: none).
private func activeTracksCall(
    _ active: [Int64],
    options: GlobalOptions
) -> CastcCall<Castd_V1_EditTracksRequest, CastdMediaStatus> {
    var request = Castd_V1_EditTracksRequest()
    request.device = options.deviceSelector
    var tracks = Castd_V1_ActiveTracks()
    tracks.trackIds = active
    request.activeTracks = tracks
    return CastcCall(CastdMethods.editTracks, request)
}

/// `tracks enable` and `tracks disable`: asks for the media status, makes the call `call` builds
/// from it on the same connection, and prints the tracks as they are then.
private func editTracks(
    options: GlobalOptions,
    call: (CastdMediaStatus) throws -> CastcCall<Castd_V1_EditTracksRequest, CastdMediaStatus>
) async throws {
    let status = try await options.withClient { client in
        let current = try await client.requestMediaStatus(device: options.deviceSelector)
        return try await call(current).send(client)
    }
    try options.print(status) { TrackTable.render(status) }
}

struct TracksStyleCommand: MediaStatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "style",
        abstract: "Set how subtitles look.",
        usage: GlobalOptions.usage(
            "tracks style",
            "[--font-scale <scale>] [--foreground <color>]",
            "[--background <color>] [--edge-type <type>]",
            "[--edge-color <color>] [--font-family <name>]",
            "[--font-generic-family <family>]",
            "[--font-style <style>] [--window-type <type>]",
            "[--window-color <color>]"
        ),
        discussion: """
            Colors are #RRGGBBAA (AA is the opacity: FF opaque, 00 transparent) or #RRGGBB \
            (opaque). Options not given are left out of the style (the device's defaults).

            Examples:
              castc tracks style --font-scale 1.5
              castc tracks style --foreground '#FFFF00FF' --background '#00000080'
              castc tracks style --edge-type drop-shadow --edge-color '#000000FF'
              castc tracks style --font-generic-family serif --font-style bold
            """
    )

    enum EdgeType: String, ExpressibleByArgument, CaseIterable {
        case none, outline, dropShadow = "drop-shadow", raised, depressed
    }

    enum FontGenericFamily: String, ExpressibleByArgument, CaseIterable {
        case sansSerif = "sans-serif", monospacedSansSerif = "monospaced-sans-serif", serif
        case monospacedSerif = "monospaced-serif", casual, cursive, smallCapitals = "small-capitals"
    }

    enum FontStyle: String, ExpressibleByArgument, CaseIterable {
        case normal, bold, boldItalic = "bold-italic", italic
    }

    enum WindowType: String, ExpressibleByArgument, CaseIterable {
        case none, normal, roundedCorners = "rounded-corners"
    }

    @OptionGroup var options: GlobalOptions

    @Option(
        parsing: .unconditional, help: ArgumentHelp("Text size; 1 is the default size (0.1 to 10).", valueName: "scale")
    )
    var fontScale: Double?

    @Option(help: ArgumentHelp("Text color, #RRGGBBAA.", valueName: "color"), transform: ColorArgument.parse)
    var foreground: String?

    @Option(
        help: ArgumentHelp("Background color behind the text, #RRGGBBAA.", valueName: "color"),
        transform: ColorArgument.parse)
    var background: String?

    @Option(help: ArgumentHelp("How the letters' edges are drawn.", valueName: "type"))
    var edgeType: EdgeType?

    @Option(help: ArgumentHelp("Color of the edges, #RRGGBBAA.", valueName: "color"), transform: ColorArgument.parse)
    var edgeColor: String?

    @Option(help: ArgumentHelp("A font by name, e.g. \"Droid Sans\".", valueName: "name"))
    var fontFamily: String?

    @Option(
        help: ArgumentHelp("A kind of font, when --font-family is not given or not there.", valueName: "family"))
    var fontGenericFamily: FontGenericFamily?

    @Option(help: ArgumentHelp("Bold, italic, both or neither.", valueName: "style"))
    var fontStyle: FontStyle?

    @Option(help: ArgumentHelp("The box around the text.", valueName: "type"))
    var windowType: WindowType?

    @Option(help: ArgumentHelp("Color of that box, #RRGGBBAA.", valueName: "color"), transform: ColorArgument.parse)
    var windowColor: String?

    func validate() throws {
        if let fontScale, !(0.1...10).contains(fontScale) {
            throw ValidationError("--font-scale \(fontScale) is out of range: give 0.1 to 10 (1 is the default size)")
        }
        if let fontFamily, fontFamily.isEmpty { throw ValidationError("--font-family needs a font name") }
        guard style != CastdTextTrackStyle() else {
            throw ValidationError(
                "say what to change: --font-scale, --foreground, --background, --edge-type, --edge-color, --font-family, --font-generic-family, --font-style, --window-type or --window-color"
            )
        }
    }

    /// Upper snake case, as the Cast text track style spells its values: drop-shadow → DROP_SHADOW.
    private static func castName(_ value: String) -> String {
        value.uppercased().replacing("-", with: "_")
    }

    var style: CastdTextTrackStyle {
        var style = CastdTextTrackStyle()
        if let fontScale { style.fontScale = fontScale }
        if let foreground { style.foregroundColor = foreground }
        if let background { style.backgroundColor = background }
        if let edgeType { style.edgeType = Self.castName(edgeType.rawValue) }
        if let edgeColor { style.edgeColor = edgeColor }
        if let fontFamily { style.fontFamily = fontFamily }
        if let fontGenericFamily { style.fontGenericFamily = Self.castName(fontGenericFamily.rawValue) }
        if let fontStyle { style.fontStyle = Self.castName(fontStyle.rawValue) }
        if let windowType { style.windowType = Self.castName(windowType.rawValue) }
        if let windowColor { style.windowColor = windowColor }
        return style
    }

    func call() -> CastcCall<Castd_V1_EditTracksRequest, CastdMediaStatus> {
        var request = Castd_V1_EditTracksRequest()
        request.device = options.deviceSelector
        request.textTrackStyle = style
        return CastcCall(CastdMethods.editTracks, request)
    }
}

/// Colors for text track styles: `#RRGGBBAA`, or `#RRGGBB` (opaque).
enum ColorArgument {
    static func parse(_ text: String) throws -> String {
        let hex = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        guard [6, 8].contains(hex.count), hex.allSatisfy(\.isHexDigit) else {
            throw ValidationError(
                "'\(text)' is not a color: give #RRGGBBAA (AA is the opacity) or #RRGGBB, such as #FFFFFFFF for white")
        }
        return "#" + hex.uppercased() + (hex.count == 6 ? "FF" : "")
    }
}
