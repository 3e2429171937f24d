import CastChannel
import CastProtocol
import CastdAPI
import Foundation

/// MEDIA_STATUS: one source of what the device plays, merged across statuses that leave fields out.
extension DeviceController {
    // MARK: media status

    /// Applies a MEDIA_STATUS payload (a reply or a broadcast).
    func applyMedia(_ payload: JSONValue, arrival: UInt64? = nil) {
        if let arrival {
            // As for RECEIVER_STATUS (see applyReceiver): newest last, each once.
            guard arrival > appliedMediaArrival else { return }
            appliedMediaArrival = arrival
        }
        guard let entries = Self.mediaEntries(payload["status"]) else {
            // Not "no media session" (that is `[]`): a status castd cannot read says nothing.
            mediaLogger.warning(
                "skipped a MEDIA_STATUS whose status cannot be read",
                metadata: ["status": "\(String((payload["status"]?.jsonString ?? "").prefix(100)))"])
            return
        }
        guard let entry = entries.first, let mediaSessionID = entry["mediaSessionId"]?.intValue else {
            if lastEntry != nil { clearMedia() }
            return
        }
        if entry == lastEntry { return }  // the reply and its broadcast twin
        lastEntry = entry
        let currentItem = entry["currentItemId"]?.intValue
        for item in entry["items"]?.arrayValue ?? [] {
            if let itemID = item["itemId"]?.intValue, let media = item["media"], media.objectValue != nil {
                itemMedia[itemID] = media
            }
        }
        var media: JSONValue?
        if let sent = entry["media"], sent.objectValue != nil {
            media = sent
            if let currentItem { itemMedia[currentItem] = sent }
        } else if let currentItem, let known = itemMedia[currentItem] {
            media = known
        } else {
            media = mediaJSON[mediaSessionID]
        }
        if let media { mediaJSON = [mediaSessionID: media] }
        if itemMedia.count > Self.itemMediaLimit {
            // Item ids that keep changing: keep what this status names (bounded by the frame).
            var named = Set((entry["items"]?.arrayValue ?? []).compactMap { $0["itemId"]?.intValue })
            if let currentItem { named.insert(currentItem) }
            itemMedia = itemMedia.filter { named.contains($0.key) }
        }
        if let media, let state = entry["playerState"]?.stringValue, ["PLAYING", "PAUSED", "BUFFERING"].contains(state)
        {
            lastActiveMedia = (media, .now)
        }
        if entry["playerState"]?.stringValue == "IDLE", entry["idleReason"] != nil, entry["items"] == nil {
            // The media session ended; its items are gone with it.
            itemMedia.removeAll()
        }
        var status = CastdMediaStatus(
            deviceID: id, entry: entry, media: media, itemMedia: itemMedia, receivedAt: Date())
        if let previous = lastMediaStatus, previous.mediaSessionID == status.mediaSessionID {
            keepKnown(of: previous, where: entry, in: &status)
        }
        lastMediaStatus = status
        hub.updateMedia(status)
    }

    /// The entries of a MEDIA_STATUS `status`: `[]` when there is no media session (absent,
    /// null, an empty array, entries without `mediaSessionId`), nil when it cannot be read (a
    /// string or a number, entries whose `mediaSessionId` is not a number).
    static func mediaEntries(_ status: JSONValue?) -> [JSONValue]? {
        func readable(_ entry: JSONValue) -> Bool { entry["mediaSessionId"]?.intValue != nil }
        func unreadable(_ entry: JSONValue) -> Bool { entry.objectValue == nil || entry["mediaSessionId"] != nil }
        switch status {
        case nil, .null?:
            return []
        case .array(let items)?:
            let entries = items.filter(readable)
            return entries.isEmpty && items.contains(where: unreadable) ? nil : entries
        case let object? where object.objectValue != nil:
            return readable(object) ? [object] : (unreadable(object) ? nil : [])
        default:
            return nil
        }
    }

    /// Fields of a MEDIA_STATUS entry that are there but cannot be read (a `currentTime` that is
    /// an object, a volume level that is a word) are no news: `status` keeps what castd last
    /// published for the same media session, rather than a position or a volume of 0.
    func keepKnown(of previous: CastdMediaStatus, where entry: JSONValue, in status: inout CastdMediaStatus) {
        func unreadableNumber(_ value: JSONValue?) -> Bool {
            guard let value, !value.isNull else { return false }
            return !(value.doubleValue?.isFinite ?? false)
        }
        var kept: [String] = []
        if unreadableNumber(entry["currentTime"]) {
            kept.append("currentTime")
            status.currentTime = previous.currentTime
            status.updatedAtMs = previous.updatedAtMs  // the position as of then, not now
        }
        if unreadableNumber(entry["playbackRate"]) {
            kept.append("playbackRate")
            status.playbackRate = previous.playbackRate
        }
        if let volume = entry["volume"], !volume.isNull {
            if volume.objectValue == nil {
                kept.append("volume")
                status.volume = previous.volume
            } else {
                if unreadableNumber(volume["level"]) {
                    kept.append("volume.level")
                    status.volume.level = previous.volume.level
                }
                if let muted = volume["muted"], !muted.isNull, muted.boolValue == nil {
                    kept.append("volume.muted")
                    status.volume.muted = previous.volume.muted
                }
            }
        }
        if !kept.isEmpty {
            mediaLogger.warning(
                "the device's MEDIA_STATUS has fields that cannot be read; kept what castd knew of them",
                metadata: ["fields": "\(kept.joined(separator: ", "))"])
        }
    }

    func clearMedia() {
        lastEntry = nil
        lastMediaStatus = nil
        mediaJSON.removeAll()
        itemMedia.removeAll()
        var empty = CastdMediaStatus()
        empty.deviceID = id
        empty.playerState = .idle
        hub.updateMedia(empty)
    }
}
