import CastTestSupport
import CastdAPI
import Foundation
import Testing

@testable import CastClient

/// The client's demultiplexer as a pure state machine: frames in, effects out.
@Suite(.tags(.cpuBound)) struct CallTableTests {
    typealias Table = CastdCallTable<String>

    static func frame(_ callID: UInt64, message: String) -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.message = Data(message.utf8)
        return frame
    }

    static func frame(_ callID: UInt64, status code: CastdCode, _ text: String = "") -> Castd_V1_Frame {
        var frame = Castd_V1_Frame()
        frame.callID = callID
        frame.status = CastdError(code, text).status
        return frame
    }

    /// Effects as comparable strings: "deliver 1 a: x", "finish 1 a: response x",
    /// "finish 1 a: NOT_FOUND: …", "cancel 1".
    static func describe(_ effects: [Table.Effect]) -> [String] {
        effects.map { effect in
            switch effect {
            case .deliver(let id, let receiver, let data):
                return "deliver \(id) \(receiver): \(String(decoding: data, as: UTF8.self))"
            case .finish(let id, let receiver, .response(let data)):
                return "finish \(id) \(receiver): response \(String(decoding: data, as: UTF8.self))"
            case .finish(let id, let receiver, .ended):
                return "finish \(id) \(receiver): ended"
            case .finish(let id, let receiver, .failed(let error)):
                return "finish \(id) \(receiver): \(error)"
            case .sendCancel(let id):
                return "cancel \(id)"
            }
        }
    }

    @Test func callIDsCountFromOneAndAreNeverReused() throws {
        var table = Table()
        let first = try table.open(method: "/m/A", kind: .unary, receiver: "a")
        let second = try table.open(method: "/m/B", kind: .unary, receiver: "b")
        #expect(first == 1)
        #expect(second == 2)
        _ = table.receive(Self.frame(1, status: .notFound, "gone"))
        let third = try table.open(method: "/m/C", kind: .unary, receiver: "c")
        #expect(third == 3)
        #expect(table.openCallIDs == [2, 3])
    }

    @Test func unaryCallEndsWithItsOneResponseOnOK() throws {
        var table = Table()
        let id = try table.open(method: "/castd.v1.Cast/Load", kind: .unary, receiver: "a")
        #expect(Self.describe(table.receive(Self.frame(id, message: "media"))).isEmpty)
        #expect(table.isOpen(id))
        #expect(Self.describe(table.receive(Self.frame(id, status: .ok))) == ["finish 1 a: response media"])
        #expect(!table.isOpen(id))
    }

    @Test func unaryErrorStatusFailsTheCall() throws {
        var table = Table()
        let id = try table.open(method: "/castd.v1.Cast/Load", kind: .unary, receiver: "a")
        _ = table.receive(Self.frame(id, message: "ignored"))
        let effects = table.receive(Self.frame(id, status: .notFound, "no device named kitchen"))
        #expect(Self.describe(effects) == ["finish 1 a: NOT_FOUND: no device named kitchen"])
    }

    @Test func unaryOKWithoutResponseIsAnInternalError() throws {
        var table = Table()
        let id = try table.open(method: "/castd.v1.Cast/Play", kind: .unary, receiver: "a")
        let effects = Self.describe(table.receive(Self.frame(id, status: .ok)))
        #expect(effects == ["finish 1 a: INTERNAL: castd ended /castd.v1.Cast/Play with OK but sent no response"])
    }

    @Test func secondUnaryResponseFailsTheCallAndCancelsIt() throws {
        var table = Table()
        let id = try table.open(method: "/castd.v1.Cast/Play", kind: .unary, receiver: "a")
        _ = table.receive(Self.frame(id, message: "one"))
        let effects = Self.describe(table.receive(Self.frame(id, message: "two")))
        #expect(
            effects == ["finish 1 a: INTERNAL: castd sent more than one response to /castd.v1.Cast/Play", "cancel 1"]
        )
        #expect(table.openCallIDs.isEmpty)
    }

    @Test func streamingCallDeliversEachMessageThenEnds() throws {
        var table = Table()
        let id = try table.open(method: "/castd.v1.Cast/Watch", kind: .streaming, receiver: "w")
        #expect(Self.describe(table.receive(Self.frame(id, message: "snapshot"))) == ["deliver 1 w: snapshot"])
        #expect(Self.describe(table.receive(Self.frame(id, message: "delta"))) == ["deliver 1 w: delta"])
        #expect(Self.describe(table.receive(Self.frame(id, status: .ok))) == ["finish 1 w: ended"])
    }

    @Test func framesAreRoutedByCallID() throws {
        var table = Table()
        let watch = try table.open(method: "/castd.v1.Cast/Watch", kind: .streaming, receiver: "w")
        let load = try table.open(method: "/castd.v1.Cast/Load", kind: .unary, receiver: "l")
        var effects: [String] = []
        effects += Self.describe(table.receive(Self.frame(load, message: "loaded")))
        effects += Self.describe(table.receive(Self.frame(watch, message: "e1")))
        effects += Self.describe(table.receive(Self.frame(load, status: .ok)))
        effects += Self.describe(table.receive(Self.frame(watch, message: "e2")))
        effects += Self.describe(table.receive(Self.frame(watch, status: .unavailable, "castd is shutting down")))
        #expect(
            effects == [
                "deliver 1 w: e1", "finish 2 l: response loaded", "deliver 1 w: e2",
                "finish 1 w: UNAVAILABLE: castd is shutting down",
            ]
        )
    }

    @Test func framesForUnknownOrEndedCallsAreDropped() throws {
        var table = Table()
        let id = try table.open(method: "/m/A", kind: .unary, receiver: "a")
        #expect(table.receive(Self.frame(7, message: "stray")).isEmpty)
        #expect(table.receive(Self.frame(7, status: .ok)).isEmpty)
        _ = table.cancel(id, with: CastdError(.cancelled, "bye"))
        // The daemon's CANCELLED for a call we already ended.
        #expect(table.receive(Self.frame(id, status: .cancelled)).isEmpty)
    }

    @Test func clientKindsFromTheDaemonAreIgnored() throws {
        var table = Table()
        let id = try table.open(method: "/m/A", kind: .unary, receiver: "a")
        var frame = Castd_V1_Frame()
        frame.callID = id
        frame.cancel = Castd_V1_Cancel()
        #expect(table.receive(frame).isEmpty)
        frame.kind = nil
        #expect(table.receive(frame).isEmpty)
        #expect(table.isOpen(id))
    }

    @Test func cancelEndsTheCallAndTellsTheDaemonOnce() throws {
        var table = Table()
        let id = try table.open(method: "/castd.v1.Cast/Watch", kind: .streaming, receiver: "w")
        let effects = Self.describe(
            table.cancel(id, with: CastdError(.cancelled, "/castd.v1.Cast/Watch was cancelled")))
        #expect(effects == ["finish 1 w: CANCELLED: /castd.v1.Cast/Watch was cancelled", "cancel 1"])
        #expect(table.cancel(id, with: CastdError(.cancelled, "again")).isEmpty)
    }

    @Test func connectionLevelStatusFailsEveryCallAndLaterOnes() throws {
        var table = Table()
        _ = try table.open(method: "/m/A", kind: .unary, receiver: "a")
        _ = try table.open(method: "/m/W", kind: .streaming, receiver: "w")
        let effects = Self.describe(table.receive(Self.frame(0, status: .resourceExhausted, "frame too large")))
        #expect(
            effects == [
                "finish 1 a: RESOURCE_EXHAUSTED: frame too large", "finish 2 w: RESOURCE_EXHAUSTED: frame too large",
            ]
        )
        // The connection then drops; the calls already have the daemon's reason, and so do later ones.
        #expect(table.close(with: CastdConnection.connectionLost).isEmpty)
        #expect(throws: CastdError(.resourceExhausted, "frame too large")) {
            try table.open(method: "/m/B", kind: .unary, receiver: "b")
        }
    }

    @Test func connectionLossFailsEveryCallWithUnavailable() throws {
        var table = Table()
        _ = try table.open(method: "/m/A", kind: .unary, receiver: "a")
        let effects = Self.describe(table.close(with: CastdConnection.connectionLost))
        #expect(effects == ["finish 1 a: UNAVAILABLE: connection to castd lost"])
        #expect(throws: CastdConnection.connectionLost) {
            try table.open(method: "/m/B", kind: .unary, receiver: "b")
        }
    }

    @Test func okStatusOnCallZeroIsNotAnError() throws {
        var table = Table()
        _ = try table.open(method: "/m/A", kind: .unary, receiver: "a")
        #expect(table.receive(Self.frame(0, status: .ok)).isEmpty)
        #expect(table.closedError == nil)
    }

    @Test func cancelAfterCloseSendsNothing() throws {
        var table = Table()
        let id = try table.open(method: "/m/A", kind: .unary, receiver: "a")
        _ = table.close(with: CastdConnection.connectionLost)
        #expect(table.cancel(id, with: CastdError(.cancelled, "x")).isEmpty)
    }
}
