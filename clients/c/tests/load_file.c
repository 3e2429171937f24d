/* castd_load_file: against a real castd (the file served over HTTP, its name the title), and
 * against a fake castd in this process (a thread serving the files socket) for what the
 * library hands over and what it makes of castd's answers. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"

static const char *const DEVICE = "Test TV";

/* How many descriptors this process has open. */
static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* Writes an MP4 file's start (an ftyp box), then `count` bytes that vary. */
static bool write_mp4(const char *path, size_t count) {
    static const uint8_t ftyp[] = {0, 0, 0, 0x18, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm', 0, 0, 2, 0,
                                   'i', 's', 'o', 'm', 'i', 's', 'o', '2'};
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    fwrite(ftyp, 1, sizeof ftyp, f);
    uint32_t state = 12345;
    for (size_t i = 0; i < count; i++) {
        state = state * 1103515245u + 12345u;
        fputc((int)(uint8_t)(state >> 16), f);
    }
    return fclose(f) == 0;
}

static bool same_contents(const char *a, const char *b) {
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    bool same = x && y;
    while (same) {
        int c = fgetc(x);
        same = c == fgetc(y);
        if (c == EOF) break;
    }
    if (x) fclose(x);
    if (y) fclose(y);
    return same;
}

/* The media another connection's GetStatus shows on the device; *owner is to be freed. */
static const Castd__V1__MediaInformation *media_seen(test_env *env, Castd__V1__StatusResponse **owner) {
    *owner = NULL;
    castd_error error = CASTD_ERROR_INIT;
    castd_client *other = castd_client_connect(env->sock, &error);
    if (other) castd_status(other, owner, &error);
    castd_client_close(other);
    castd_error_clear(&error);
    if (!*owner || (*owner)->n_media == 0) return NULL;
    return (*owner)->media[0]->media;
}

static const char *title_of(const Castd__V1__MediaInformation *m) {
    return m && m->metadata && m->metadata->title ? m->metadata->title : "";
}

bool test_load_file(test_env *env) {
    char movie[400], copy[400], code_text[16];
    snprintf(movie, sizeof movie, "%s/Holiday 2024.mp4", env->dir);
    snprintf(copy, sizeof copy, "%s/fetched", env->dir);
    CHECK(write_mp4(movie, 300000), "writing %s", movie);
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(env->sock, &error);
    CHECK(client, "connect: %s", msg(&error));
    castd_client_set_timeout(client, (int)scaled_ms(20));

    int before = open_fds();
    Castd__V1__MediaStatus *status = NULL;
    castd_code code = castd_load_file(client, DEVICE, movie, NULL, NULL, &status, &error);
    CHECK(code == CASTD_OK, "load_file: %s %s", castd_code_name(code), msg(&error));
    CHECK(open_fds() == before, "the file and the files connection are closed: %d then %d", before, open_fds());
    CHECK(status && status->media && !strcmp(title_of(status->media), "Holiday 2024"), "the title from the name: %s",
          status && status->media ? title_of(status->media) : "(no media)");
    castd_free(status);

    /* castd's URL on its own media server, at the address it reaches the device from; never
     * the path. Another client sees it, and it serves the file's bytes. */
    Castd__V1__StatusResponse *seen;
    const Castd__V1__MediaInformation *m = media_seen(env, &seen);
    CHECK(m && !strncmp(m->content_id, "http://127.0.0.1:", 17), "castd's URL: %s", m ? m->content_id : "(none)");
    CHECK(!strstr(m->content_id, "Holiday") && !strcmp(title_of(m), "Holiday 2024"), "%s, %s", m->content_id,
          title_of(m));
    CHECK(!strcmp(m->content_type, "video/mp4"), "content type %s", m->content_type);
    char url[256];
    snprintf(url, sizeof url, "%s", m->content_id);
    castd_free(seen);
    int rc = run_program(code_text, sizeof code_text, "/usr/bin/curl", "-s", "-o", copy, "-w", "%{http_code}",
                         "--max-time", "20", url, NULL);
    CHECK(rc == 0 && !strcmp(code_text, "200"), "curl %s: exit %d, HTTP %s", url, rc, code_text);
    CHECK(same_contents(movie, copy), "castd served the file's bytes");

    /* A title and content type given are kept; the response may be left out. */
    code = castd_load_file(client, DEVICE, movie, "Given title", "video/mp4", NULL, &error);
    CHECK(code == CASTD_OK, "load_file with a title: %s %s", castd_code_name(code), msg(&error));
    m = media_seen(env, &seen);
    CHECK(m && !strcmp(title_of(m), "Given title") && strcmp(m->content_id, url) && !strncmp(m->content_id, "http://", 7),
          "the second load: %s %s", m ? title_of(m) : "(none)", m ? m->content_id : "");
    castd_free(seen);
    CHECK(open_fds() == before, "nothing left open: %d then %d", before, open_fds());

    /* castd-c-control load: a path (no URL scheme) is a file here. */
    char program[512], out[512], missing[400];
    snprintf(program, sizeof program, "%s/castd-c-control", build_dir());
    rc = run_program(out, sizeof out, program, "--socket", env->sock, "--device", DEVICE, "load", movie, "By path",
                     NULL);
    CHECK(rc == 0, "control load PATH exited %d", rc);
    m = media_seen(env, &seen);
    CHECK(m && !strcmp(title_of(m), "By path") && !strncmp(m->content_id, "http://", 7), "loaded by castd-c-control");
    castd_free(seen);
    snprintf(missing, sizeof missing, "%s/nope.mp4", env->dir);
    rc = run_program(out, sizeof out, program, "--socket", env->sock, "load", missing, NULL);
    CHECK(rc == CASTD_NOT_FOUND, "a missing file exits 5: %d", rc);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

/* ---- a fake castd --------------------------------------------------------------------------- */

static int listen_on(const char *path) {
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) return -1;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 4) < 0)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static bool read_all(int fd, void *buffer, size_t len) {
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buffer + got, len - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += (size_t)n;
    }
    return true;
}

