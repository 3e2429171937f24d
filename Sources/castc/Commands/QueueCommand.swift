import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Play a list of media, and change it while it plays.",
        usage: GlobalOptions.usage("queue", "<subcommand> [<arguments>]"),
        discussion: """
            A queue is a list of items the device plays one after another. Items are named by \
            their position, 1 for the first, as `castc queue` and `castc status` (item 2 of 5) \
            number them; or by the id the device gave them, written #ID (`castc queue --json` \
            shows the ids), which stays the same when items move. Without a subcommand, \
            `castc queue` lists the queue.

            Examples:
              castc queue load https://x.org/a.mp3 https://x.org/b.mp3 --repeat all
              castc queue add https://example.com/c.mp3
              castc queue add ./bonus.flac
              castc queue list
              castc queue jump 3
              castc queue next
              castc queue move 3 --before 1
              castc queue remove 2
              castc queue repeat shuffle
            """,
        subcommands: [
            QueueListCommand.self, QueueLoadCommand.self, QueueAddCommand.self, QueueRemoveCommand.self,
            QueueMoveCommand.self, QueueJumpCommand.self, QueueNextCommand.self, QueuePrevCommand.self,
            QueueRepeatCommand.self,
        ],
        defaultSubcommand: QueueListCommand.self
    )
}

struct QueueListCommand: CastcCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Show the queue: item ids, what plays, titles and durations.",
        usage: GlobalOptions.usage("queue list"),
        discussion: """
            Asks the device for its media status and lists every item of the queue, however \
            long (castd fetches what the device's status leaves out; for a user who may only \
            read, castd's last status of the device): ITEM is the id the other \
            queue commands take; STATE marks the current item (playing, paused, …), the one \
            loading and the one preloaded. --json prints the media status with every item.

            Examples:
              castc queue list
              castc queue list --json | jq '.items[].itemId'
            """
    )

    @OptionGroup var options: GlobalOptions

    func call() -> CastcCall<Castd_V1_MediaRequest, CastdMediaStatus> {
        CastcCall(CastdMethods.requestMediaStatus, options.mediaRequest)
    }

    func run() async throws {
        let status = try await options.withClient { client in
            var status: CastdMediaStatus
            do {
                status = try await call().send(client)
            } catch let error as CastdError where error.code == .permissionDenied {
                // A read-only user may not ask the device (RequestMediaStatus needs control):
                // castd's last status of the device, which it keeps as the device says it.
                let queue = try await client.queue(device: options.deviceSelector)
                guard let last = try await client.status().media.first(where: { $0.deviceID == queue.deviceID })
                else { throw error }
                status = last
                if !queue.items.isEmpty { status.items = queue.items }
                return status
            }
            guard !status.items.isEmpty else { return status }
            // The whole queue: the device's status holds only the items around the current one.
            do {
                let queue = try await client.queue(device: options.deviceSelector)
                if queue.mediaSessionID == status.mediaSessionID, !queue.items.isEmpty { status.items = queue.items }
            } catch let error as CastdError where error.code == .unimplemented {
                // An older castd: the items the status holds.
            }
            return status
        }
        try options.print(status) { QueueTable.render(status) }
    }
}

