import Dispatch
import Foundation

/// SIGINT and SIGTERM, as an async wait: how cast-emulator and cast-mpris end cleanly.
public enum TerminationSignal {
    /// Returns the name of the first SIGINT or SIGTERM received, or nil if the task is cancelled.
    public static func next() async -> String? {
        let (signals, continuation) = AsyncStream.makeStream(of: String.self)
        let sources = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")].map { number, name in
            signal(number, SIG_IGN)  // let the dispatch source have it instead of the default action
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(name) }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            continuation.finish()
        }
        for await name in signals { return name }
        return nil
    }
}
