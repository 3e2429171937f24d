import CastdSupport

/// What the device's media fetching is about, read from the device after each of its changes.
struct MediaFetchView: Equatable {
    /// The current item of the media session.
    struct Item: Equatable {
        var mediaSessionID: Int
        /// ``MediaPlayer/entries`` when it became current: the same item entered again (a repeat,
        /// a jump back) is fetched again.
        var entry: Int
        var content: MediaFetchTarget?
        /// Seconds, when the sender said (not for a live stream).
        var duration: Double?

        func isSame(as other: Item?) -> Bool {
            other.map { $0.mediaSessionID == mediaSessionID && $0.entry == entry } ?? false
        }
    }

    var item: Item?
    /// What the item waits for, BUFFERING.
    var pending: MediaFetchPlan?
    /// PLAYING its content (not waiting, not in an ad).
    var playing = false
    var rate = 1.0
    var position = 0.0
    var seeks = 0

    init(_ device: EmulatedDevice, now: Duration) {
        guard device.settings.fetchMedia, let player = device.player else { return }
        let current = player.current
        item = Item(
            mediaSessionID: player.mediaSessionID, entry: player.entries,
            content: try? MediaFetchTarget.parse(current.contentID).get(),
            duration: current.statesDuration && !current.isLive ? current.duration : nil)
        pending = player.fetch?.plan
        playing = player.fetch == nil && player.playerState == MediaPlayer.playing && player.ad == nil
        rate = player.playbackRate
        position = player.currentTime(at: now)
        seeks = player.seeks
    }
}

/// The emulator's side of ``EmulatorConfiguration/fetchMedia``: one task at a time per media
/// session (each new one waits for the one it replaces to end, so that never more than one
/// request is in flight) that fetches what the device waits for, reads where a SEEK lands, and
/// reads onward while the content plays. Kept in the emulator's core, under its lock, and
/// brought in line with the device (``reconcile(_:emulator:)``) after every change.
struct MediaFetchControl {
    /// The size of a range read.
    static let chunk: Int64 = 65_536
    /// Text tracks are read whole, up to this.
    static let textTrackLimit = 1 << 20
    /// How fast content is read whose duration (or size) is unknown, at playback rate 1.
    static let unknownBytesPerSecond = 262_144.0

    enum Job: Equatable {
        /// The fetch the current item waits for.
        case load
        /// A seek read if one is due, then, if `onward`, reads at the playback rate.
        case read(onward: Bool)
    }

    /// The item the state below is about.
    private(set) var item: MediaFetchView.Item?
    /// The content's size, from the first fetch.
    private(set) var size: Int64?
    /// Where the next onward read starts.
    private(set) var nextOffset: Int64 = 0
    /// The end was reached (or a read failed): no more onward reads until a seek.
    private(set) var atEnd = false
    /// A seek read to make before anything else.
    private(set) var seekOffset: Int64?
    private var seeksSeen = 0
    /// The item's fetch has just ended: an item that starts later than 0 is read there next.
    private var justLoaded = false
    private var rate = 1.0
    private var job: Job?
    private var task: Task<Void, Never>?
    /// Numbers the tasks: only the latest one may change the state.
    private var generation = 0
    /// Tasks started and not ended yet (a cancelled one may still be closing its connection).
    private(set) var running = 0
    private var stopped = false

    /// The `--log` file, for fetch records.
    var log: EmulatorMessageLog?

    /// After a change of the device: records the URLs it left alone in `--log`, and brings the
    /// fetching in line with it.
    mutating func deviceChanged(
        _ device: EmulatedDevice, _ outcome: DeviceOutcome, now: Duration, emulator: CastDeviceEmulator
    ) {
        for record in outcome.fetchRecords { log?.record(fetch: record) }
        reconcile(MediaFetchView(device, now: now), emulator: emulator)
    }

