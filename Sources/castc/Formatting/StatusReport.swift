import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `castc status`: the daemon, then each device with its session and media.
enum StatusReport {
    /// `noDevices`: what to say when castd lists no device (``NoDevicesHelp``), if not the
    /// usual line. `daemonWide`: the whole answer when `status` was narrowed to some devices
    /// (`--device`), which castd's own lines (the cast state, what it serves) count.
    static func render(
        _ status: CastdStatusResponse, daemonWide: CastdStatusResponse? = nil, now: Date, verbose: Bool = false,
        noDevices: String? = nil
    ) -> String {
        var blocks: [String] = []
        if status.hasDaemon {
            let whole = daemonWide ?? status
            blocks.append(
                daemon(
                    whole.daemon, castState: whole.castState, devices: whole.devices, sessions: whole.sessions,
                    now: now, verbose: verbose))
        }

        // Devices in the daemon's order, then any device ids only sessions or media name.
        var deviceIDs = status.devices.map(\.id)
        for id in status.sessions.map(\.deviceID) + status.media.map(\.deviceID) where !deviceIDs.contains(id) {
            deviceIDs.append(id)
        }
        if deviceIDs.isEmpty { blocks.append(noDevices ?? DeviceTable.noDevices) }
        for id in deviceIDs {
            blocks.append(
                device(
                    id: id,
                    device: status.devices.first { $0.id == id },
                    sessions: status.sessions.filter { $0.deviceID == id },
                    media: status.media.filter { $0.deviceID == id },
                    now: now,
                    verbose: verbose
                )
            )
        }
        return blocks.joined(separator: "\n\n")
    }

    /// The daemon's rows; first, castd's cast state (from a castd that gives one).
    static func daemon(
        _ daemon: CastdDaemonInfo, castState: CastdCastState = .unspecified, devices: [CastdDevice] = [],
        sessions: [CastdSession] = [], now: Date, verbose: Bool = false
    ) -> String {
        var rows: [[String]] = []
        if let cast = castSummary(castState, devices: devices) { rows.append(["cast", cast]) }
        var summary = daemon.version.isEmpty ? "running" : daemon.version
        if daemon.startedAtMs > 0 {
            let uptime = now.timeIntervalSince1970 - Double(daemon.startedAtMs) / 1000
            summary += ", up \(PlaybackTime.formatUptime(uptime))"
        }
        if !daemon.mode.isEmpty { summary += ", \(daemon.mode) mode" }
        if daemon.pid > 0 { summary += ", pid \(daemon.pid)" }
        rows.append(["castd", summary])
        if !daemon.socketPath.isEmpty {
            var socket = daemon.socketPath
            if daemon.socketActivated { socket += " (socket-activated)" }
            switch daemon.access {
            case .control: socket += ", you may control"
            case .read: socket += ", you may only read"
            default: break
            }
            rows.append(["socket", socket])
        }
        if !daemon.discovery.isEmpty { rows.append(["discovery", daemon.discovery]) }
        let connected = devices.filter { $0.linkState == .connected }.count
        let open = sessions.filter(\.isOpen).count
        rows.append([
            "serving",
            "\(plural(devices.count, "device"))\(devices.isEmpty ? "" : " (\(connected) connected)"), "
                + "\(plural(open, "session")), \(plural(Int(daemon.clients), "client"))",
        ])
        if verbose {
            rows.append(["config", daemon.configPath.isEmpty ? "none (defaults)" : daemon.configPath])
            rows.append([
                "state", daemon.stateDirectory.isEmpty ? "none (sessions are not kept)" : daemon.stateDirectory,
            ])
            if daemon.hasLimits {
                let limits = daemon.limits
                rows.append([
                    "limits",
                    "frame \(limits.maxFrameBytes) B, \(limits.maxConnectionsPerUid) connections per uid, "
                        + "\(limits.maxCallsPerConnection) calls per connection, watcher queue \(limits.watcherQueue), "
                        + "idle close \(limits.idleTimeoutMs == 0 ? "never" : "after \(limits.idleTimeoutMs / 1000) s"), "
                        + "frame within \(limits.frameTimeoutMs == 0 ? "any time" : "\(limits.frameTimeoutMs / 1000) s")",
                ])
            }
        }
        return TextTable.render(rows)
    }

    /// castd's cast state in words, with the devices it is about: "connected to Den TV",
    /// "not connected (2 devices available)". Nil for a castd too old to give one.
    static func castSummary(_ state: CastdCastState, devices: [CastdDevice]) -> String? {
        func names(_ state: CastdCastState) -> String {
            let named = devices.filter { $0.castState == state }.map(DeviceTable.plainName)
            return named.isEmpty ? "" : " to " + named.joined(separator: ", ")
        }
        let words = EventFormatter.castState(state)
        switch state {
        case .unspecified, .UNRECOGNIZED: return nil
        case .noDevicesAvailable: return words
        case .notConnected: return words + " (\(plural(devices.count, "device")) available)"
        case .connecting, .connected: return words + names(state)
        }
    }

