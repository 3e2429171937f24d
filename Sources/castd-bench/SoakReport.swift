import CastClient
import Foundation

/// Writes SOAK.md: the machine, the parameters, each criterion with its verdict, then the
/// figures behind them.
struct SoakReport {
    var machine: MachineDescription
    var buildInfo: String
    var quick: Bool
    var command: String
    var outcome: SoakOutcome
    var wallSeconds: Double

    struct Criterion {
        var name: String
        var target: String
        var measured: String
        var passed: Bool
    }

    static let driftLimit = 0.05

    var criteria: [Criterion] {
        let o = outcome
        let t = o.tally
        let w = o.watcherTally
        var criteria: [Criterion] = []
        if let failure = o.failure {
            criteria.append(Criterion(name: "the soak ran to its end", target: "yes", measured: failure, passed: false))
            return criteria
        }
        let lost = t.lost + t.late + t.missingMessages + w.lost + w.late
        criteria.append(
            Criterion(
                name: "lost replies", target: "0",
                measured:
                    "\(lost) (\(t.lost) calls without a status by the deadline or the connection's end, \(t.late) late statuses, \(t.missingMessages) OK statuses without their message; \(w.lost + w.late) on watchers)",
                passed: lost == 0 && t.connectionsLost == 0))
        let duplicated = t.duplicated + t.unknown + t.malformed + w.duplicated + w.unknown + w.malformed
        criteria.append(
            Criterion(
                name: "duplicated replies", target: "0",
                measured:
                    "\(duplicated) (\(t.duplicated + w.duplicated) frames for calls already ended or a unary call's second message, \(t.unknown + w.unknown) for call ids never opened, \(t.malformed + w.malformed) malformed)",
                passed: duplicated == 0))
        let comparison = o.comparison
        let watchEnds = o.watchers.filter { $0.stopped && $0.endCode == Int(CastdCode.cancelled.rawValue) }.count
        var same =
            comparison.map {
                "\($0.identical ? "yes" : "no"): \($0.watchers) watchers, sequences \($0.from + 1)…\($0.through) (\(Format.grouped($0.compared)) events) compared"
            } ?? "not compared"
        if let comparison, !comparison.differences.isEmpty {
            same += "; " + comparison.differences.prefix(3).joined(separator: "; ")
        }
        if watchEnds != o.watchers.count {
            same += "; \(o.watchers.count - watchEnds) watchers' streams ended before they were cancelled"
        }
        criteria.append(
            Criterion(
                name: "every watcher saw the same events in the same order", target: "yes", measured: same,
                passed: (comparison?.identical ?? false) && watchEnds == o.watchers.count && comparison!.compared > 0))
        if let drift = o.drift, let warm = o.warmRSS, let end = o.endRSS {
            criteria.append(
                Criterion(
                    name: "resident memory drift", target: "< 5 %",
                    measured:
                        "\(Format.fixed(drift * 100, 2)) % (\(Format.mebibytes(kibibytes: warm)) after the first \(SoakOutcome.warmUpTenths == 2 ? "fifth" : "\(SoakOutcome.warmUpTenths) tenths") of the requests → \(Format.mebibytes(kibibytes: end)) after the last)",
                    passed: drift < Self.driftLimit))
        } else {
            criteria.append(
                Criterion(name: "resident memory drift", target: "< 5 %", measured: "not measured", passed: false))
        }
        criteria.append(
            Criterion(
                name: "open file descriptors, start and end", target: "equal",
                measured:
                    "\(o.fdsBefore.count) → \(o.fdsAfter.count)"
                    + (o.fdSettleSeconds.map { " (settled \(Format.fixed($0, 2)) s after the last client left)" }
                        ?? " (not equal within 30 s)") + fdDifference,
                passed: !o.fdsBefore.isEmpty && o.fdsBefore.count == o.fdsAfter.count))
        let drops = o.drops.count
        let cut = o.drops.filter { $0.linksCut > 0 }.count
        criteria.append(
            Criterion(
                name: "the links dropped, castd reconnected, and castd lived", target: "drops > 0, all relinked",
                measured:
                    "\(drops) drops (\(cut) cut a link); castd reported \(o.reportedDrops) link losses and \(o.reconnections) reconnections; devices and sessions back at the end: \(o.devicesRelinked ? "yes" : "no"); castd running: \(o.castdRunning ? "yes" : "no")",
                passed: cut > 0 && o.devicesRelinked && o.castdRunning && o.reportedDrops >= cut
                    && o.reconnections >= cut))
        return criteria
    }

