import CastTestSupport
import CastdDaemon
import Testing

/// castd caps glibc's malloc arenas (its resident memory grew with each burst a thread served;
/// see MallocArenas), unless its environment already says how many.
@Suite(.tags(.cpuBound)) struct MallocArenasTests {
    @Test func castdAsksForTwoArenas() {
        #expect(MallocArenas.limit(environment: [:]) == 2)
        #expect(MallocArenas.limit(environment: ["HOME": "/root"]) == 2)
    }

    @Test func anArenaCountInTheEnvironmentWins() {
        #expect(MallocArenas.limit(environment: ["MALLOC_ARENA_MAX": "8"]) == nil)
        #expect(MallocArenas.apply(environment: ["MALLOC_ARENA_MAX": "8"]) == nil)
    }

    #if os(Linux)
        @Test(.disabled(if: sanitizerAllocatorInUse, "a sanitizer's allocator replaces glibc's malloc and its arenas"))
        func glibcTakesTheCap() {
            #expect(MallocArenas.apply(environment: [:]) == 2)
        }
    #endif
}