    private static func plural(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    static func device(
        id: String,
        device: CastdDevice?,
        sessions: [CastdSession],
        media: [CastdMediaStatus],
        now: Date,
        verbose: Bool = false
    ) -> String {
        var title: String
        var rows: [[String]] = []
        if let device {
            let name = DeviceTable.plainName(device)
            let details = [device.isGroup ? "group" : "", device.model, DeviceTable.address(device)]
                .filter { !$0.isEmpty && $0 != "-" }
            title = details.isEmpty ? name : "\(name) (\(details.joined(separator: ", ")))"
            title += ": \(DeviceTable.state(device))"
            let refusal = device.authentication.state == .refused
            // A refusal is the link's error: said once, on the auth row.
            if device.linkState == .failed || device.linkState == .reconnecting, !device.linkError.isEmpty,
                !(refusal && device.linkError.hasSuffix(device.authentication.detail))
            {
                rows.append(["error", device.linkError])
            }
            if let retry = DeviceTable.nextRetry(device, now: now) { rows.append(["retry", retry]) }
            if let authentication = DeviceTable.authenticationSummary(device) { rows.append(["auth", authentication]) }
            if verbose, let made = DeviceTable.madeBy(device) { rows.append(["device", made]) }
            if verbose, !device.authentication.deviceCertificate.isEmpty {
                rows.append(["certificate", device.authentication.deviceCertificate])
            }
            if !device.groupMembers.isEmpty { rows.append(["members", DeviceTable.members(device)]) }
            if let tv = DeviceTable.tv(device) { rows.append(["tv", tv]) }
            if device.hasReceiver, device.receiver.hasVolume {
                let volume = device.receiver.volume
                rows.append(["volume", verbose ? MediaSummary.deviceVolume(volume) : MediaSummary.volume(volume)])
            }
        } else {
            let name = sessions.first?.deviceName ?? ""
            title = name.isEmpty ? "device \(id)" : name
        }
        for session in sessions {
            rows.append(["session", MediaSummary.session(session)])
            if verbose, !session.namespaces.isEmpty {
                rows.append(["namespaces", session.namespaces.joined(separator: ", ")])
            }
        }
        for status in media { rows += mediaRows(status, at: now, verbose: verbose) }
        guard !rows.isEmpty else { return title }
        let body = TextTable.render(rows).split(separator: "\n", omittingEmptySubsequences: false)
        return ([title] + body.map { "  " + $0 }).joined(separator: "\n")
    }

    /// The media status, one row per fact: player, title, metadata, position, live range,
    /// rate, queue, tracks, ad, video, stream volume; with `verbose` also the URL, content type
    /// and the commands the player supports. With `date`, positions and waits are estimated for
    /// then.
    static func mediaRows(_ status: CastdMediaStatus, at date: Date?, verbose: Bool) -> [[String]] {
        var rows: [[String]] = [["player", MediaSummary.state(status)]]
        if let mediaTitle = MediaSummary.title(status) { rows.append(["title", mediaTitle]) }
        if status.hasMedia {
            for (label, text) in MediaSummary.metadataDetails(status.media.metadata) { rows.append([label, text]) }
            rows.append(["position", MediaSummary.position(status, at: date)])
        }
        if status.hasLiveSeekableRange { rows.append(["live", MediaSummary.liveRange(status.liveSeekableRange)]) }
        if let rate = MediaSummary.rate(status) { rows.append(["rate", rate]) }
        if let queue = MediaSummary.queue(status) { rows.append(["queue", queue]) }
        if let tracks = MediaSummary.tracks(status) { rows.append(["tracks", tracks]) }
        if let ad = MediaSummary.ad(status, at: date) { rows.append(["ad", ad]) }
        if status.hasVideoInfo, let video = MediaSummary.video(status.videoInfo) { rows.append(["video", video]) }
        if status.hasVolume, status.volume.muted || status.volume.level < 1 {
            rows.append(["stream", "volume " + MediaSummary.volume(status.volume)])
        }
        if verbose {
            if status.hasMedia, MediaSummary.title(status) != status.media.contentID, !status.media.contentID.isEmpty {
                rows.append(["url", status.media.contentID])
            }
            if status.hasMedia, !status.media.contentType.isEmpty { rows.append(["type", status.media.contentType]) }
            let commands = status.supportedCommandNames
            rows.append(["commands", commands.isEmpty ? "none reported" : commands.joined(separator: ", ")])
        }
        return rows
    }
}