/* The files socket's side, in a thread: takes one request, answers `answer`, and if `rpc` is a
 * connection, reads the Load the client then makes there and hangs up on it. */
typedef struct fake_files {
    int listener, rpc;
    uint8_t answer[256];
    size_t answer_len;
    /* What it saw. */
    bool request_read;
    char name[256];
    int descriptors;
    struct stat file;
    int file_flags;
    bool load_read, files_open_at_load, files_closed_after;
    char handle_loaded[64], content_id[64];
} fake_files;

static void take_request(fake_files *f, int conn) {
    uint8_t data[1024];
    union {
        char bytes[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {data, sizeof data};
    struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes,
                             .msg_controllen = sizeof control.bytes};
    ssize_t n = recvmsg(conn, &message, MSG_CMSG_CLOEXEC);
    if (n < 4) return;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (f->descriptors++ == 0) {
                fstat(fd, &f->file);
                f->file_flags = fcntl(fd, F_GETFL);
            }
            close(fd);
        }
    }
    size_t len = (size_t)data[0] << 24 | (size_t)data[1] << 16 | (size_t)data[2] << 8 | data[3];
    if (len > sizeof data - 4 || (size_t)n < 4 + len) return; /* one small sendmsg: all of it */
    Castd__V1__FileHandover *request = castd__v1__file_handover__unpack(NULL, len, data + 4);
    if (!request) return;
    if (request->n_names == 1) snprintf(f->name, sizeof f->name, "%s", request->names[0]);
    f->request_read = request->n_names == 1;
    castd__v1__file_handover__free_unpacked(request, NULL);
}

static void take_load(fake_files *f, int conn) {
    uint8_t header[4];
    if (!read_all(f->rpc, header, 4)) return;
    size_t len = (size_t)header[0] << 24 | (size_t)header[1] << 16 | (size_t)header[2] << 8 | header[3];
    uint8_t *body = malloc(len ? len : 1);
    if (body && read_all(f->rpc, body, len)) {
        Castd__V1__Frame *frame = castd__v1__frame__unpack(NULL, len, body);
        if (frame && frame->start && !strcmp(frame->start->method, "/castd.v1.Cast/Load")) {
            Castd__V1__LoadRequest *load =
                castd__v1__load_request__unpack(NULL, frame->start->request.len, frame->start->request.data);
            if (load && load->media) {
                snprintf(f->handle_loaded, sizeof f->handle_loaded, "%s", load->media->file);
                snprintf(f->content_id, sizeof f->content_id, "%s", load->media->content_id);
                f->load_read = true;
            }
            if (load) castd__v1__load_request__free_unpacked(load, NULL);
            /* The files connection is still open while the Load waits for its answer. */
            struct pollfd p = {conn, POLLIN, 0};
            f->files_open_at_load = poll(&p, 1, 0) == 0;
        }
        if (frame) castd__v1__frame__free_unpacked(frame, NULL);
    }
    free(body);
    shutdown(f->rpc, SHUT_RDWR); /* the Load fails: UNAVAILABLE */
    char byte;
    f->files_closed_after = read(conn, &byte, 1) == 0;
}

