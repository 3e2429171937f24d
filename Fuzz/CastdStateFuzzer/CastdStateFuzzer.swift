import CastDevices
import Foundation
import FuzzSupport

// castd's state file (sessions.json in the state directory) as castd reads it when it starts:
// SessionStore.decode. The file is castd's own, but it outlives castd's checks (a disk, a backup,
// a hand edit), so it is read as input from outside.
//
// Properties: decoding either throws or returns sessions that all pass SavedSession.problem,
// at most SessionStore.maximumSessions of them, with one reason for each one left out; what it
// returns encodes to a file that decodes to the same sessions with none dropped.

struct File: Codable {
    var version: Int
    var sessions: [SavedSession]
}

func fuzzOne(_ bytes: [UInt8]) {
    guard let contents = try? SessionStore.decode(Data(bytes)) else { return }
    fuzzRequire(contents.sessions.count <= SessionStore.maximumSessions, "\(contents.sessions.count) sessions kept")
    for session in contents.sessions {
        fuzzRequire(session.problem == nil, "a session kept with a problem: \(session.problem ?? "")")
        fuzzRequire((1...65_535).contains(session.port), "port \(session.port) kept")
    }
    let again: SessionStore.Contents
    do {
        again = try SessionStore.decode(JSONEncoder().encode(File(version: 1, sessions: contents.sessions)))
    } catch {
        fuzzRequire(false, "the kept sessions do not decode again: \(error)")
        return
    }
    fuzzRequire(
        again.sessions == contents.sessions && again.dropped.isEmpty, "the kept sessions changed on the way through")
}

@main
enum Main {
    static func main() {
        fuzzOrReplay(name: "CastdStateFuzzer", fuzzOne)
    }
}