struct QueueLoadCommand: MediaStatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Replace what plays with a queue of URLs, files or folders.",
        usage: GlobalOptions.usage(
            "queue load", "<url-or-file>... [--start-item <n>] [--repeat <mode>]", "[--start <position>]",
            "[--item-autoplay on|off ...]", "[--item-start <position> ...]", "[--item-preload <seconds> ...]"),
        discussion: """
            Each URL or file becomes an item, in order (content types guessed from the \
            extensions, or a file's first bytes); a folder becomes its playable files, in \
            natural order (track 2 before track 10). Files are opened by castc and served by \
            castd, as for `castc load`. Without a session, castd starts the Default Media \
            Receiver first.

            \(QueueItemOptions.discussion) --start applies to the first item played and \
            overrides its --item-start.

            Examples:
              castc queue load https://example.com/a.mp3 https://example.com/b.mp3
              castc queue load ./Album/
              castc queue load https://x.org/1.mp4 https://x.org/2.mp4 --start-item 2 \\
                --start 0:30
              castc queue load https://x.org/a.mp3 https://x.org/b.mp3 --repeat all
              castc queue load https://x.org/a.mp3 https://x.org/b.mp3 \\
                --item-preload 20 --item-autoplay off --item-autoplay on
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup(title: "Each item") var itemOptions: QueueItemOptions

    @Argument(help: ArgumentHelp("The items' URLs, files or folders, in play order.", valueName: "url-or-file"))
    var urls: [String] = []

    @Option(
        parsing: .unconditional, help: ArgumentHelp("The item to play first: 1 is the first item.", valueName: "n"))
    var startItem: Int?

    /// The same counted from 0, as castd.v1's start_index is (for scripts written before
    /// --start-item).
    @Option(parsing: .unconditional, help: ArgumentHelp(visibility: .hidden))
    var startIndex: Int?

    /// The first item to play, counted from 0.
    var firstIndex: Int { startItem.map { $0 - 1 } ?? startIndex ?? 0 }

    @Option(name: .customLong("repeat"), help: ArgumentHelp(RepeatArgument.help, valueName: "mode"))
    var repeatMode: RepeatArgument = .off

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Where to start in the first item played: seconds, m:ss or h:mm:ss.", valueName: "position"),
        transform: { try PlaybackTimeArgument.parse($0, what: "position") }
    )
    var start: Double?

    func validate() throws {
        guard !urls.isEmpty else {
            throw ValidationError("give the URLs to play: castc queue load https://example.com/a.mp3 …")
        }
        for url in urls where !LocalFiles.isLocal(url) { try MediaURL.validate(url) }
        if startItem != nil, startIndex != nil { throw ValidationError("give --start-item or --start-index, not both") }
        let count = LocalFiles.itemCount(urls)
        guard (0..<count).contains(firstIndex) else {
            throw ValidationError(
                startIndex != nil
                    ? "--start-index \(firstIndex) is not one of the \(count) items: give 0 to \(count - 1) (0 is the first)"
                    : "--start-item \(firstIndex + 1) is not one of the \(count) items: give 1 to \(count) (1 is the first)"
            )
        }
        try itemOptions.validate(count: count)
    }

    func run() async throws {
        let sources = try LocalMedia.sources(urls)
        let status = try await LocalMedia.withHandles(LocalFiles.items(sources), socket: options.socket) { handles in
            try await options.send(call(sources, handles: handles))
        }
        try options.printMedia(status)
    }

    func call() -> CastcCall<Castd_V1_QueueLoadRequest, CastdMediaStatus> {
        call(urls.map(MediaSource.url), handles: urls.map { _ in LocalItemHandles() })
    }

    /// The QueueLoad call, a file's item naming the handles castd gave it.
    func call(_ sources: [MediaSource], handles: [LocalItemHandles]) -> CastcCall<
        Castd_V1_QueueLoadRequest, CastdMediaStatus
    > {
        var request = Castd_V1_QueueLoadRequest()
        request.device = options.deviceSelector
        request.items = queueItems(sources, handles: handles, itemOptions)
        request.startIndex = UInt32(firstIndex)
        request.repeatMode = repeatMode.castd
        request.startTime = start ?? 0
        return CastcCall(CastdMethods.queueLoad, request)
    }
}

struct QueueAddCommand: QueueItemsCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add URLs, files or folders to the queue.",
        usage: GlobalOptions.usage(
            "queue add", "<url-or-file>... [--before <item>] [--play-now]",
            "[--item-autoplay on|off ...]", "[--item-start <position> ...]", "[--item-preload <seconds> ...]"),
        discussion: """
            Appends the URLs or files (a folder: its playable files, in natural order) at the \
            end of the queue, or inserts them before an item (its position, as `castc queue` \
            shows it, or #ID).

            \(QueueItemOptions.discussion)

            Examples:
              castc queue add https://example.com/c.mp3
              castc queue add https://x.org/c.mp3 https://x.org/d.mp3 --before 2
              castc queue add https://x.org/now.mp3 --before 2 --play-now
              castc queue add https://x.org/talk.mp3 --item-start 1:30 --item-preload 15
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup(title: "Each item") var itemOptions: QueueItemOptions

    @Argument(help: ArgumentHelp("The new items' URLs, files or folders, in order.", valueName: "url-or-file"))
    var urls: [String] = []

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Insert before this item: its position (`castc queue`), or #ID. Default: at the end.", valueName: "item"),
        transform: QueueItemRef.parse
    )
    var before: QueueItemRef?

    @Flag(help: "Play the first added item at once.")
    var playNow = false

    func validate() throws {
        guard !urls.isEmpty else {
            throw ValidationError("give the URLs to add: castc queue add https://example.com/c.mp3 …")
        }
        for url in urls where !LocalFiles.isLocal(url) { try MediaURL.validate(url) }
        try itemOptions.validate(count: LocalFiles.itemCount(urls))
    }

    var itemRefs: [QueueItemRef] { before.map { [$0] } ?? [] }

    func run() async throws {
        let sources = try LocalMedia.sources(urls)
        let status = try await LocalMedia.withHandles(LocalFiles.items(sources), socket: options.socket) { handles in
            try await options.withClient { client in
                let order =
                    itemRefs.contains(where: \.isPosition)
                    ? try await client.queue(device: options.deviceSelector).items.map(\.itemID) : []
                let ids = try itemRefs.map { try $0.itemID(in: order) }
                return try await call(ids: ids, sources: sources, handles: handles).send(client)
            }
        }
        try options.printMedia(status)
    }

    func call(ids: [Int64]) -> CastcCall<Castd_V1_QueueInsertRequest, CastdMediaStatus> {
        call(ids: ids, sources: urls.map(MediaSource.url), handles: urls.map { _ in LocalItemHandles() })
    }

    /// The QueueInsert call, a file's item naming the handles castd gave it.
    func call(ids: [Int64], sources: [MediaSource], handles: [LocalItemHandles])
        -> CastcCall<Castd_V1_QueueInsertRequest, CastdMediaStatus>
    {
        var request = Castd_V1_QueueInsertRequest()
        request.device = options.deviceSelector
        request.items = queueItems(sources, handles: handles, itemOptions)
        request.insertBeforeItemID = ids.first ?? 0
        request.playNow = playNow
        return CastcCall(CastdMethods.queueInsert, request)
    }
}