static void *serve_files(void *arg) {
    fake_files *f = arg;
    int conn = accept4(f->listener, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0) return NULL;
    struct timeval limit = {(time_t)(scaled_ms(10) / 1000), 0};
    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    if (f->rpc >= 0) setsockopt(f->rpc, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    take_request(f, conn);
    if (f->answer_len && write(conn, f->answer, f->answer_len) == (ssize_t)f->answer_len && f->rpc >= 0)
        take_load(f, conn);
    close(conn);
    return NULL;
}

static void set_answer(fake_files *f, const Castd__V1__FileHandoverResponse *response) {
    size_t len = castd__v1__file_handover_response__get_packed_size(response);
    f->answer[0] = (uint8_t)(len >> 24);
    f->answer[1] = (uint8_t)(len >> 16);
    f->answer[2] = (uint8_t)(len >> 8);
    f->answer[3] = (uint8_t)len;
    f->answer_len = 4 + castd__v1__file_handover_response__pack(response, f->answer + 4);
}

/* Nothing arrived on castd's RPC connection. */
static bool rpc_quiet(int rpc) {
    struct pollfd p = {rpc, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
}

bool test_load_file_local_errors(test_env *env) {
    int listener = listen_on(env->sock);
    CHECK(listener >= 0, "listen at %s", env->sock);
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(env->sock, &error);
    CHECK(client, "connect: %s", msg(&error));
    int rpc = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    char path[400];

    snprintf(path, sizeof path, "%s/nope.mp4", env->dir);
    castd_code code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error);
    CHECK(code == CASTD_NOT_FOUND && error.reason && !strcmp(error.reason, "LOCAL_FILE"), "missing: %s %s",
          castd_code_name(code), msg(&error));
    char expected[500];
    snprintf(expected, sizeof expected, "cannot open %s: No such file or directory", path);
    CHECK(!strcmp(msg(&error), expected), "the message: %s", msg(&error));
    CHECK(castd_load_file(client, DEVICE, path, NULL, NULL, NULL, NULL) == CASTD_NOT_FOUND, "without an error");

    code = castd_load_file(client, DEVICE, env->dir, NULL, NULL, NULL, &error);
    CHECK(code == CASTD_INVALID_ARGUMENT && strstr(msg(&error), "it is a directory, not a file") &&
              strstr(msg(&error), env->dir),
          "a directory: %s %s", castd_code_name(code), msg(&error));

    snprintf(path, sizeof path, "%s/fifo", env->dir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo");
    code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error);
    CHECK(code == CASTD_INVALID_ARGUMENT && strstr(msg(&error), "not a regular file"), "a FIFO (not waited on): %s",
          msg(&error));

    snprintf(path, sizeof path, "%s/secret.mp4", env->dir);
    CHECK(write_mp4(path, 10) && chmod(path, 0) == 0, "writing %s", path);
    if (geteuid() != 0) {
        code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error);
        CHECK(code == CASTD_PERMISSION_DENIED && strstr(msg(&error), "Permission denied"), "unreadable: %s %s",
              castd_code_name(code), msg(&error));
    } else {
        fprintf(stderr, "    (as root every file is readable: the unreadable case is not tried)\n");
    }
    code = castd_load_file(client, DEVICE, NULL, NULL, NULL, NULL, &error);
    CHECK(code == CASTD_INVALID_ARGUMENT && strstr(msg(&error), "path"), "no path: %s", msg(&error));

    /* A readable file, and no files socket beside castd's: not even a files connection. */
    code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error);
    CHECK(code == CASTD_UNAVAILABLE && strstr(msg(&error), ".sock.files") && strstr(msg(&error), "is castd running"),
          "no files socket: %s %s", castd_code_name(code), msg(&error));
    CHECK(rpc_quiet(rpc), "castd was asked nothing");
    castd_error_clear(&error);
    castd_client_close(client);
    close(rpc);
    close(listener);
    return true;
}

