#if canImport(Glibc)
    import Glibc
#endif

/// glibc's malloc gives threads arenas of their own, up to eight per core, and a freed block
/// goes back to its arena, not to the system. castd's threads (NIO's event loops, Swift's
/// cooperative pool) take turns at every kind of work, so each arena grows to the largest burst
/// it ever served: under `make soak` castd's resident memory rose by 10-20 % over a run while
/// its heap in use stayed flat (heaptrack), and not with two arenas (SOAK.md). castd asks for
/// two, unless `MALLOC_ARENA_MAX` in its environment says otherwise.
public enum MallocArenas {
    public static let castdLimit: Int32 = 2

    /// The number of arenas castd should ask for, given its environment: none (nil) when the
    /// environment already sets it, which glibc reads itself.
    public static func limit(environment: [String: String]) -> Int32? {
        environment["MALLOC_ARENA_MAX"] == nil ? castdLimit : nil
    }

    /// Caps the arenas (before castd starts its threads); returns the cap set, if any.
    @discardableResult
    public static func apply(environment: [String: String]) -> Int32? {
        guard let limit = limit(environment: environment) else { return nil }
        // M_ARENA_MAX (malloc.h); mallopt answers 1 on success.
        let mArenaMax: Int32 = -8
        guard let mallopt else { return nil }
        return mallopt(mArenaMax, limit) == 1 ? limit : nil
    }

    private typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    /// glibc's mallopt, which Swift's Glibc module does not declare (malloc.h is not in it).
    private static let mallopt: Mallopt? = {
        #if canImport(Glibc)
            guard let symbol = dlsym(nil, "mallopt") else { return nil }
            return unsafeBitCast(symbol, to: Mallopt.self)
        #else
            return nil
        #endif
    }()
}
