import CastdAPI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import SwiftProtobuf

/// The messages of one server-streaming castd.v1 method (`Watch`, `Listen`): see
/// ``CastdClient/watch()``, ``CastdClient/listen(device:namespace:)`` and
/// ``CastdClient/serverStream(_:_:as:)``.
///
/// Each iterator is its own call on the client's connection, opened when the iterator is made
/// and cancelled on the daemon when the iterator is dropped before the stream ended.
public struct CastdServerStream<Element: SwiftProtobuf.Message>: AsyncSequence, Sendable {
    public typealias Failure = any Error

    let client: CastdClient
    let method: CastdMethod
    /// The serialized request, or why there is none (the first `next()` throws it).
    let request: Result<Data, CastdError>

    init(client: CastdClient, method: CastdMethod, request: Result<Data, CastdError>) {
        self.client = client
        self.method = method
        self.request = request
    }

    public func makeAsyncIterator() -> Iterator {
        do {
            let (_, messages) = try client.connection.openStream(method: method.path, request: try request.get())
            return Iterator(client: client, base: messages.makeAsyncIterator(), pendingError: nil)
        } catch {
            return Iterator(client: client, base: nil, pendingError: error)
        }
    }

    public struct Iterator: AsyncIteratorProtocol {
        /// Keeps the connection open while the iteration lasts.
        let client: CastdClient
        var base: CastdConnection.Responses.AsyncIterator?
        var pendingError: (any Error)?

        /// The next message; `nil` once the daemon ended the stream normally or the task was
        /// cancelled.
        /// - Throws: ``CastdError`` if the request could not be sent, the daemon ended the stream
        ///   with an error, the connection was lost, or the daemon sent something that is not an
        ///   `Element`.
        public mutating func next() async throws -> Element? {
            if let error = pendingError {
                pendingError = nil
                throw error
            }
            guard let message = try await base?.next() else {
                base = nil
                return nil
            }
            do {
                return try Element(serializedBytes: message)
            } catch {
                base = nil  // cancels the call
                throw CastdError(.internal, "cannot decode the \(Element.protoMessageName) castd sent: \(error)")
            }
        }
    }
}

/// The events of a Watch call: a snapshot first, then every change. See ``CastdClient/watch()``.
public typealias CastdEventStream = CastdServerStream<CastdEvent>

/// The events of a Listen call: attached/detached as sessions come and go, and every message the
/// app sends on the namespace. See ``CastdClient/listen(device:namespace:)``.
public typealias CastdChannelEventStream = CastdServerStream<CastdChannelEvent>
