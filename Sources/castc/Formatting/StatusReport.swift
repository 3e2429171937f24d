import CastClient
import Foundation

/// `castc status`: the daemon, then each device with its session and media.
enum StatusReport {
    static func render(_ status: CastdStatusResponse, now: Date) -> String {
        var blocks: [String] = []
        if status.hasDaemon { blocks.append(daemon(status.daemon, now: now)) }

        // Devices in the daemon's order, then any device ids only sessions or media name.
        var deviceIDs = status.devices.map(\.id)
        for id in status.sessions.map(\.deviceID) + status.media.map(\.deviceID) where !deviceIDs.contains(id) {
            deviceIDs.append(id)
        }
        if deviceIDs.isEmpty { blocks.append(DeviceTable.noDevices) }
        for id in deviceIDs {
            blocks.append(
                device(
                    id: id,
                    device: status.devices.first { $0.id == id },
                    sessions: status.sessions.filter { $0.deviceID == id },
                    media: status.media.filter { $0.deviceID == id },
                    now: now
                )
            )
        }
        return blocks.joined(separator: "\n\n")
    }

    static func daemon(_ daemon: CastdDaemonInfo, now: Date) -> String {
        var summary = daemon.version.isEmpty ? "running" : daemon.version
        if daemon.startedAtMs > 0 {
            let uptime = now.timeIntervalSince1970 - Double(daemon.startedAtMs) / 1000
            summary += ", up \(PlaybackTime.formatUptime(uptime))"
        }
        summary += ", \(daemon.clients) client\(daemon.clients == 1 ? "" : "s")"
        var rows = [["castd", summary]]
        if !daemon.socketPath.isEmpty { rows.append(["socket", daemon.socketPath]) }
        if !daemon.discovery.isEmpty { rows.append(["discovery", daemon.discovery]) }
        return TextTable.render(rows)
    }

    static func device(
        id: String,
        device: CastdDevice?,
        sessions: [CastdSession],
        media: [CastdMediaStatus],
        now: Date
    ) -> String {
        var title: String
        var rows: [[String]] = []
        if let device {
            let name = device.friendlyName.isEmpty ? device.id : device.friendlyName
            let details = [device.model, DeviceTable.address(device)].filter { !$0.isEmpty && $0 != "-" }
            title = details.isEmpty ? name : "\(name) (\(details.joined(separator: ", ")))"
            title += ": \(DeviceTable.state(device))"
            if device.linkState == .failed, !device.linkError.isEmpty { rows.append(["error", device.linkError]) }
            if device.hasReceiver, device.receiver.hasVolume {
                rows.append(["volume", MediaSummary.volume(device.receiver.volume)])
            }
        } else {
            let name = sessions.first?.deviceName ?? ""
            title = name.isEmpty ? "device \(id)" : name
        }
        for session in sessions { rows.append(["session", MediaSummary.session(session)]) }
        for status in media {
            rows.append(["player", MediaSummary.state(status)])
            if let mediaTitle = MediaSummary.title(status) { rows.append(["title", mediaTitle]) }
            if status.hasMedia { rows.append(["position", MediaSummary.position(status, at: now)]) }
        }
        guard !rows.isEmpty else { return title }
        let body = TextTable.render(rows).split(separator: "\n", omittingEmptySubsequences: false)
        return ([title] + body.map { "  " + $0 }).joined(separator: "\n")
    }
}