    var passed: Bool { criteria.allSatisfy(\.passed) }

    private var fdDifference: String {
        let before = Proc.descriptorKinds(outcome.fdsBefore)
        let after = Proc.descriptorKinds(outcome.fdsAfter)
        let changes = Set(before.keys).union(after.keys).sorted().compactMap { kind -> String? in
            let delta = after[kind, default: 0] - before[kind, default: 0]
            return delta == 0 ? nil : "\(kind) \(delta > 0 ? "+" : "")\(delta)"
        }
        return changes.isEmpty ? "" : "; " + changes.joined(separator: ", ")
    }

    func markdown() -> String {
        let o = outcome
        let p = o.parameters
        var out: [String] = []
        out.append("# castd soak")
        out.append("")
        out.append(
            "Written by `castd-bench soak` (`make soak`, scripts/soak.sh). castd runs as a process (a release build); "
                + "the driver hosts two emulated Cast devices, each with a session and media playing, and connects "
                + "\(p.clients) clients and \(p.watchers) watchers to castd's socket. Each client makes "
                + "\(Format.grouped(p.requests)) requests from a fixed, seeded mix, \(p.depth) open at once on its connection, "
                + "and reads castd.v1 frames itself (LengthPrefixFraming and `castd.v1.Frame`): every call must end with "
                + "exactly one status frame, and a unary OK status comes after exactly one message. A failure status "
                + "(UNAVAILABLE while a link is down, ABORTED when a newer request superseded it) is a reply; a call "
                + "with no status within \(p.deadline) is lost. Every \(p.dropInterval) the driver cuts castd's TLS link "
                + "to one of the devices (`CastDeviceEmulator.dropLinks()`, the devices in turn); castd reconnects and "
                + "resumes the session by itself.")
        if quick {
            out.append("")
            out.append("**Quick run (`--quick`): a smoke test of the soak. Do not quote these numbers.**")
        }
        out.append("")
        out.append("## Machine and run")
        out.append("")
        out += machine.reportLines(buildInfo: buildInfo)
        out.append("- Command: `\(command)`; the soak took \(Format.fixed(wallSeconds, 0)) s in all")
        if let load = o.load { out.append("- Load while the requests ran: \(load.summary)") }
        out.append("")
        out.append("## Parameters")
        out.append("")
        out.append("| | |")
        out.append("|---|---|")
        out.append("| clients (connections) | \(p.clients) |")
        out.append("| requests per client | \(Format.grouped(p.requests)) (\(Format.grouped(p.total)) in all) |")
        out.append("| calls open at once per client | \(p.depth) |")
        out.append("| watchers (connections with a Watch for the whole run) | \(p.watchers) |")
        out.append(
            "| castd's watcher queue (events a watcher may fall behind by before castd drops them and says `lagged`) | "
                + (o.watcherQueue.map {
                    "\(Format.grouped($0)) (`--watcher-queue`; castd's default, 256, is a tenth of a second of the soak's events)"
                } ?? "castd's default, 256") + " |")
        out.append("| emulated devices | 2, each a session of the Default Media Receiver playing a 1-hour video |")
        out.append("| link drops | every \(p.dropInterval), the devices in turn |")
        out.append("| deadline per call | \(p.deadline) |")
        let mix = SoakRequestKind.allCases.map { "\($0.method.rawValue) \($0.weight) %" }.joined(separator: ", ")
        out.append(
            "| request mix (seed \(p.seed)) | \(mix); each media or volume request names one of the two devices at random |"
        )
        out.append("")
        out.append("## Criteria")
        out.append("")
        out.append("| Criterion | Target | Measured | |")
        out.append("|---|---|---|---|")
        for criterion in criteria {
            out.append(
                "| \(criterion.name) | \(criterion.target) | \(criterion.measured) | \(criterion.passed ? "✅ pass" : "❌ fail") |"
            )
        }
        out.append("")
        out.append(passed ? "**All criteria pass.**" : "**At least one criterion fails.**")
        if o.failure != nil {
            out.append("")
            return out.joined(separator: "\n") + "\n"
        }

        let t = o.tally
        out.append("")
        out.append("## Requests")
        out.append("")
        let rate = o.seconds > 0 ? Double(t.replies) / o.seconds : 0
        out.append(
            "\(Format.grouped(t.calls)) requests in \(Format.fixed(o.seconds, 1)) s (from the first client's connection to the last reply): "
                + "\(Format.grouped(Int(rate))) requests/s. castd used \(Format.fixed(o.castdCPUSeconds, 1)) CPU seconds meanwhile "
                + "(\(Format.fixed(o.castdCPUSeconds / max(o.seconds, 0.001) * 100, 0)) % of one core).")
        let all = Samples(t.latencies.values.flatMap { $0 })
        if !all.isEmpty {
            out.append("")
            out.append(
                "Latency, request sent → status read, every request: p50 \(Format.duration(all.median)), "
                    + "p99 \(Format.duration(all.p99)), max \(Format.duration(all.max)).")
        }
        out.append("")
        let codesSeen = Set(t.codes.values.flatMap(\.keys)).sorted()
        out.append(
            "| method | requests | p50 | p99 | " + codesSeen.map { SoakTally.codeName($0) }.joined(separator: " | ")
                + " |")
        out.append("|---|--:|--:|--:|" + codesSeen.map { _ in "--:|" }.joined())
        for kind in SoakRequestKind.allCases {
            let method = kind.method
            let counts = t.codes[method, default: [:]]
            let samples = Samples(t.latencies[method, default: []])
            let p50 = samples.isEmpty ? "" : Format.duration(samples.median)
            let p99 = samples.isEmpty ? "" : Format.duration(samples.p99)
            let cells = codesSeen.map { counts[$0].map { Format.grouped($0) } ?? "" }
            out.append(
                "| \(method.rawValue)\(kind.reachesDevice ? "" : " (castd only)") | \(Format.grouped(counts.values.reduce(0, +))) | \(p50) | \(p99) | "
                    + cells.joined(separator: " | ") + " |")
        }
        out.append("")
        out.append(
            "Failure codes are replies, not losses: UNAVAILABLE while castd's link to the device is down, "
                + "ABORTED (REPLACED) when a newer request of the same kind superseded the call, "
                + "FAILED_PRECONDITION when the session was being resumed.")
        if !t.notes.isEmpty || !o.watcherTally.notes.isEmpty {
            out.append("")
            out.append("Anomalies (the first ones):")
            out.append("")
            for note in t.notes + o.watcherTally.notes { out.append("- \(note)") }
        }

        out.append("")
        out.append("## Link drops and watchers")
        out.append("")
        let perDevice = Dictionary(grouping: o.drops, by: \.device).mapValues(\.count)
        out.append(
            "\(o.drops.count) drops ("
                + perDevice.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
                + "); castd reported \(o.reportedDrops) link losses and \(o.reconnections) reconnections in device events. "
                + "The drops, in seconds from the start (links cut): "
                + o.drops.map { "\(Format.fixed($0.at, 1)) \($0.device.suffix(1)) (\($0.linksCut))" }.joined(
                    separator: ", ") + ".")
        if let first = o.watchers.first {
            let states = first.log.sessionStates.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "\(Self.sessionStateName($0.key)) \($0.value)" }.joined(separator: ", ")
            out.append("Session events: \(states.isEmpty ? "none" : states).")
        }
        if let comparison = o.comparison {
            out.append("")
            out.append(
                "Each watcher logged every event (its sequence number and a digest of its bytes). The logs were compared "
                    + "from the latest of the watchers' snapshots to the sequence a last watcher's snapshot gave at the end, "
                    + "once every watcher had read that far: \(Format.grouped(comparison.compared)) events, sequences "
                    + "\(comparison.from + 1)…\(comparison.through).")
            out.append("")
            out.append("| watcher | events | lagged | gaps | how its Watch ended |")
            out.append("|--:|--:|--:|--:|---|")
            for (index, watcher) in o.watchers.enumerated() {
                let end = watcher.endCode.map { SoakTally.codeName($0) } ?? "connection lost"
                out.append(
                    "| \(index + 1) | \(Format.grouped(watcher.log.entries.count)) | \(watcher.log.lagged) | \(watcher.log.gaps) | \(end)\(watcher.stopped ? " (cancelled by the driver)" : "") |"
                )
            }
            for difference in comparison.differences { out.append("- \(difference)") }
            if let notes = o.watchers.first?.log.notes, !notes.isEmpty {
                out.append("")
                out.append("Watcher 1 noted: " + notes.joined(separator: "; ") + ".")
            }
        }

