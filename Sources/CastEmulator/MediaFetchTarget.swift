import NIOCore

/// A URL the device fetches (``EmulatorConfiguration/fetchMedia``): `http://` from an IP
/// literal or `localhost`, what castd's media server and local test servers hand out.
///
/// Nothing else is fetched, and no name is resolved: `https://` and URLs naming a host
/// (`https://example.com/…`, used all over the tests) are left alone, the reason recorded, and
/// the load goes on as if the device had played them.
struct MediaFetchTarget: Sendable, Hashable {
    /// The URL as the sender gave it.
    var url: String
    /// Where to connect: the IP literal (`localhost` is 127.0.0.1).
    var address: SocketAddress
    /// The `Host` header: the URL's host and port as written.
    var hostHeader: String
    /// The request target: path and query (`/` when the URL has none).
    var path: String

    /// Why a URL is not fetched.
    struct NotFetched: Error, Sendable, Hashable, CustomStringConvertible {
        var description: String
    }

    /// The target of `url`, or why it is not fetched.
    static func parse(_ url: String) -> Result<MediaFetchTarget, NotFetched> {
        func refuse(_ reason: String) -> Result<MediaFetchTarget, NotFetched> {
            .failure(NotFetched(description: reason))
        }
        let lowered = url.lowercased()
        if lowered.hasPrefix("https://") {
            return refuse("https:// is not fetched (only http:// from an IP address or localhost)")
        }
        guard lowered.hasPrefix("http://") else { return refuse("not an http:// URL") }
        let rest = url.dropFirst("http://".count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if let fragment = path.firstIndex(of: "#") { path = String(path[..<fragment]) }
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        guard !authority.contains("@") else { return refuse("a URL with user information is not fetched") }

        var host = Substring(authority)
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return refuse("the host is not valid") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return refuse("the host is not valid") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        var port = 80
        if let portText, !portText.isEmpty {
            guard let parsed = Int(portText), (1...65535).contains(parsed) else {
                return refuse("the port is not valid")
            }
            port = parsed
        }
        guard !host.isEmpty else { return refuse("the URL has no host") }
        let literal = host.lowercased() == "localhost" ? "127.0.0.1" : String(host)
        // inet_pton only: a name is never looked up.
        guard let address = try? SocketAddress(ipAddress: literal, port: port) else {
            return refuse("the host \(host) is not an IP address or localhost (names are not resolved)")
        }
        return .success(
            MediaFetchTarget(url: url, address: address, hostHeader: String(authority), path: path))
    }
}

/// What the device fetches when an item becomes current: the start of its content and each text
/// track; the URLs it leaves alone, with why.
struct MediaFetchPlan: Sendable, Hashable {
    var content: MediaFetchTarget?
    var textTracks: [MediaFetchTarget] = []
    /// URLs not fetched, and why.
    var notFetched: [Skipped] = []

    struct Skipped: Sendable, Hashable {
        var url: String
        var purpose: EmulatorFetchRecord.Purpose
        var reason: String
    }

    var isEmpty: Bool { content == nil && textTracks.isEmpty }

    init() {}

    init(for item: MediaQueueItem) {
        func consider(_ url: String, _ purpose: EmulatorFetchRecord.Purpose) -> MediaFetchTarget? {
            switch MediaFetchTarget.parse(url) {
            case .success(let target): return target
            case .failure(let reason):
                notFetched.append(Skipped(url: url, purpose: purpose, reason: reason.description))
                return nil
            }
        }
        content = consider(item.contentID, .load)
        for track in item.media["tracks"]?.arrayValue ?? [] where track["type"]?.stringValue == "TEXT" {
            guard let url = track["trackContentId"]?.stringValue ?? track["contentId"]?.stringValue, !url.isEmpty
            else { continue }
            if let target = consider(url, .textTrack) { textTracks.append(target) }
        }
    }
}

/// A current item waiting, BUFFERING, for its media to be fetched before it plays (or pauses).
struct PendingMediaFetch {
    /// The item's entry (``MediaPlayer/entries``) the fetch is for.
    var entry: Int
    var plan: MediaFetchPlan
    /// PLAYING or PAUSED: what the item becomes once its media has arrived; PLAY and PAUSE
    /// meanwhile change this.
    var targetState: String
    /// The LOAD (QUEUE_LOAD, RESUME_SESSION) that waits for its answer, and its record.
    var load: (command: MediaCommand, record: EmulatorLoadRecord)?
}

extension MediaPlayer {
    /// Plans the fetch of the current item and holds it BUFFERING for it, unless it has nothing
    /// to fetch. Returns the URLs left alone, as records.
    mutating func holdForFetch(at now: Duration) -> [EmulatorFetchRecord] {
        let plan = MediaFetchPlan(for: current)
        if !plan.isEmpty {
            fetch = PendingMediaFetch(entry: entries, plan: plan, targetState: playerState)
            playerState = Self.buffering
        }
        return plan.notFetched.map {
            EmulatorFetchRecord(
                time: now, url: $0.url, purpose: $0.purpose, mediaSessionID: mediaSessionID, notFetched: $0.reason)
        }
    }
}