    /// Starts, replaces or ends the task so that it does what `view` calls for.
    mutating func reconcile(_ view: MediaFetchView, emulator: CastDeviceEmulator) {
        guard !stopped else { return }
        if !(view.item?.isSame(as: item) ?? (item == nil)) {
            cancel()
            item = view.item
            (size, nextOffset, atEnd, seekOffset, seeksSeen) = (nil, 0, false, nil, view.seeks)
        }
        guard let item else { return }
        if view.pending != nil {
            if job != .load { start(.load, view, emulator) }
            return
        }
        let seeked = view.seeks != seeksSeen || (justLoaded && view.position > 0)
        (seeksSeen, justLoaded) = (view.seeks, false)
        if seeked, let size, size > 0, let duration = item.duration, duration > 0, item.content != nil {
            let offset = min(size - 1, max(0, Int64(Double(size) * view.position / duration)))
            (seekOffset, nextOffset, atEnd) = (offset, offset, false)
        }
        let onward = view.playing && !atEnd && item.content != nil
        if seeked && seekOffset != nil {
            start(.read(onward: onward), view, emulator)
        } else if onward {
            if job != .read(onward: true) || rate != view.rate { start(.read(onward: true), view, emulator) }
        } else if job == .read(onward: true) {
            cancel()
        }
    }

    /// Ends every task for good (the emulator shuts down).
    mutating func stop() {
        cancel()
        stopped = true
    }

    var isBusy: Bool { running > 0 }

    private mutating func cancel() {
        task?.cancel()
        task = nil
        job = nil
        generation += 1
    }

    private mutating func start(_ job: Job, _ view: MediaFetchView, _ emulator: CastDeviceEmulator) {
        let previous = task
        cancel()
        self.job = job
        rate = view.rate
        running += 1
        let token = generation
        task = Task { [plan = view.pending] in
            await previous?.value
            if !Task.isCancelled {
                switch job {
                case .load: await Self.load(plan ?? MediaFetchPlan(), token: token, emulator)
                case .read(let onward): await Self.read(onward: onward, token: token, emulator)
                }
            }
            emulator.core.withLock { $0.mediaFetch.ended(token) }
        }
    }

    private mutating func ended(_ token: Int) {
        running -= 1
        if token == generation {
            task = nil
            job = nil
        }
    }

    // MARK: what tasks read and write

    private func current(_ token: Int) -> MediaFetchView.Item? {
        token == generation && !stopped ? item : nil
    }

    /// After the fetch the item waited for: the content's size, and where reading goes on.
    private mutating func loaded(_ token: Int, _ record: EmulatorFetchRecord) {
        guard current(token) != nil else { return }
        size = record.size
        justLoaded = true
        advance(past: 0, record)
    }

    private mutating func advance(past offset: Int64, _ record: EmulatorFetchRecord) {
        nextOffset = offset + Int64(record.bytes)
        let short = record.bytes < Int(Self.chunk)
        atEnd = !record.succeeded || record.bytes == 0 || size.map { nextOffset >= $0 } ?? short
    }

    /// The seconds one chunk lasts at the playback rate.
    private var chunkInterval: Duration {
        var bytesPerSecond = Self.unknownBytesPerSecond
        if let size, let duration = item?.duration, size > 0 { bytesPerSecond = Double(size) / duration }
        return .seconds(Double(Self.chunk) / (bytesPerSecond * max(rate, 0.01)))
    }

    private func onwardOffset(_ token: Int) -> Int64? {
        current(token) != nil ? nextOffset : nil
    }

    private enum Step {
        case seek(Int64)
        case onward(after: Duration)
    }

    private func nextStep(_ token: Int, onward: Bool) -> Step? {
        guard current(token) != nil else { return nil }
        if let seekOffset { return .seek(seekOffset) }
        return onward && !atEnd ? .onward(after: chunkInterval) : nil
    }

    // MARK: tasks

