import CastdDaemon
import Foundation
import FuzzSupport

// castd.toml as castd reads it (ConfigFile.parse(bytes:): castd's own TOML reader, ConfigTOML,
// then castd's checks of every key), then the settings castd would run with
// (CastdSettings.resolve), without the keys that make resolve read files or look up groups
// (trust_roots, access.*).
//
// Properties: an error names a line of the file and says what is wrong; a file that parses holds
// only keys castd knows, each from a line of the file, and its settings written out as TOML
// (every string quoted and escaped) read back the same.

let paths = DaemonPaths(mode: .system, environment: [:], isRoot: false)

func fuzzOne(_ bytes: [UInt8]) {
    let lines = bytes.count(where: { $0 == UInt8(ascii: "\n") }) + 1
    var layer: ConfigLayer
    do {
        layer = try ConfigFile.parse(bytes: bytes, file: "fuzz.toml")
    } catch {
        fuzzRequire(
            error.line.map { (1...lines).contains($0) } ?? false, "error at line \(error.line ?? 0) of \(lines)")
        fuzzRequire(!error.problem.isEmpty, "an error that says nothing")
        return
    }
    for key in layer.values.keys {
        let origin = layer.origins[key] ?? "nowhere"
        let line = origin.hasPrefix("fuzz.toml:") ? Int(origin.dropFirst(10)) : nil
        fuzzRequire(line.map { (1...lines).contains($0) } ?? false, "\(key) from \(origin) (\(lines) lines)")
    }
    let rewritten = written(layer)
    do {
        let again = try ConfigFile.parse(rewritten, file: "rewritten.toml")
        fuzzRequire(again.values == layer.values, "read back differently:\n\(rewritten)")
    } catch {
        fuzzRequire(false, "cannot read back \(error):\n\(rewritten)")
    }
    for key in [ConfigKey.trustRoots, .controlGroups, .readGroups] { layer[key] = nil }
    do {
        _ = try CastdSettings.resolve(layer, paths: paths, configFile: "fuzz.toml")
    } catch {
        fuzzRequire(!error.problem.isEmpty, "an error that says nothing")
    }
}

/// The settings as castd.toml: a `"…"` string for every string and key, with escapes.
func written(_ layer: ConfigLayer) -> String {
    func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\u{0}"..."\u{1F}", "\u{7F}":
                out += "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
    func value(_ value: ConfigValue) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .bool(let bool): bool ? "true" : "false"
        case .integer(let integer): String(integer)
        case .strings(let list): "[" + list.map(quoted).joined(separator: ", ") + "]"
        case .table(let entries):
            "{ " + entries.map { quoted($0.key) + " = " + quoted($0.value) }.joined(separator: ", ") + " }"
        }
    }
    var text = ""
    // The top level, then every table castd.toml has ([launch] came later than the others).
    for table in [[]] + ConfigKey.tables.sorted().map({ [$0] }) {
        text += table.isEmpty ? "" : "[\(table[0])]\n"
        for key in ConfigKey.allCases where key.path.dropLast() == table[...] {
            if let setting = layer[key] { text += quoted(key.path.last!) + " = " + value(setting) + "\n" }
        }
    }
    return text
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "CastdConfigFuzzer", fuzzOne)
    }
}