bool test_load_file_handover(test_env *env) {
    char files_path[400], path[400];
    snprintf(files_path, sizeof files_path, "%s.files", env->sock);
    snprintf(path, sizeof path, "%s/clip one.mp4", env->dir);
    CHECK(write_mp4(path, 1000), "writing %s", path);
    struct stat original;
    CHECK(stat(path, &original) == 0, "stat");
    int listener = listen_on(env->sock), files = listen_on(files_path);
    CHECK(listener >= 0 && files >= 0, "listen");
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(env->sock, &error);
    CHECK(client, "connect: %s", msg(&error));
    int rpc = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    pthread_t thread;

    /* castd refuses (a client without control access): its status, and no Load. */
    fake_files f = {.listener = files, .rpc = -1};
    Castd__V1__Status denied = CASTD__V1__STATUS__INIT;
    denied.code = CASTD__V1__CODE__PERMISSION_DENIED;
    denied.message = "handing files to castd needs control access";
    Castd__V1__FileHandoverResponse response = CASTD__V1__FILE_HANDOVER_RESPONSE__INIT;
    response.status = &denied;
    set_answer(&f, &response);
    CHECK(pthread_create(&thread, NULL, serve_files, &f) == 0, "thread");
    castd_code code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error);
    pthread_join(thread, NULL);
    CHECK(code == CASTD_PERMISSION_DENIED && !strcmp(msg(&error), denied.message) && !error.reason,
          "castd's refusal: %s %s", castd_code_name(code), msg(&error));
    /* What went over: one FileHandover naming the file, with the file open for reading. */
    CHECK(f.request_read && !strcmp(f.name, "clip one.mp4"), "the request names the file: %s", f.name);
    CHECK(f.descriptors == 1 && f.file.st_ino == original.st_ino && f.file.st_dev == original.st_dev,
          "the file's descriptor went with it (%d)", f.descriptors);
    CHECK((f.file_flags & O_ACCMODE) == O_RDONLY && !(f.file_flags & O_NONBLOCK), "read-only, blocking: %#x",
          f.file_flags);
    CHECK(rpc_quiet(rpc), "no Load after a refusal");

    /* castd takes it: the Load names the handle, while the files connection stays open. */
    f = (fake_files){.listener = files, .rpc = rpc};
    char *handles[] = {"0123456789abcdef0123456789abcdef"};
    response = (Castd__V1__FileHandoverResponse)CASTD__V1__FILE_HANDOVER_RESPONSE__INIT;
    response.n_handles = 1;
    response.handles = handles;
    set_answer(&f, &response);
    CHECK(pthread_create(&thread, NULL, serve_files, &f) == 0, "thread");
    code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error);
    pthread_join(thread, NULL);
    CHECK(f.load_read && !strcmp(f.handle_loaded, handles[0]) && !f.content_id[0], "the Load: file '%s', content '%s'",
          f.handle_loaded, f.content_id);
    CHECK(f.files_open_at_load && f.files_closed_after, "files connection open during the Load (%d), closed after (%d)",
          f.files_open_at_load, f.files_closed_after);
    CHECK(code == CASTD_UNAVAILABLE, "the Load's own error: %s %s", castd_code_name(code), msg(&error));
    castd_client_close(client);
    close(rpc);

    /* Bounded: an answer's length over the bound, and no answer within the client's timeout. */
    client = castd_client_connect(env->sock, &error);
    CHECK(client, "connect: %s", msg(&error));
    rpc = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    f = (fake_files){.listener = files, .rpc = -1, .answer = {0x7f, 0xff, 0xff, 0xff}, .answer_len = 4};
    CHECK(pthread_create(&thread, NULL, serve_files, &f) == 0, "thread");
    code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error);
    pthread_join(thread, NULL);
    CHECK(code == CASTD_INTERNAL && strstr(msg(&error), "a frame of 2147483647 bytes"), "a huge length: %s %s",
          castd_code_name(code), msg(&error));

    castd_client_set_timeout(client, 300);
    int64_t start = monotonic_ms();
    code = castd_load_file(client, DEVICE, path, NULL, NULL, NULL, &error); /* nobody accepts */
    int64_t elapsed = monotonic_ms() - start;
    CHECK(code == CASTD_DEADLINE_EXCEEDED && strstr(msg(&error), "did not answer within 300 ms"), "silence: %s %s",
          castd_code_name(code), msg(&error));
    CHECK(elapsed >= 250 && elapsed < 300 + scaled_ms(1.5), "ended near 300 ms: %lld ms", (long long)elapsed);
    CHECK(rpc_quiet(rpc), "no Load");
    castd_error_clear(&error);
    castd_client_close(client);
    close(rpc);
    close(files);
    close(listener);
    return true;
}
