import CastTestSupport
import ArgumentParser
import CastClient
import Testing

@testable import castc

@Suite(.tags(.cpuBound)) struct ExitCodeTests {
    @Test(arguments: [
        (CastdCode.cancelled, Int32(1)), (.invalidArgument, 3), (.deadlineExceeded, 4), (.notFound, 5),
        (.permissionDenied, 7), (.failedPrecondition, 9), (.unimplemented, 12), (.internal, 13),
        (.unavailable, 14), (.unauthenticated, 16),
    ])
    func statusCodeIsTheExitCode(code: CastdCode, exitCode: Int32) {
        #expect(CastcFailure(CastdError(code, "x")).exitCode == exitCode)
    }

    @Test func oneLineOnStderrWithTheCodeName() {
        let failure = CastcFailure(CastdError(.notFound, "no device matches 'attic' (devices: Kitchen)"))
        #expect(failure.line == "castc: NOT_FOUND: no device matches 'attic' (devices: Kitchen)\n")
        #expect(failure.exitCode == 5)
        let unavailable = CastcFailure(
            CastdError(.unavailable, "cannot connect to castd at /x.sock: No such file or directory"))
        #expect(
            unavailable.line == "castc: UNAVAILABLE: cannot connect to castd at /x.sock: No such file or directory\n")
        #expect(CastcFailure(CastdError(.internal, "")).line == "castc: INTERNAL: (no message)\n")
    }

    @Test func codesOutsideTheExitRangeBecomeOne() {
        #expect(CastcFailure(CastdError(.UNRECOGNIZED(300), "x")).exitCode == 1)
        #expect(CastcFailure(CastdError(.UNRECOGNIZED(300), "x")).line == "castc: CODE_300: x\n")
        #expect(CastcFailure(CastdError(.ok, "x")).exitCode == 1)
    }

    @Test func usageErrorsExit64() {
        #expect(Castc.exitCode(for: ValidationError("bad")).rawValue == 64)
        do {
            _ = try Castc.parseAsRoot(["seek", "soon"])
            Issue.record("parsed")
        } catch {
            #expect(Castc.exitCode(for: error).rawValue == 64)
        }
    }
}
