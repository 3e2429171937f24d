/* Test harness: a real cast-emulator and castd per test, started with fork/exec. */
#ifndef CASTD_TEST_HARNESS_H
#define CASTD_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "castd-client.h"

typedef struct test_env {
    char dir[256];   /* the test's own temporary directory */
    char sock[320];  /* castd's socket in it */
    pid_t emulator, castd;
    int port;
} test_env;

/* Seconds scaled by CASTD_TEST_TIME_SCALE (default 1), in ms. */
int64_t scaled_ms(double seconds);
int64_t monotonic_ms(void);

/* Makes the test's directory only (for tests without castd). */
bool env_dir(test_env *env);
/* Starts cast-emulator (with extra arguments, NULL-terminated list, may be NULL) and castd, and
 * waits (deadline 10 s × scale) until castd answers ListDevices. */
bool env_start(test_env *env, const char *const *emulator_args);
/* Kills what env_start started (SIGKILL), reaps it, and removes the directory. */
void env_stop(test_env *env);
/* SIGKILLs castd and reaps it. */
void env_kill_castd(test_env *env);

/* Runs $CASTD_BIN_DIR/castc --socket SOCK ARGS… (NULL-terminated); returns its exit status
 * (-1 if it could not run). Its stdout goes to `output` (a buffer of `size`, may be NULL). */
int run_castc(test_env *env, char *output, size_t size, ...);
/* Runs a program with arguments (NULL-terminated); stdout into `output`, as run_castc. */
int run_program(char *output, size_t size, const char *program, ...);
/* The directory the test binary's examples are in (build/). */
const char *build_dir(void);

/* Starts `cat PATH` with its stdout on `fd` (a fake server's end of a connection): the file's
 * bytes are written while this process reads. Returns its pid. */
pid_t feed_file(const char *path, int fd);

/* Starts argv[0] with its stdout on `out_fd` (-1: /dev/null); returns its pid. */
pid_t start_program(char *const argv[], int out_fd);

/* Memory: rss_mark() resets the peak resident size to the current one and returns it (kB);
 * rss_peak_growth_kb(mark) is how far the peak rose above it since (kB; -1 if unknown). */
long rss_mark(void);
long rss_peak_growth_kb(long mark);

/* Forks a child that SIGKILLs `pid` after `ms` milliseconds; returns the child's pid. */
pid_t kill_later(pid_t pid, int64_t ms);

extern int test_failures_in_current;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "    FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            return false;                                                                 \
        }                                                                                 \
    } while (0)

/* The error's message, or "(none)", for failure messages. */
const char *msg(const castd_error *error);

/* Tests in fake_server.c. */
bool test_frame_too_big(test_env *env);
bool test_half_frame(test_env *env);
bool test_connection_status(test_env *env);
bool test_frame_reader_chunks(test_env *env);
bool test_decoded_size_bound(test_env *env);
bool test_decode_limits(test_env *env);
bool test_visible(test_env *env);
bool test_example_escapes(test_env *env);

/* Tests in load_file.c. */
bool test_load_file(test_env *env);
bool test_load_file_local_errors(test_env *env);
bool test_load_file_handover(test_env *env);

#endif
