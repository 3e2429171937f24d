#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int64_t monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t scaled_ms(double seconds) {
    const char *s = getenv("CASTD_TEST_TIME_SCALE");
    double scale = s && *s ? atof(s) : 1.0;
    if (scale <= 0) scale = 1.0;
    return (int64_t)(seconds * scale * 1000.0);
}

const char *msg(const castd_error *error) {
    return error && error->message ? error->message : "(none)";
}

static const char *bin_dir(void) {
    const char *d = getenv("CASTD_BIN_DIR");
    return d && *d ? d : "../../.build/debug";
}

const char *build_dir(void) {
    const char *d = getenv("CASTD_C_BUILD_DIR");
    return d && *d ? d : "build";
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* fork + exec with stdout to `out_fd` (-1: /dev/null) and stderr to `err_path` (or /dev/null);
 * the child dies with the test process. */
static pid_t spawn(char *const argv[], int out_fd, const char *err_path) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(out_fd >= 0 ? out_fd : devnull, 1);
    int err = err_path ? open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0644) : devnull;
    dup2(err >= 0 ? err : devnull, 2);
    execv(argv[0], argv);
    _exit(127);
}

bool env_dir(test_env *env) {
    memset(env, 0, sizeof *env);
    env->emulator = env->castd = -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(env->dir, sizeof env->dir, "%s/castd-c-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(env->dir)) {
        fprintf(stderr, "    cannot make a temporary directory: %s\n", strerror(errno));
        return false;
    }
    snprintf(env->sock, sizeof env->sock, "%s/castd.sock", env->dir);
    return true;
}

static bool read_port(const char *path, int *port) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* Written whole only when ready; a JSON object ends with '}'. */
    if (!strchr(text, '}')) return false;
    const char *p = strstr(text, "\"port\"");
    if (!p) return false;
    p = strchr(p, ':');
    if (!p) return false;
    *port = atoi(p + 1);
    return *port > 0;
}

bool env_start(test_env *env, const char *const *emulator_args) {
    if (!env_dir(env)) return false;
    char emulator[512], castd[512], authority[320], ready[320], root[340], log[320], device[64];
    snprintf(emulator, sizeof emulator, "%s/cast-emulator", bin_dir());
    snprintf(castd, sizeof castd, "%s/castd", bin_dir());
    snprintf(authority, sizeof authority, "%s/ca", env->dir);
    snprintf(ready, sizeof ready, "%s/ready.json", env->dir);
    snprintf(root, sizeof root, "%s/ca/root.pem", env->dir);

    char *eargv[32] = {emulator, "--name", "Test TV", "--port", "0", "--authority", authority,
                       "--ready-file", ready};
    int n = 9;
    for (int i = 0; emulator_args && emulator_args[i] && n < 30; i++)
        eargv[n++] = (char *)emulator_args[i];
    eargv[n] = NULL;
    snprintf(log, sizeof log, "%s/emulator.log", env->dir);
    env->emulator = spawn(eargv, -1, log);
    int64_t deadline = monotonic_ms() + scaled_ms(10);
    while (!read_port(ready, &env->port)) {
        int status;
        if (waitpid(env->emulator, &status, WNOHANG) == env->emulator) {
            env->emulator = -1;
            fprintf(stderr, "    cast-emulator exited at start (see %s)\n", log);
            return false;
        }
        if (monotonic_ms() > deadline) {
            fprintf(stderr, "    cast-emulator not ready within the deadline\n");
            return false;
        }
        sleep_ms(10);
    }
    snprintf(device, sizeof device, "Test TV=127.0.0.1:%d", env->port);
    char *cargv[] = {castd, "--mode", "user", "--socket", env->sock, "--state-directory", "",
                     "--no-discovery", "--device", device, "--trust-root", root, NULL};
    snprintf(log, sizeof log, "%s/castd.log", env->dir);
    env->castd = spawn(cargv, -1, log);
    deadline = monotonic_ms() + scaled_ms(10);
    for (;;) {
        int status;
        if (waitpid(env->castd, &status, WNOHANG) == env->castd) {
            env->castd = -1;
            fprintf(stderr, "    castd exited at start (see %s)\n", log);
            return false;
        }
        if (access(env->sock, F_OK) == 0) {
            castd_error error = CASTD_ERROR_INIT;
            castd_client *c = castd_client_connect(env->sock, &error);
            castd_code code = c ? castd_list_devices(c, true, NULL, &error) : error.code;
            castd_client_close(c);
            castd_error_clear(&error);
            if (code == CASTD_OK) return true;
        }
        if (monotonic_ms() > deadline) {
            fprintf(stderr, "    castd not answering within the deadline\n");
            return false;
        }
        sleep_ms(10);
    }
}

