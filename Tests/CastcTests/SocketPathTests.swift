import CastTestSupport
import CastClient
import Testing

@testable import castc

/// --socket, else $CASTD_SOCKET, else $XDG_RUNTIME_DIR/castd/castd.sock if it is there, else the
/// system socket if that is there.
@Suite(.tags(.cpuBound)) struct SocketPathTests {
    func options(_ arguments: [String]) throws -> GlobalOptions {
        try parse(["status"] + arguments, as: StatusCommand.self).options
    }

    @Test func explicitSocketWins() throws {
        let environment = ["CASTD_SOCKET": "/env.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(try options(["--socket", "/flag.sock"]).socketPath(environment: environment) == "/flag.sock")
    }

    @Test func environmentVariableNext() throws {
        let environment = ["CASTD_SOCKET": "/env.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(try options([]).socketPath(environment: environment) == "/env.sock")
    }

    @Test func userDaemonInTheRuntimeDirectory() throws {
        let environment = ["CASTD_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(
            try options([]).socketPath(environment: environment, exists: { _ in false })
                == "/run/user/1000/castd/castd.sock")
    }

    @Test func theSystemDaemonWhenTheSessionHasNone() throws {
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]
        let onlySystem = { (path: String) in path == CastdSocketPath.system }
        #expect(try options([]).socketPath(environment: environment, exists: onlySystem) == CastdSocketPath.system)
        let both = { (_: String) in true }
        #expect(try options([]).socketPath(environment: environment, exists: both) == "/run/user/1000/castd/castd.sock")
        let neither = { (_: String) in false }
        #expect(
            try options([]).socketPath(environment: environment, exists: neither) == "/run/user/1000/castd/castd.sock",
            "the error names the session's socket")
    }

    @Test func systemDaemonLast() throws {
        #expect(try options([]).socketPath(environment: [:]) == "/run/castd/castd.sock")
        #expect(try options([]).socketPath(environment: ["XDG_RUNTIME_DIR": ""]) == CastdSocketPath.system)
    }
}