    private static func load(_ plan: MediaFetchPlan, token: Int, _ emulator: CastDeviceEmulator) async {
        guard let item = emulator.core.withLock({ $0.mediaFetch.current(token) }) else { return }
        var failure: MediaFault?
        if let content = plan.content {
            let record = await fetch(content, .load, range: 0...(chunk - 1), limit: Int(chunk), item, emulator)
            if Task.isCancelled { return }
            emulator.core.withLock { $0.mediaFetch.loaded(token, record) }
            failure = record.succeeded ? nil : .unreachable(record.error ?? "failed")
            if failure == nil, emulator.configuration.probeMedia {
                failure = await MediaPlayability.check(content.url, emulator: emulator).map(MediaFault.unplayable)
                if Task.isCancelled { return }
            }
        }
        for track in plan.textTracks where failure == nil {
            let record = await fetch(track, .textTrack, range: nil, limit: textTrackLimit, item, emulator)
            if Task.isCancelled { return }
            failure = record.succeeded ? nil : .unreachable("text track \(track.url): \(record.error ?? "failed")")
        }
        let now = emulator.clock.now()
        let outcome = emulator.transition {
            $0.mediaFetched(mediaSessionID: item.mediaSessionID, entry: item.entry, failure: failure, now: now)
        }
        emulator.report(outcome, logger: emulator.logger)
    }

    private static func read(onward: Bool, token: Int, _ emulator: CastDeviceEmulator) async {
        while !Task.isCancelled {
            guard let step = emulator.core.withLock({ $0.mediaFetch.nextStep(token, onward: onward) }) else { return }
            let offset: Int64
            let purpose: EmulatorFetchRecord.Purpose
            switch step {
            case .seek(let at):
                (offset, purpose) = (at, .seek)
            case .onward(let interval):
                let clock = emulator.clock
                do { try await clock.sleep(until: clock.now() + interval) } catch { return }
                guard let at = emulator.core.withLock({ $0.mediaFetch.onwardOffset(token) }) else { return }
                (offset, purpose) = (at, .read)
            }
            guard let item = emulator.core.withLock({ $0.mediaFetch.current(token) }), let content = item.content else {
                return
            }
            let range = offset...(offset + chunk - 1)
            let record = await fetch(content, purpose, range: range, limit: Int(chunk), item, emulator)
            if Task.isCancelled { return }
            emulator.core.withLock { core in
                guard core.mediaFetch.current(token) != nil else { return }
                if purpose == .seek { core.mediaFetch.seekOffset = nil }
                core.mediaFetch.advance(past: offset, record)
            }
        }
    }

    /// One GET, recorded (history, `--log`, the log) whatever came of it.
    private static func fetch(
        _ target: MediaFetchTarget, _ purpose: EmulatorFetchRecord.Purpose, range: ClosedRange<Int64>?, limit: Int,
        _ item: MediaFetchView.Item, _ emulator: CastDeviceEmulator
    ) async -> EmulatorFetchRecord {
        var record = EmulatorFetchRecord(
            time: .zero, url: target.url, purpose: purpose, mediaSessionID: item.mediaSessionID,
            range: range.map { "bytes=\($0.lowerBound)-\($0.upperBound)" })
        do {
            let response = try await MediaFetchClient.get(
                target, range: range, limit: limit, timeout: emulator.configuration.mediaFetchTimeout)
            (record.status, record.bytes, record.size) = (response.status, response.bytes, response.size)
            if !(200..<300).contains(response.status) { record.error = "HTTP \(response.status)" }
        } catch is CancellationError {
            record.error = "cancelled"
        } catch {
            record.error = "\(error)"
        }
        record.time = emulator.clock.now()
        emulator.core.withLock { $0.device.history.record(record) }
        emulator.core.withLock { $0.mediaFetch.log }?.record(fetch: record)
        let what = "\(purpose.rawValue) \(record.url) \(record.range ?? "whole")"
        let result = record.error ?? "\(record.status ?? 0), \(record.bytes) bytes"
        emulator.logger.info("media session \(item.mediaSessionID): fetched \(what): \(result)")
        return record
    }
}
