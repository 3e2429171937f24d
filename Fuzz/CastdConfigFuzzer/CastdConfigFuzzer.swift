import CastdDaemon
import Foundation
import FuzzSupport

// castd.toml as castd reads it (ConfigFile.parse: TOMLKit, then castd's checks of every key),
// then the settings castd would run with (CastdSettings.resolve), without the keys that make
// resolve read files or look up groups (trust_roots, access.*).
//
// Properties: an error names a line of the text, or none, and says what is wrong; a file that
// parses holds only keys castd knows, each from a line of the text.

let paths = DaemonPaths(mode: .system, environment: [:], isRoot: false)

func fuzzOne(_ bytes: [UInt8]) {
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
    var layer: ConfigLayer
    do {
        layer = try ConfigFile.parse(text, file: "fuzz.toml")
    } catch {
        fuzzRequire(error.line.map { (1...lines + 1).contains($0) } ?? true, "error at line \(error.line ?? 0) of \(lines)")
        fuzzRequire(!error.problem.isEmpty, "an error that says nothing")
        return
    }
    for key in layer.values.keys {
        fuzzRequire(layer.origins[key]?.hasPrefix("fuzz.toml") == true, "\(key) from \(layer.origins[key] ?? "nowhere")")
    }
    for key in [ConfigKey.trustRoots, .controlGroups, .readGroups] { layer[key] = nil }
    do {
        _ = try CastdSettings.resolve(layer, paths: paths, configFile: "fuzz.toml")
    } catch {
        fuzzRequire(!error.problem.isEmpty, "an error that says nothing")
    }
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "CastdConfigFuzzer", fuzzOne)
    }
}
