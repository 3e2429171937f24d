import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `castc watch`: one line per event, `HH:MM:SS.mmm  kind  what`. Remembers device names from
/// earlier events, since session and media events carry only device ids.
struct EventFormatter {
    var timeZone: TimeZone
    /// Media events also get the whole media status, one fact per line, under their line.
    var verbose: Bool
    private var names: [String: String] = [:]

    init(timeZone: TimeZone = .current, verbose: Bool = false) {
        self.timeZone = timeZone
        self.verbose = verbose
    }

    mutating func line(for event: CastdEvent, now: Date) -> String {
        let date = event.timeMs > 0 ? Date(timeIntervalSince1970: Double(event.timeMs) / 1000) : now
        let (kind, text) = describe(event)
        let column = kind.count < 14 ? kind + String(repeating: " ", count: 14 - kind.count) : String(kind.prefix(14))
        var line = "\(timestamp(date))  \(column)  \(text)"
        if verbose, case .media(let media) = event.kind {
            let indent = String(repeating: " ", count: 30)
            let rows = TextTable.render(StatusReport.mediaRows(media, at: nil, verbose: true).dropFirst().map { $0 })
            for row in rows.split(separator: "\n") { line += "\n" + indent + row }
        }
        return line
    }

    private mutating func describe(_ event: CastdEvent) -> (String, String) {
        switch event.kind {
        case .snapshot(let snapshot):
            for device in snapshot.devices { remember(device) }
            let counts = [
                count(snapshot.devices.count, "device"),
                count(snapshot.sessions.count, "session"),
                "\(snapshot.media.count) media",
            ]
            return ("snapshot", counts.joined(separator: ", ") + " (sequence \(event.sequence))")
        case .deviceAdded(let device):
            remember(device)
            let details = [device.model, DeviceTable.address(device), DeviceTable.state(device)]
                .filter { !$0.isEmpty && $0 != "-" }
            return ("device added", "\(name(device.id)): \(details.joined(separator: ", "))")
        case .deviceUpdated(let device):
            remember(device)
            var details = [DeviceTable.state(device)]
            if device.linkState == .failed || device.linkState == .reconnecting, !device.linkError.isEmpty {
                details.append(device.linkError)
            }
            if let retry = DeviceTable.nextRetry(device) { details.append("retry " + retry) }
            if device.authentication.state == .unverified, let why = DeviceTable.authenticationFailure(device) {
                details.append(why)
            }
            let app = DeviceTable.app(device)
            if app != "-" { details.append(app) }
            if let tv = DeviceTable.tv(device) { details.append("tv " + tv) }
            if device.hasReceiver, device.receiver.hasVolume {
                details.append("volume " + MediaSummary.volume(device.receiver.volume))
            }
            return ("device updated", "\(name(device.id)): \(details.joined(separator: ", "))")
        case .deviceRemoved(let device):
            let text = name(device.id, fallback: device.friendlyName)
            names[device.id] = nil
            return ("device removed", text)
        case .session(let session):
            if !session.deviceName.isEmpty, names[session.deviceID] == nil {
                names[session.deviceID] = session.deviceName
            }
            return ("session", "\(name(session.deviceID)): \(MediaSummary.session(session))")
        case .media(let media):
            return ("media", "\(name(media.deviceID)): \(MediaSummary.line(media, at: nil))")
        case .transferred(let transfer):
            if !transfer.toDeviceName.isEmpty { names[transfer.toDeviceID] = transfer.toDeviceName }
            let from = name(transfer.fromDeviceID, fallback: transfer.fromDeviceName)
            return ("transferred", "\(from) → \(name(transfer.toDeviceID)): \(MediaSummary.session(transfer.session))")
        case .queue(let change):
            return ("queue", "\(name(change.deviceID)): \(Self.queueChange(change))")
        case .castState(let change):
            let words = [change.state, change.previous].map(Self.castState)
            return ("cast state", "\(words[0]) (was \(words[1]))")
        case .lagged(let lagged):
            return ("lagged", "fell behind, \(count(Int(lagged.dropped), "event")) dropped; a fresh snapshot follows")
        case nil:
            return ("unknown", "an event this castc does not know (sequence \(event.sequence))")
        }
    }

    /// "2 items (#7, #8) inserted at 3", "item #4 removed", "reordered: #5, #3, #4": the
    /// device's ids, written #ID as castc's queue commands take them (positions are numbers).
    static func queueChange(_ change: Castd_V1_QueueChange) -> String {
        let ids = change.itemIds.map { "#\($0)" }.joined(separator: ", ")
        let items = change.itemIds.count == 1 ? "item \(ids)" : "\(change.itemIds.count) items (\(ids))"
        switch change.kind {
        case .inserted:
            let place =
                change.index >= 0
                ? " at \(change.index + 1)"
                : change.insertBefore != 0 ? " before #\(change.insertBefore)" : " at the end"
            return "\(items) inserted\(place)"
        case .removed: return "\(items) removed"
        case .updated: return "\(items) updated"
        case .reordered:
            let order = change.order.map { "#\($0)" }.joined(separator: ", ")
            return order.isEmpty ? "\(items) moved" : "reordered: \(order)"
        case .unspecified, .UNRECOGNIZED: return "changed"
        }
    }

    static func castState(_ state: CastdCastState) -> String {
        switch state {
        case .unspecified: "unknown"
        case .noDevicesAvailable: "no devices available"
        case .notConnected: "not connected"
        case .connecting: "connecting"
        case .connected: "connected"
        case .UNRECOGNIZED(let value): "state \(value)"
        }
    }

    private mutating func remember(_ device: CastdDevice) {
        if !device.friendlyName.isEmpty { names[device.id] = device.friendlyName }
    }

    private func name(_ id: String, fallback: String = "") -> String {
        names[id] ?? (fallback.isEmpty ? id : fallback)
    }

    private func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    /// `14:03:07.250` in the formatter's time zone.
    func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute, .second], from: date)
        let seconds = date.timeIntervalSince1970
        let milliseconds = Int((seconds - seconds.rounded(.down)) * 1000)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return
            "\(pad(parts.hour ?? 0, 2)):\(pad(parts.minute ?? 0, 2)):\(pad(parts.second ?? 0, 2)).\(pad(milliseconds, 3))"
    }
}
