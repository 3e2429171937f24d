import CastClient

/// `castc queue list` and `castc tracks list`.
enum QueueTable {
    static func render(_ status: CastdMediaStatus) -> String {
        guard !status.items.isEmpty else {
            return status.hasMedia
                ? "No queue: one item plays (\(MediaSummary.title(status) ?? "untitled")). `castc queue add` makes a queue of it."
                : "Nothing plays. `castc queue load <url>...` starts a queue."
        }
        // Positions, as people and every queue command count them (ids: --json, or #ID).
        let rows = status.items.enumerated().map { index, item -> [String] in
            [
                String(index + 1),
                marker(item.itemID, in: status),
                item.media.duration > 0 ? PlaybackTime.format(item.media.duration) : "-",
                title(item.media),
            ]
        }
        var lines = [TextTable.render([["#", "STATE", "DURATION", "TITLE"]] + rows)]
        if status.repeatMode != .off { lines.append("repeat " + MediaSummary.repeatMode(status.repeatMode)) }
        return lines.joined(separator: "\n")
    }

    /// The current item gets the player's state (`playing`, `paused`, …); the next ones
    /// `loading` or `preloaded`; the others nothing.
    static func marker(_ itemID: Int64, in status: CastdMediaStatus) -> String {
        if itemID == status.currentItemID { return MediaSummary.state(status) }
        if itemID == status.loadingItemID { return "loading" }
        if itemID == status.preloadedItemID { return "preloaded" }
        return ""
    }

    static func title(_ media: CastdMediaInformation) -> String {
        if !media.metadata.title.isEmpty { return media.metadata.title }
        if !media.contentID.isEmpty { return media.contentID }
        if !media.contentURL.isEmpty { return media.contentURL }
        return media.entity.isEmpty ? "-" : media.entity
    }
}

enum TrackTable {
    static func render(_ status: CastdMediaStatus) -> String {
        guard !status.media.tracks.isEmpty else {
            return status.hasMedia ? "The media has no tracks to choose from." : "Nothing plays."
        }
        let active = Set(status.activeTrackIds)
        let rows = status.media.tracks.map { track -> [String] in
            [
                String(track.trackID),
                MediaSummary.trackType(track),
                track.language.isEmpty ? "-" : track.language,
                track.name.isEmpty ? "-" : track.name,
                active.contains(track.trackID) ? "yes" : "-",
            ]
        }
        var lines = [TextTable.render([["ID", "TYPE", "LANGUAGE", "NAME", "ACTIVE"]] + rows)]
        if status.media.hasTextTrackStyle, let style = MediaSummary.textTrackStyle(status.media.textTrackStyle) {
            lines.append("style: " + style)
        }
        return lines.joined(separator: "\n")
    }
}
