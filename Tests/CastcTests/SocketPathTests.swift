import CastClient
import Testing

@testable import castc

/// --socket, else $CASTD_SOCKET, else $XDG_RUNTIME_DIR/castd/castd.sock, else the system socket.
@Suite struct SocketPathTests {
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
        #expect(try options([]).socketPath(environment: environment) == "/run/user/1000/castd/castd.sock")
    }

    @Test func systemDaemonLast() throws {
        #expect(try options([]).socketPath(environment: [:]) == "/run/castd/castd.sock")
        #expect(try options([]).socketPath(environment: ["XDG_RUNTIME_DIR": ""]) == CastdSocketPath.system)
    }
}