static void kill_and_reap(pid_t *pid) {
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    *pid = -1;
}

void env_kill_castd(test_env *env) { kill_and_reap(&env->castd); }

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void env_stop(test_env *env) {
    kill_and_reap(&env->castd);
    kill_and_reap(&env->emulator);
    if (env->dir[0] && !getenv("CASTD_TEST_KEEP")) nftw(env->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    env->dir[0] = '\0';
}

static int run_argv(char *output, size_t size, char **argv) {
    int pipefd[2] = {-1, -1};
    if (output && pipe(pipefd) < 0) return -1;
    pid_t pid = spawn(argv, output ? pipefd[1] : -1, NULL);
    if (pid < 0) return -1;
    if (output) {
        close(pipefd[1]);
        size_t got = 0;
        for (;;) {
            ssize_t n = read(pipefd[0], output + got, got + 1 < size ? size - got - 1 : 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += (size_t)n;
        }
        output[got] = '\0';
        /* drain what did not fit */
        char sink[256];
        while (read(pipefd[0], sink, sizeof sink) > 0) {}
        close(pipefd[0]);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_castc(test_env *env, char *output, size_t size, ...) {
    char castc[512];
    snprintf(castc, sizeof castc, "%s/castc", bin_dir());
    char *argv[40] = {castc, "--socket", env->sock};
    int n = 3;
    va_list args;
    va_start(args, size);
    const char *a;
    while ((a = va_arg(args, const char *)) && n < 38) argv[n++] = (char *)a;
    va_end(args);
    argv[n] = NULL;
    return run_argv(output, size, argv);
}

int run_program(char *output, size_t size, const char *program, ...) {
    char *argv[40] = {(char *)program};
    int n = 1;
    va_list args;
    va_start(args, program);
    const char *a;
    while ((a = va_arg(args, const char *)) && n < 38) argv[n++] = (char *)a;
    va_end(args);
    argv[n] = NULL;
    return run_argv(output, size, argv);
}

pid_t kill_later(pid_t pid, int64_t ms) {
    /* A shell, not a forked copy of this process (which valgrind would follow). */
    char command[128];
    snprintf(command, sizeof command, "sleep %.3f; kill -9 %d", (double)ms / 1000.0, (int)pid);
    char *argv[] = {"/bin/sh", "-c", command, NULL};
    return spawn(argv, -1, NULL);
}

pid_t feed_file(const char *path, int fd) {
    /* cat, not a forked copy of this process (which valgrind would follow). */
    char *argv[] = {"/bin/cat", (char *)path, NULL};
    return spawn(argv, fd, NULL);
}

static long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long value = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':') value = atol(line + n + 1);
    fclose(f);
    return value;
}

long rss_mark(void) {
#ifdef __GLIBC__
    malloc_trim(0); /* what earlier tests freed goes back to the system, so new use shows */
#endif
    /* Resets the peak (VmHWM) to the current RSS: "5" to clear_refs (Linux 4.0). */
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
    return status_kb("VmRSS");
}

long rss_peak_growth_kb(long mark) {
    long peak = status_kb("VmHWM");
    return peak < 0 || mark < 0 ? -1 : peak - mark;
}

pid_t start_program(char *const argv[], int out_fd) { return spawn(argv, out_fd, NULL); }
