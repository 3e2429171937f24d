import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on CLOCK_MONOTONIC: one clock for everything the driver times, in this process
/// and (for the emulators it hosts, whose taps run on NIO threads) across its threads.
func monotonicNanos() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Durations measured by one figure, in nanoseconds. Percentiles are nearest-rank: the value at
/// rank ⌈q·n⌉ of the sorted samples (the median of 50 samples is the 25th), so every figure is a
/// value that was actually measured.
struct Samples: Sendable {
    private(set) var sorted: [UInt64]

    init(_ values: [UInt64]) {
        sorted = values.sorted()
    }

    var count: Int { sorted.count }
    var isEmpty: Bool { sorted.isEmpty }

    func percentile(_ q: Double) -> UInt64 {
        precondition(!sorted.isEmpty)
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }

    var median: UInt64 { percentile(0.5) }
    var p90: UInt64 { percentile(0.9) }
    var p99: UInt64 { percentile(0.99) }
    var min: UInt64 { sorted.first ?? 0 }
    var max: UInt64 { sorted.last ?? 0 }
}

/// How figures print numbers.
enum Format {
    /// "812 ns", "42.1 µs", "3.27 ms", "1.48 s": three significant digits in a unit that fits.
    static func duration(_ nanoseconds: UInt64) -> String {
        let value = Double(nanoseconds)
        if value < 1_000 { return "\(Int(value)) ns" }
        if value < 1_000_000 { return significant(value / 1_000) + " µs" }
        if value < 1_000_000_000 { return significant(value / 1_000_000) + " ms" }
        return significant(value / 1_000_000_000) + " s"
    }

    /// Three significant digits, no exponent.
    static func significant(_ value: Double) -> String {
        if value >= 100 { return String(Int(value.rounded())) }
        if value >= 10 { return fixed(value, 1) }
        return fixed(value, 2)
    }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = String(rounded)
        if let dot = text.firstIndex(of: ".") {
            let have = text.distance(from: dot, to: text.endIndex) - 1
            if have < decimals { text += String(repeating: "0", count: decimals - have) }
            if decimals == 0 { text = String(text[..<dot]) }
        } else if decimals > 0 {
            text += "." + String(repeating: "0", count: decimals)
        }
        return text
    }

    /// "1,234,567"
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var out: [Character] = []
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + String(out)
    }

    /// "12.3 MiB"
    static func mebibytes(kibibytes: Int) -> String {
        significant(Double(kibibytes) / 1024) + " MiB"
    }

    /// "143×" or "0.42×"
    static func ratio(_ value: Double) -> String {
        significant(value) + "×"
    }
}

/// A counter that tasks and threads share.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    func add(_ amount: Int) { value.add(amount, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}
