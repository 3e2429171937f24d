/* castd-c-bench: warm GetStatus latency through libcastd-client (castd-bench, figure 9).
 *
 *   castd-c-bench --socket PATH [--calls N] [--warmup N]
 *
 * Connects once, makes `warmup` GetStatus calls untimed (default 3000), then `calls` timed ones
 * (default 30000), one after the other on that connection, and prints each timed call's
 * latency on a line of its own: microseconds with three decimals (nanosecond resolution), from
 * just before castd_status to just after castd_free of its response (CLOCK_MONOTONIC). The
 * latencies are kept in memory and printed once the calls are done, so the output costs the
 * calls nothing. Exits 0; on a failed call, prints castd's error on standard error and exits
 * with its code; 64 on a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "castd-client.h"

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int usage(FILE *out, int code) {
    fprintf(out, "usage: castd-c-bench --socket PATH [--calls N] [--warmup N]\n"
                 "Prints the latency of N warm GetStatus calls, one per line, in microseconds.\n");
    return code;
}

int main(int argc, char **argv) {
    const char *socket_path = NULL;
    long calls = 30000, warmup = 3000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--socket") && i + 1 < argc) socket_path = argv[++i];
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout, 0);
        else return usage(stderr, 64);
    }
    if (calls < 1 || warmup < 0) return usage(stderr, 64);
    uint64_t *latencies = malloc((size_t)calls * sizeof *latencies);
    if (!latencies) {
        fprintf(stderr, "castd-c-bench: out of memory\n");
        return 1;
    }
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(socket_path, &error);
    for (long i = 0; client && i < warmup + calls; i++) {
        Castd__V1__StatusResponse *status = NULL;
        uint64_t started = now_ns();
        if (castd_status(client, &status, &error) != CASTD_OK) break;
        castd_free(status);
        if (i >= warmup) latencies[i - warmup] = now_ns() - started;
    }
    if (error.code != CASTD_OK) {
        fprintf(stderr, "castd-c-bench: %s: %s\n", castd_code_name(error.code), error.message);
        int code = error.code;
        castd_error_clear(&error);
        castd_client_close(client);
        free(latencies);
        return code;
    }
    castd_client_close(client);
    for (long i = 0; i < calls; i++)
        printf("%llu.%03llu\n", (unsigned long long)(latencies[i] / 1000),
               (unsigned long long)(latencies[i] % 1000));
    free(latencies);
    return fflush(stdout) == 0 ? 0 : 1;
}
