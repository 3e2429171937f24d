import CastdAPI
import CastdServer
import Logging
import ServiceLifecycle

/// castd's files socket (`FileHandoverServer`) as a service: the socket systemd passed, or one
/// castd binds beside its RPC socket; served until graceful shutdown. A files socket castd
/// cannot bind is logged and done without: every call but a load of a local file still works.
struct FilesService: Service {
    let path: String
    let activated: Int32?
    let policy: CastdAccessPolicy
    let files: HandedFiles
    let logger: Logger

    func run() async throws {
        let fd: Int32
        if let activated {
            fd = activated
        } else {
            do {
                fd = try SelfBoundSocket.listen(at: path, permissions: policy.socketPermissions, backlog: 64)
            } catch {
                logger.warning(
                    "cannot serve the files socket; loading local files will not work",
                    metadata: ["socket": "\(path)", "error": "\(error.message)"])
                return
            }
        }
        let server: FileHandoverServer
        do {
            server = try FileHandoverServer(listening: fd, path: path, policy: policy, files: files, logger: logger)
        } catch {
            logger.warning("cannot serve the files socket", metadata: ["error": "\(error.message)"])
            return
        }
        server.start()
        logger.info("listening for files", metadata: ["socket": "\(path)"])
        try? await gracefulShutdown()
        server.stop()
        if activated == nil { SelfBoundSocket.remove(path) }
    }
}
