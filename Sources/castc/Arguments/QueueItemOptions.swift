import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Queue items for URLs: content types guessed from the extensions.
func queueItems(_ urls: [String], _ options: QueueItemOptions = QueueItemOptions()) -> [CastdQueueItem] {
    queueItems(urls.map(MediaSource.url), handles: urls.map { _ in LocalItemHandles() }, options)
}

/// The queue items for `sources`: a URL as such, a file by the handle castd gave it, with the
/// subtitles (the first shown) and cover beside it.
func queueItems(_ sources: [MediaSource], handles: [LocalItemHandles], _ options: QueueItemOptions)
    -> [CastdQueueItem]
{
    zip(sources, handles).enumerated().map { index, entry in
        var media = CastdMediaInformation()
        if case .url(let url) = entry.0 {
            media = CastdMediaInformation(url: url, contentType: MediaURL.guessContentType(url) ?? "")
        }
        var item = entry.1.queueItem(media)
        options.apply(to: &item, at: index, of: sources.count)
        return item
    }
}

/// How each queue item plays: `castc queue load` and `castc queue add`. Each option is given
/// once for every item, or once per URL in order (as --subtitles-lang is).
struct QueueItemOptions: ParsableArguments {
    static let discussion = """
        Each item plays by itself after the one before (--item-autoplay off: the queue \
        stops before it), from its start (--item-start: where to begin in it), and is \
        fetched when the one before is --item-preload seconds from its end (default: when it \
        begins). Give each option once for every item, or once per URL in order.
        """

    enum OnOff: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @Option(
        name: .customLong("item-autoplay"),
        help: ArgumentHelp("on (the default) or off: whether the item plays by itself.", valueName: "on|off"))
    var autoplay: [OnOff] = []

    @Option(
        name: .customLong("item-start"),
        parsing: .unconditionalSingleValue,
        help: ArgumentHelp("Where to begin in the item: seconds, m:ss or h:mm:ss.", valueName: "position"),
        transform: { try PlaybackTimeArgument.parse($0, what: "position") }
    )
    var start: [Double] = []

    @Option(
        name: .customLong("item-preload"),
        parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Fetch the item this many seconds before the one before it ends.", valueName: "seconds"),
        transform: { text in
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                throw ValidationError("--item-preload '\(text)' is not a number of seconds ≥ 0, such as 20")
            }
            return seconds
        }
    )
    var preload: [Double] = []

    init() {}

    /// Checks the counts against `count` URLs.
    func validate(count: Int) throws {
        try PerItemValues.validate(autoplay, option: "--item-autoplay", count: count, items: "URLs")
        try PerItemValues.validate(start, option: "--item-start", count: count, items: "URLs")
        try PerItemValues.validate(preload, option: "--item-preload", count: count, items: "URLs")
    }

    func apply(to item: inout CastdQueueItem, at index: Int, of count: Int) {
        if let autoplay = PerItemValues.value(autoplay, at: index, count: count) { item.autoplay = autoplay == .on }
        if let start = PerItemValues.value(start, at: index, count: count) { item.startTime = start }
        if let preload = PerItemValues.value(preload, at: index, count: count) { item.preloadTime = preload }
    }
}
