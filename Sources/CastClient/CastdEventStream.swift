import CastdAPI
import Foundation

/// The events of a Watch call: a snapshot first, then every change. See
/// ``CastdClient/watch()``.
///
/// Each iterator is its own Watch call on the client's connection, opened when the iterator is
/// made and cancelled on the daemon when the iterator is dropped before the stream ended.
public struct CastdEventStream: AsyncSequence, Sendable {
    public typealias Element = CastdEvent
    public typealias Failure = any Error

    let client: CastdClient

    public func makeAsyncIterator() -> Iterator {
        do {
            let request = try Castd_V1_WatchRequest().serializedData()
            let (_, events) = try client.connection.open(
                method: CastdMethod.watch.path,
                request: request,
                timeout: nil,
                kind: .streaming
            )
            return Iterator(client: client, base: events.makeAsyncIterator(), pendingError: nil)
        } catch {
            return Iterator(client: client, base: nil, pendingError: error)
        }
    }

    public struct Iterator: AsyncIteratorProtocol {
        /// Keeps the connection open while the iteration lasts.
        let client: CastdClient
        var base: CastdConnection.Responses.AsyncIterator?
        var pendingError: (any Error)?

        /// The next event; `nil` once the daemon ended the stream normally or the task was
        /// cancelled.
        /// - Throws: ``CastdError`` if the daemon ended the stream with an error, the connection
        ///   was lost, or the daemon sent something that is not an Event.
        public mutating func next() async throws -> CastdEvent? {
            if let error = pendingError {
                pendingError = nil
                throw error
            }
            guard let message = try await base?.next() else {
                base = nil
                return nil
            }
            do {
                return try CastdEvent(serializedBytes: message)
            } catch {
                base = nil  // cancels the call
                throw CastdError(.internal, "cannot decode the castd.v1.Event castd sent: \(error)")
            }
        }
    }
}
