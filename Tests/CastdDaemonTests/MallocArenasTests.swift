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
        @Test(
            .disabled(
                if: sanitizerAllocatorInUse,
                "a sanitizer's allocator replaces glibc's malloc and its arenas (castdCapsGlibcsArenas checks castd)"))
        func glibcTakesTheCap() {
            #expect(MallocArenas.apply(environment: [:]) == 2)
        }
    #endif
}

/// castd itself, a process with glibc's malloc (``plainCastd``: in CI, which runs the suite
/// sanitized, a castd built beside it without the sanitizer), caps the arenas as it starts and
/// says so.
struct MallocArenasProcessTests {
    @Test(.enabled(if: plainCastdTestsRun, plainCastdMissing))
    func castdCapsGlibcsArenas() async throws {
        let castd = try requirePlainCastd()
        for (environment, expected) in [
            ([:], "malloc arenas capped malloc.arena_max=2"),
            (["MALLOC_ARENA_MAX": "8"], "malloc arenas as MALLOC_ARENA_MAX says malloc.arena_max=8"),
        ] {
            try await withTemporaryDirectory { directory in
                try await withProcesses { launch in
                    let process = try launch(
                        castd,
                        [
                            "--mode", "user", "--socket", directory + "/castd.sock", "--no-discovery",
                            "--state-directory", directory + "/state",
                        ], environment)
                    try await eventually(timeout: .seconds(20), "castd to say how many malloc arenas it has") {
                        try process.checkRunning()
                        return process.stderr.contains("malloc arenas")
                    }
                    #expect(process.stderr.contains(expected), "\(process.stderr)")
                }
            }
        }
    }
}
