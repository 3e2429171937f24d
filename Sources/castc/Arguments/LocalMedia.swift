import CastClient

/// castc's side of casting files on this machine (`LocalFiles` in CastClient): its exit status
/// and lines for a file it cannot cast.
enum LocalMedia {
    /// castc's exit status when a local file cannot be cast: it does not exist, cannot be read
    /// or is not a file (sysexits' EX_NOINPUT).
    static let exitNoInput: Int32 = 66

    static func exit(_ error: LocalFileError) -> CastcExit {
        CastcExit(line: "castc: \(error.message)", code: exitNoInput)
    }

    static func path(_ text: String) throws(CastcExit) -> String {
        do { return try LocalFiles.path(text) } catch { throw exit(error) }
    }

    static func sources(_ arguments: [String]) throws(CastcExit) -> [MediaSource] {
        do { return try LocalFiles.sources(arguments) } catch { throw exit(error) }
    }

    /// `LocalFiles.withHandles`, a file castc cannot open an exit with status 66.
    static func withHandles<T>(
        _ items: [LocalItemFiles], socket: String?, _ body: ([LocalItemHandles]) async throws -> T
    ) async throws -> T {
        do {
            return try await LocalFiles.withHandles(items, socket: socket, body)
        } catch let error as LocalFileError {
            throw exit(error)
        }
    }
}
