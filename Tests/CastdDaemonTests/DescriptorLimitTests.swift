import CastdDaemon
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// castd raises its soft descriptor limit to the hard one at start-up (SECURITY.md, M3).
struct DescriptorLimitTests {
    @Test func theSoftLimitIsRaisedToTheHardOne() throws {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        try #require(getrlimit(resource, &limit) == 0)
        let hard = limit.rlim_max
        try #require(hard > 256, "the hard limit is \(hard)")
        limit.rlim_cur = 256
        try #require(setrlimit(resource, &limit) == 0)

        let raised = try #require(DescriptorLimit.raiseToHardLimit())
        #expect(raised.before == 256)
        #expect(raised.after == UInt64(hard))
        var now = rlimit()
        try #require(getrlimit(resource, &now) == 0)
        #expect(now.rlim_cur == hard)
        // Already there: nothing changes.
        #expect(DescriptorLimit.raiseToHardLimit().map { $0.before == $0.after } == true)
    }
}
