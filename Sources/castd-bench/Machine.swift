import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What /proc says about processes and the machine.
enum Proc {
    static let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))

    static func read(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }

    /// The fields of /proc/PID/stat after the command name (field 3, the state, is index 0).
    private static func statFields(_ pid: String) -> [Substring]? {
        guard let text = read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// utime + stime of a process, in clock ticks.
    static func cpuTicks(_ pid: pid_t) -> Int? {
        guard let fields = statFields("\(pid)"), fields.count > 12 else { return nil }
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    /// This process's utime + stime + cutime + cstime: its own CPU and that of every child it
    /// has reaped.
    static func ownTicksWithReapedChildren() -> Int {
        guard let fields = statFields("self"), fields.count > 14 else { return 0 }
        return fields[11...14].reduce(0) { $0 + (Int($1) ?? 0) }
    }

    /// A `key:  value kB` line of /proc/PID/status, as a number.
    static func statusValue(_ pid: pid_t, _ key: String) -> Int? {
        guard let text = read("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Busy clock ticks of the whole machine (every CPU): all but idle and iowait.
    static func machineBusyTicks() -> Int {
        guard let text = read("/proc/stat"), let line = text.split(separator: "\n").first else { return 0 }
        let values = line.split(separator: " ").dropFirst().map { Int($0) ?? 0 }
        guard values.count >= 8 else { return 0 }
        // user nice system idle iowait irq softirq steal
        return values[0] + values[1] + values[2] + values[5] + values[6] + values[7]
    }

    /// What each open file descriptor of a process refers to (`socket:[1234]`,
    /// `anon_inode:[eventfd]`, a path), by descriptor number; nil if the process is gone.
    static func openDescriptors(_ pid: pid_t) -> [Int32: String]? {
        let directory = "/proc/\(pid)/fd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        var descriptors: [Int32: String] = [:]
        for name in names {
            guard let fd = Int32(name) else { continue }
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = readlink(directory + "/" + name, &buffer, buffer.count - 1)
            // A descriptor closed between the listing and the readlink is gone: leave it out.
            guard count > 0 else { continue }
            descriptors[fd] = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return descriptors
    }

    /// Descriptors by kind: "socket", "anon_inode:[eventfd]", "pipe", or the path.
    static func descriptorKinds(_ descriptors: [Int32: String]) -> [String: Int] {
        var kinds: [String: Int] = [:]
        for target in descriptors.values {
            let kind: String
            if target.hasPrefix("socket:") {
                kind = "socket"
            } else if target.hasPrefix("pipe:") {
                kind = "pipe"
            } else {
                kind = target
            }
            kinds[kind, default: 0] += 1
        }
        return kinds
    }

    static func loadAverage() -> String {
        guard let text = read("/proc/loadavg") else { return "?" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// What scripts/bench.sh and scripts/soak.sh tell castd-bench for its reports.
struct ReportOptions: ParsableArguments {
    @Option(name: .customLong("swift-version"), help: ArgumentHelp("For the report.", valueName: "text"))
    var swiftVersion = ""

    @Option(
        name: .customLong("build-info"),
        help: ArgumentHelp("For the report: how the binaries were built.", valueName: "text"))
    var buildInfo = ""
}

/// The machine a run measured, as BENCHMARKS.md describes it.
struct MachineDescription: Sendable {
    var cores: Int
    var cpuModel: String
    var memory: String
    var kernel: String
    var swift: String
    var date: String

    static func current(swiftVersion: String) -> MachineDescription {
        var memory = "?"
        if let text = Proc.read("/proc/meminfo"),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MemTotal:") }),
            let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        {
            memory = Format.fixed(Double(kib) / 1024 / 1024, 1) + " GiB"
        }
        let cpuModel =
            Proc.read("/proc/cpuinfo")?.split(separator: "\n")
            .first(where: { $0.hasPrefix("model name") })
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?" }
            ?? "?"
        var names = utsname()
        uname(&names)
        let field = { (value: Any) -> String in
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let kernel = "\(field(names.sysname)) \(field(names.release)) \(field(names.machine))"
        let date = Date().formatted(Date.ISO8601FormatStyle(timeSeparator: .colon))
        return MachineDescription(
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), cpuModel: cpuModel, memory: memory, kernel: kernel,
            swift: swiftVersion, date: date)
    }

    /// The list items of a report's "Machine and run" section that describe the machine and the
    /// build (BENCHMARKS.md and SOAK.md).
    func reportLines(buildInfo: String) -> [String] {
        var lines = [
            "- Date: \(date)",
            "- CPU: \(cpuModel), \(cores) cores online; memory \(memory)",
            "- Kernel: \(kernel)",
            "- Swift: \(swift.isEmpty ? "?" : swift)",
        ]
        if !buildInfo.isEmpty { lines.append("- Build: \(buildInfo)") }
        return lines
    }
}

/// How busy the machine was while a figure ran, and how much of that was not this benchmark:
/// the machine's busy ticks minus this process's (with every child it reaped) and those of the
/// children it still runs. Other engineers build and test here; this says how much they did.
struct LoadWindow: Sendable {
    var loadBefore: String
    var loadAfter: String = ""
    private var started: UInt64
    private var machineBefore: Int
    private var ownBefore: Int
    /// Busy share of the whole machine (all cores) by other processes, 0…1.
    private(set) var foreignShare: Double = 0
    private(set) var seconds: Double = 0

    /// `live`: children running now whose CPU counts as this benchmark's.
    init(live: [pid_t]) {
        loadBefore = Proc.loadAverage()
        started = monotonicNanos()
        machineBefore = Proc.machineBusyTicks()
        ownBefore = Self.own(live)
    }

    private static func own(_ live: [pid_t]) -> Int {
        Proc.ownTicksWithReapedChildren() + live.compactMap { Proc.cpuTicks($0) }.reduce(0, +)
    }

    /// `live`: the same children, or fewer if some were reaped meanwhile (their ticks moved to
    /// this process's children's time).
    mutating func finish(live: [pid_t]) {
        loadAfter = Proc.loadAverage()
        seconds = Double(monotonicNanos() - started) / 1e9
        let machine = Proc.machineBusyTicks() - machineBefore
        let own = Self.own(live) - ownBefore
        let capacity = seconds * Double(Proc.ticksPerSecond) * Double(max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        foreignShare = capacity > 0 ? max(0, Double(machine - own)) / capacity : 0
    }

    var summary: String {
        "load average \(loadBefore) → \(loadAfter); other processes used \(Format.fixed(foreignShare * 100, 0)) % of the machine's CPU during these \(Format.significant(seconds)) s"
    }
}