struct QueueRemoveCommand: QueueItemsCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove items from the queue.",
        usage: GlobalOptions.usage("queue remove", "<item>..."),
        discussion: """
            Items by their positions, as `castc queue` shows them (all counted before any is \
            removed), or #ID.

            Examples:
              castc queue remove 3
              castc queue remove 3 4 5
              castc queue remove '#25'
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The items to remove: positions (`castc queue`) or #ID.", valueName: "item"),
        transform: QueueItemRef.parse)
    var itemRefs: [QueueItemRef] = []

    func validate() throws {
        guard !itemRefs.isEmpty else {
            throw ValidationError("give the positions of the items to remove, as castc queue shows them")
        }
    }

    func call(ids: [Int64]) -> CastcCall<Castd_V1_QueueRemoveRequest, CastdMediaStatus> {
        var request = Castd_V1_QueueRemoveRequest()
        request.device = options.deviceSelector
        request.itemIds = ids
        return CastcCall(CastdMethods.queueRemove, request)
    }
}

struct QueueMoveCommand: QueueItemsCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move items within the queue.",
        usage: GlobalOptions.usage("queue move", "<item>... (--before <item> | --to-end)"),
        discussion: """
            The items go, in the order given, before another item or to the end. Items are \
            their positions, as `castc queue` shows them before the move, or #ID.

            Examples:
              castc queue move 4 --before 1
              castc queue move 2 3 --to-end
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The items to move, in their new order: positions or #ID.", valueName: "item"),
        transform: QueueItemRef.parse)
    var items: [QueueItemRef] = []

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Move them before this item (a position or #ID).", valueName: "item"),
        transform: QueueItemRef.parse)
    var before: QueueItemRef?

    @Flag(help: "Move them to the end of the queue.")
    var toEnd = false

    func validate() throws {
        guard !items.isEmpty else {
            throw ValidationError("give the positions of the items to move, as castc queue shows them")
        }
        switch (before, toEnd) {
        case (nil, false): throw ValidationError("say where to: --before <item> or --to-end")
        case (.some, true): throw ValidationError("give --before <item> or --to-end, not both")
        case (let before?, false) where items.contains(before):
            throw ValidationError("item \(before) cannot be moved before itself")
        default: break
        }
    }

    var itemRefs: [QueueItemRef] { items + (before.map { [$0] } ?? []) }

    func call(ids: [Int64]) -> CastcCall<Castd_V1_QueueReorderRequest, CastdMediaStatus> {
        var request = Castd_V1_QueueReorderRequest()
        request.device = options.deviceSelector
        request.itemIds = Array(ids.prefix(items.count))
        request.insertBeforeItemID = before == nil ? 0 : ids[items.count]
        return CastcCall(CastdMethods.queueReorder, request)
    }
}