        out.append("")
        out.append("## castd's memory and file descriptors")
        out.append("")
        out.append("Resident memory (VmRSS, /proc/PID/status) as each tenth of the requests had ended:")
        out.append("")
        out.append("| | VmRSS |")
        out.append("|---|--:|")
        out.append("| devices linked, before any client | \(Format.mebibytes(kibibytes: o.rssBaseline)) |")
        for tenth in o.rssAtTenth.keys.sorted() {
            out.append(
                "| \(tenth * 10) % of the requests\(tenth == SoakOutcome.warmUpTenths ? " (end of the warm-up)" : "")\(tenth == 10 ? " (end)" : "") | \(Format.mebibytes(kibibytes: o.rssAtTenth[tenth]!)) |"
            )
        }
        out.append("| every client gone | \(Format.mebibytes(kibibytes: o.rssAfter)) |")
        out.append(
            "| peak: sampled every second (\(o.rssSamples) samples) / VmHWM | \(Format.mebibytes(kibibytes: o.rssPeakSampled)) / \(Format.mebibytes(kibibytes: o.rssHighWater)) |"
        )
        out.append("")
        let kinds = { (descriptors: [Int32: String]) -> String in
            Proc.descriptorKinds(descriptors).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                separator: ", ")
        }
        out.append(
            "Open file descriptors (/proc/PID/fd): \(o.fdsBefore.count) with the devices linked and only the driver's "
                + "control connection open, before the watchers and clients connected (\(kinds(o.fdsBefore))); "
                + "\(o.fdsAfter.count) once they had all disconnected and the devices were linked again (\(kinds(o.fdsAfter)))."
        )
        if !o.castdLogWarnings.isEmpty {
            out.append("")
            out.append("castd's warnings and errors (its log):")
            out.append("")
            out.append("```")
            out.append(contentsOf: o.castdLogWarnings.map { String($0.prefix(300)) })
            out.append("```")
        }
        out.append("")
        return out.joined(separator: "\n")
    }

    static func sessionStateName(_ state: CastdSessionState) -> String {
        switch state {
        case .unspecified: "unspecified"
        case .starting: "starting"
        case .started: "started"
        case .startFailed: "start failed"
        case .ending: "ending"
        case .ended: "ended"
        case .suspended: "suspended"
        case .resuming: "resuming"
        case .resumed: "resumed"
        case .resumeFailed: "resume failed"
        case .UNRECOGNIZED(let n): "state \(n)"
        }
    }
}
