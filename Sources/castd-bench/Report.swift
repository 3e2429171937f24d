import Foundation

/// One line of a figure's table: a distribution (n, median, p90, p99) or a single value, with
/// the target it is held to, if any.
struct Row: Sendable {
    var label: String
    var samples: Samples?
    var value: String?
    var target: String = ""
    /// nil: no target.
    var met: Bool?
    var note: String = ""

    static func distribution(
        _ label: String, _ samples: Samples, target: String = "", met: Bool? = nil, note: String = ""
    ) -> Row {
        Row(label: label, samples: samples, value: nil, target: target, met: met, note: note)
    }

    static func value(_ label: String, _ value: String, target: String = "", met: Bool? = nil, note: String = "") -> Row
    {
        Row(label: label, samples: nil, value: value, target: target, met: met, note: note)
    }
}

/// One numbered figure of BENCHMARKS.md.
struct Figure: Sendable {
    var number: Int
    var title: String
    /// How it was measured, for people re-running it.
    var method: String
    var rows: [Row] = []
    var notes: [String] = []
    var load: LoadWindow?
    /// Why the figure (or part of it) could not be measured.
    var problems: [String] = []
}

/// Writes BENCHMARKS.md.
struct Report {
    var machine: MachineDescription
    var buildInfo: String
    var quick: Bool
    var command: String
    var overall: LoadWindow
    var figures: [Figure]
    /// The hand-written closing note (benchmarks/closing-note.md), appended as it is.
    var closingNote: String?
    var wallSeconds: Double

    func markdown() -> String {
        var out: [String] = []
        out.append("# castd benchmarks")
        out.append("")
        out.append(
            "Written by `castd-bench` (`make bench`). Every figure below comes from one run on the machine described here; "
                + "re-run `make bench` on your machine, ideally a quiet one, to get your own. "
                + "Percentiles are nearest-rank (a value that was measured), n is the number of samples.")
        if quick {
            out.append("")
            out.append("**Quick run (`--quick`): few samples, a smoke test of the suite. Do not quote these numbers.**")
        }
        out.append("")
        out.append("## Machine and run")
        out.append("")
        out += machine.reportLines(buildInfo: buildInfo)
        out.append("- Command: `\(command)`; the figures took \(Format.fixed(wallSeconds / 60, 1)) min")
        out.append("- Load: \(overall.summary)")
        out.append(
            "- Other engineers build and test on this machine: each figure gives the load average before and after it, "
                + "and the share of the machine's CPU that processes other than the benchmark (and its castd, castc, "
                + "Python and emulators) used meanwhile.")
        out.append("")
        out.append("## Targets")
        out.append("")
        out.append("| Figure | Target | Measured | |")
        out.append("|---|---|---|---|")
        for figure in figures {
            for row in figure.rows where row.met != nil {
                let measured =
                    row.samples.map { "median \(Format.duration($0.median)), p99 \(Format.duration($0.p99))" }
                    ?? row.value ?? ""
                out.append(
                    "| \(figure.number). \(row.label) | \(row.target) | \(measured) | \(row.met == true ? "✅ met" : "❌ missed") |"
                )
            }
            if figure.rows.isEmpty && !figure.problems.isEmpty {
                out.append("| \(figure.number). \(figure.title) | | not measured | ⚠️ |")
            }
        }
        for figure in figures {
            out.append("")
            out.append("## \(figure.number). \(figure.title)")
            out.append("")
            out.append(figure.method)
            if let load = figure.load {
                out.append("")
                out.append("_While it ran: \(load.summary)._")
            }
            if !figure.rows.isEmpty {
                out.append("")
                out.append("| | n | median (or value) | p90 | p99 | target | |")
                out.append("|---|--:|--:|--:|--:|---|---|")
                for row in figure.rows {
                    let verdict = row.met.map { $0 ? "✅" : "❌" } ?? ""
                    let label = row.note.isEmpty ? row.label : "\(row.label) — \(row.note)"
                    if let samples = row.samples {
                        out.append(
                            "| \(label) | \(samples.count) | \(Format.duration(samples.median)) | \(Format.duration(samples.p90)) | \(Format.duration(samples.p99)) | \(row.target) | \(verdict) |"
                        )
                    } else {
                        out.append("| \(label) | | \(row.value ?? "") | | | \(row.target) | \(verdict) |")
                    }
                }
            }
            for problem in figure.problems {
                out.append("")
                out.append("⚠️ \(problem)")
            }
            if !figure.notes.isEmpty {
                out.append("")
                for note in figure.notes { out.append("- \(note)") }
            }
        }
        if let closingNote, !closingNote.isEmpty {
            out.append("")
            out.append(closingNote.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        out.append("")
        return out.joined(separator: "\n")
    }
}
