import Foundation

// Shared by the fuzz targets in Fuzz/. Each target is an executable with a
// `LLVMFuzzerTestOneInput` entry point; a fuzz build (`-sanitize=fuzzer,address -DFUZZING`) links
// libFuzzer's `main`, a normal build links a replayer (`replayMain`) that runs the corpus through
// the same function, so the corpus is a regression check without libFuzzer.

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
public func replayMain(name: String, arguments: [String] = Array(CommandLine.arguments.dropFirst()), _ body: ([UInt8]) -> Void) -> Never {
    guard !arguments.isEmpty else {
        FileHandle.standardError.write(Data("usage: \(name) FILE|DIRECTORY…  (replays inputs; a fuzz build fuzzes)\n".utf8))
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

#if FUZZING
/// libFuzzer's driver (libclang_rt.fuzzer), run from the executable's own entry point.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The fuzz build's `main`. SwiftPM links an executable's `main` to the symbol `TARGET_main`
/// (`--defsym`), so libFuzzer's own `main` is never used: each target defines `TARGET_main`
/// with `@_cdecl` and calls this, which hands its arguments to libFuzzer.
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, callback)
}
#endif
