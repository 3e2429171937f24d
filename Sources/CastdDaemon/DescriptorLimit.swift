#if canImport(Glibc)
    import Glibc
#endif

/// castd holds a descriptor for every client connection, device link, Avahi and journal socket.
/// The soft limit most systems start processes with (1,024) is low enough that a flood of
/// connections could starve castd of descriptors for its devices; the hard limit is what an
/// administrator allows (`LimitNOFILE=` in castd's units sets both). castd raises its soft limit
/// to the hard one at start-up, as systemd advises daemons to do.
public enum DescriptorLimit {
    /// Raises the soft RLIMIT_NOFILE to the hard one. Returns the soft limit before and after,
    /// or nil when it cannot be read or changed.
    @discardableResult
    public static func raiseToHardLimit() -> (before: UInt64, after: UInt64)? {
        var limit = rlimit()
        guard getrlimit(resourceNOFILE, &limit) == 0 else { return nil }
        let before = UInt64(limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(resourceNOFILE, &limit) == 0 else { return nil }
        return (before, UInt64(limit.rlim_max))
    }

    /// RLIMIT_NOFILE, which Swift's Glibc imports as an enum case or an integer depending on the
    /// C library's headers.
    static var resourceNOFILE: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}