struct QueueJumpCommand: QueueItemsCommand {
    static let configuration = CommandConfiguration(
        commandName: "jump",
        abstract: "Play a queue item.",
        usage: GlobalOptions.usage("queue jump", "<item> [--start <position>]"),
        discussion: """
            The item is its position, as `castc queue` shows it (3: the third), or #ID.

            Examples:
              castc queue jump 3
              castc queue jump 3 --start 1:00
              castc queue jump '#25'
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp("The item to play: its position (`castc queue`) or #ID.", valueName: "item"),
        transform: QueueItemRef.parse)
    var item: QueueItemRef

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Where to start in it: seconds, m:ss or h:mm:ss.", valueName: "position"),
        transform: { try PlaybackTimeArgument.parse($0, what: "position") }
    )
    var start: Double?

    var itemRefs: [QueueItemRef] { [item] }

    func call(ids: [Int64]) -> CastcCall<CastdQueueUpdateRequest, CastdMediaStatus> {
        var request = CastdQueueUpdateRequest()
        request.device = options.deviceSelector
        request.currentItemID = ids[0]
        request.currentTime = start ?? 0
        return CastcCall(CastdMethods.queueUpdate, request)
    }
}

struct QueueNextCommand: MediaStatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Play the next item in the queue.",
        usage: GlobalOptions.usage("queue next"),
        discussion: """
            Examples:
              castc queue next
              castc queue next --device kitchen
            """
    )

    @OptionGroup var options: GlobalOptions

    func call() -> CastcCall<CastdQueueUpdateRequest, CastdMediaStatus> {
        var request = CastdQueueUpdateRequest()
        request.device = options.deviceSelector
        request.jump = 1
        return CastcCall(CastdMethods.queueUpdate, request)
    }
}

struct QueuePrevCommand: MediaStatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "prev",
        abstract: "Play the previous item in the queue.",
        usage: GlobalOptions.usage("queue prev"),
        discussion: """
            Examples:
              castc queue prev
              castc queue previous --device kitchen
            """,
        aliases: ["previous"]
    )

    @OptionGroup var options: GlobalOptions

    func call() -> CastcCall<CastdQueueUpdateRequest, CastdMediaStatus> {
        var request = CastdQueueUpdateRequest()
        request.device = options.deviceSelector
        request.jump = -1
        return CastcCall(CastdMethods.queueUpdate, request)
    }
}

struct QueueRepeatCommand: MediaStatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "repeat",
        abstract: "Set what happens at the end of an item and of the queue.",
        usage: GlobalOptions.usage("queue repeat", "off|all|one|shuffle"),
        discussion: """
            off: stop after the last item. all: start over after it. one: repeat the current \
            item. shuffle: start over, in a new random order.

            Examples:
              castc queue repeat all
              castc queue repeat off
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("What to repeat.", valueName: "mode"))
    var mode: RepeatArgument

    func call() -> CastcCall<CastdQueueUpdateRequest, CastdMediaStatus> {
        var request = CastdQueueUpdateRequest()
        request.device = options.deviceSelector
        request.repeatMode = mode.castd
        return CastcCall(CastdMethods.queueUpdate, request)
    }
}
