import CFuzzDriver
import Foundation

// Shared by the fuzz targets in Fuzz/. Each target is an executable whose `main` calls
// `fuzzOrReplay` with its one-input function. A fuzz build (scripts/fuzz.sh: coverage
// instrumentation, address sanitizer, libFuzzer's driver linked) fuzzes it; any other build replays
// the files it is given through the same function, so the corpus is a regression check without
// libFuzzer (`scripts/fuzz.sh --replay`).

/// Fails the run on a broken property, naming it: libFuzzer (or the replayer) keeps the input.
public func fuzzRequire(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() {
        fatalError("fuzz property violated: \(message())", file: file, line: line)
    }
}

/// Runs every file named in `arguments` (directories: every file in them, recursively) through
/// `body`, and says how many it ran. Exits 64 without arguments, 66 when a path cannot be read.
public func replayMain(
    name: String, arguments: [String] = Array(CommandLine.arguments.dropFirst()), _ body: ([UInt8]) -> Void
) -> Never {
    guard !arguments.isEmpty else {
        FileHandle.standardError.write(
            Data("usage: \(name) FILE|DIRECTORY…  (replays inputs; a fuzz build fuzzes)\n".utf8))
        exit(64)
    }
    var count = 0
    for argument in arguments {
        for path in files(at: argument) {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("\(name): cannot read \(path)\n".utf8))
                exit(66)
            }
            body([UInt8](data))
            count += 1
        }
    }
    print("\(name): replayed \(count) inputs, no failure")
    exit(0)
}

private func files(at path: String) -> [String] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
        return [path]
    }
    let names = (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []
    return names.sorted().map { path + "/" + $0 }.filter {
        var dir: ObjCBool = false
        return FileManager.default.fileExists(atPath: $0, isDirectory: &dir) && !dir.boolValue
    }
}

/// The one-input function libFuzzer calls, set once by `fuzzOrReplay` before the driver starts.
nonisolated(unsafe) private var fuzzTarget: (([UInt8]) -> Void)?

/// Fuzzes `body` with libFuzzer when its driver is linked into the executable (a fuzz build),
/// handing it the command line (libFuzzer's flags and corpus directories); otherwise replays the
/// files and directories named on the command line through `body`.
public func fuzzOrReplay(name: String, _ body: @escaping ([UInt8]) -> Void) -> Never {
    guard castd_fuzz_driver_linked() != 0 else {
        #if FUZZING
            // A release fuzz build (scripts/fuzz.sh) that lost its driver would only replay: say so.
            fatalError("\(name) was built for fuzzing (-DFUZZING) without libFuzzer's driver linked")
        #else
            replayMain(name: name, body)
        #endif
    }
    fuzzTarget = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(
        castd_fuzz_run_driver(&argc, &argv) { data, size in
            fuzzTarget!(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
            return 0
        })
}
