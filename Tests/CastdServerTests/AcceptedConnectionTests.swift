import CastdSupport
import CastTestSupport
import CastdAPI
import NIOCore
import NIOEmbedded
import Testing

@testable import CastdServer

/// A connection castd accepted but never served: the task serving the socket was cancelled while
/// the connection waited in NIO's hands (swift-nio issue 2637). It must be closed and its uid's
/// count given back. NIO traps when an async channel's writer is dropped unfinished, which once
/// ended a test process mid-run (and could end castd whenever its server task is cancelled).
struct AcceptedConnectionTests {
    static func accepted(
        on channel: NIOAsyncTestingChannel, givenBack: Locked<Int>
    ) async throws -> AcceptedConnection {
        try await channel.testingEventLoop.executeInContext {
            let wrapped = try NIOAsyncChannel<ClientFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
            return AcceptedConnection(
                channel: wrapped, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000), access: .control,
                refusal: nil, inline: InlineGate(), unserved: { givenBack.withLock { $0 += 1 } })
        }
    }

    @Test func aConnectionDroppedUnservedIsClosedAndGivenBack() async throws {
        let channel = NIOAsyncTestingChannel()
        try await channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/castd-unserved.sock"))
        let givenBack = Locked(0)
        // Made and dropped unserved: without the fix the process traps here ("Deinited
        // NIOAsyncWriter without calling finish()").
        _ = try await Self.accepted(on: channel, givenBack: givenBack)
        #expect(givenBack.withLock { $0 } == 1)
        try await eventually("the unserved connection to close") { !channel.isActive }
    }

    @Test func aConnectionTakenIsTheServersToClose() async throws {
        let channel = NIOAsyncTestingChannel()
        try await channel.connect(to: SocketAddress(unixDomainSocketPath: "/tmp/castd-served.sock"))
        let givenBack = Locked(0)
        let accepted = try await Self.accepted(on: channel, givenBack: givenBack)
        accepted.take()
        #expect(givenBack.withLock { $0 } == 0)
        #expect(channel.isActive)
        // The server serves it: executeThenClose finishes the writer and closes the channel.
        try await accepted.channel.executeThenClose { _, _ in }
        #expect(!channel.isActive)
    }
}
