/* libcastd-client: casting the caller's own files (castd_load_file).
 *
 * castd never opens a path a client names (rpc.proto, "The files socket"): the file is opened
 * here, with the caller's permissions, and the open descriptor is handed to castd over a second
 * Unix socket beside the RPC socket (its path + ".files") with SCM_RIGHTS. castd answers with an
 * opaque handle, which the Load call names (MediaInformation.file). castd lets go of handles no
 * call took when that connection closes, so it stays open until the Load has been answered. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* castd answers a handover at once: one that takes longer is stuck, not busy. The bound when
 * the client has no timeout of its own, or a longer one (castc's is the same). */
#define HANDOVER_TIMEOUT_MS 10000
/* The largest FileHandoverResponse read: one handle and a status take far less. */
#define MAX_RESPONSE_BYTES (64u * 1024u)

/* protobuf-c's string fields are `char *`; requests are only read. */
static char *text(const char *s) { return (char *)(s ? s : ""); }

/* An error about the file itself, found before castd is asked anything: reason LOCAL_FILE. */
static castd_code file_error(castd_error *error, castd_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static castd_code file_error(castd_error *error, castd_code code, const char *format, ...) {
    if (!error) return code;
    char message[PATH_MAX + 256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    castd_set_error(error, code, "%s", message);
    error->reason = strdup("LOCAL_FILE");
    return code;
}

static castd_code open_error_code(int code) {
    switch (code) {
    case ENOENT:
    case ENOTDIR:
        return CASTD_NOT_FOUND;
    case EACCES:
    case EPERM:
        return CASTD_PERMISSION_DENIED;
    case EMFILE:
    case ENFILE:
    case ENOMEM:
        return CASTD_RESOURCE_EXHAUSTED;
    default:
        return CASTD_INVALID_ARGUMENT;
    }
}

/* Opens `path` for reading as a regular file, into *file. */
static castd_code open_file(const char *path, int *file, castd_error *error) {
    /* Without blocking: a FIFO would wait here for a writer. */
    int fd;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int code = errno;
        return file_error(error, open_error_code(code), "cannot open %s: %s", path,
                          strerror(code));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int code = errno;
        close(fd);
        return file_error(error, CASTD_INVALID_ARGUMENT, "cannot cast %s: %s", path,
                          strerror(code));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return file_error(error, CASTD_INVALID_ARGUMENT, "cannot cast %s: it is %s", path,
                          S_ISDIR(st.st_mode) ? "a directory, not a file" : "not a regular file");
    }
    /* castd reads through this open file description: reads of it may block again. */
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    *file = fd;
    return CASTD_OK;
}

/* The name castd is told: the last path component, its bytes that are not UTF-8 as U+FFFD
 * (castd.v1 strings are UTF-8, and a file name need not be). NULL when out of memory. */
static char *file_name(const char *path) {
    const char *slash = strrchr(path, '/');
    const unsigned char *s = (const unsigned char *)(slash ? slash + 1 : path);
    char *name = malloc(strlen((const char *)s) * 3 + 1);
    if (!name) return NULL;
    size_t n = 0;
    while (*s) {
        size_t take = castd_utf8_length(s);
        if (take == 0) {
            memcpy(name + n, "\xEF\xBF\xBD", 3);
            n += 3;
            s++;
        } else {
            memcpy(name + n, s, take);
            n += take;
            s += take;
        }
    }
    name[n] = '\0';
    return name;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One connection to castd's files socket, and what its messages say. */
typedef struct handover {
    int fd;
    char path[sizeof ((struct sockaddr_un *)0)->sun_path + 8];
    int timeout_ms;
    int64_t deadline;
} handover;

static castd_code timed_out(const handover *h, castd_error *error) {
    return castd_set_error(error, CASTD_DEADLINE_EXCEEDED,
                           "castd's files socket at %s did not answer within %d ms", h->path,
                           h->timeout_ms);
}

/* Waits until `fd` is ready for `events` or the deadline passes: 1 ready, 0 timed out, -1 error. */
static int wait_for(const handover *h, short events) {
    for (;;) {
        int64_t left = h->deadline - now_ms();
        if (left <= 0) return 0;
        struct pollfd p = {h->fd, events, 0};
        int n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (n > 0) return 1;
        if (n < 0 && errno != EINTR) return -1;
    }
}

static castd_code connect_files(handover *h, const char *rpc_path, castd_error *error) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    int n = snprintf(h->path, sizeof h->path, "%s.files", rpc_path);
    if (n < 0 || (size_t)n >= sizeof address.sun_path)
        return castd_set_error(error, CASTD_INVALID_ARGUMENT,
                               "castd's files socket path %s.files is too long for a Unix socket",
                               rpc_path);
    memcpy(address.sun_path, h->path, (size_t)n + 1);
    h->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (h->fd < 0)
        return castd_set_error(error, CASTD_UNAVAILABLE, "cannot make a socket: %s",
                               strerror(errno));
    /* Bounds a connect that waits for room in castd's backlog. */
    struct timeval limit = {h->timeout_ms / 1000, (h->timeout_ms % 1000) * 1000};
    setsockopt(h->fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    int rc;
    do {
        rc = connect(h->fd, (const struct sockaddr *)&address, sizeof address);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        int code = errno;
        if (code == EACCES || code == EPERM)
            return castd_set_error(error, CASTD_PERMISSION_DENIED,
                                   "cannot reach castd's files socket at %s: %s — ask for access "
                                   "to castd's socket (its group)",
                                   h->path, strerror(code));
        return castd_set_error(error, CASTD_UNAVAILABLE,
                               "cannot reach castd's files socket at %s: %s%s", h->path,
                               strerror(code),
                               code == ENOENT || code == ECONNREFUSED
                                   ? " — is castd running, and new enough to take files?"
                                   : "");
    }
    int flags = fcntl(h->fd, F_GETFL);
    if (flags < 0 || fcntl(h->fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return castd_set_error(error, CASTD_UNAVAILABLE, "cannot use castd's files socket: %s",
                               strerror(errno));
    return CASTD_OK;
}

/* Sends `frame` with `file` attached (SCM_RIGHTS) to its first byte. */
static castd_code send_request(handover *h, const uint8_t *frame, size_t len, int file,
                               castd_error *error) {
    size_t sent = 0;
    bool attach = true;
    while (sent < len) {
        struct iovec iov = {(void *)(frame + sent), len - sent};
        struct msghdr message;
        memset(&message, 0, sizeof message);
        message.msg_iov = &iov;
        message.msg_iovlen = 1;
        union {
            char bytes[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } control;
        if (attach) {
            memset(&control, 0, sizeof control);
            message.msg_control = control.bytes;
            message.msg_controllen = sizeof control.bytes;
            struct cmsghdr *header = CMSG_FIRSTHDR(&message);
            header->cmsg_level = SOL_SOCKET;
            header->cmsg_type = SCM_RIGHTS;
            header->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(header), &file, sizeof file);
        }
        ssize_t n = sendmsg(h->fd, &message, MSG_NOSIGNAL);
        if (n > 0) {
            sent += (size_t)n;
            attach = false; /* the descriptor went with the first byte */
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int ready = wait_for(h, POLLOUT);
            if (ready == 0) return timed_out(h, error);
            if (ready > 0) continue;
        }
        return castd_set_error(error, CASTD_UNAVAILABLE, "cannot hand a file to castd at %s: %s",
                               h->path, strerror(errno));
    }
    return CASTD_OK;
}

static castd_code read_exact(handover *h, uint8_t *buffer, size_t len, castd_error *error) {
    size_t got = 0;
    while (got < len) {
        ssize_t n = recv(h->fd, buffer + got, len - got, 0);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0)
            return castd_set_error(error, CASTD_UNAVAILABLE,
                                   "castd closed its files socket at %s before it answered",
                                   h->path);
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int ready = wait_for(h, POLLIN);
            if (ready == 0) return timed_out(h, error);
            if (ready > 0) continue;
        }
        return castd_set_error(error, CASTD_UNAVAILABLE, "cannot read castd's files socket at %s: %s",
                               h->path, strerror(errno));
    }
    return CASTD_OK;
}

/* Hands `file` (named `name`) to castd; on CASTD_OK, *handle is castd's handle for it (the
 * caller's to free). */
static castd_code hand_over(handover *h, int file, const char *name, char **handle,
                            castd_error *error) {
    Castd__V1__FileHandover request = CASTD__V1__FILE_HANDOVER__INIT;
    char *names[1] = {text(name)};
    request.n_names = 1;
    request.names = names;
    size_t body = castd__v1__file_handover__get_packed_size(&request);
    uint8_t *frame = malloc(body + 4);
    if (!frame) return castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
    frame[0] = (uint8_t)(body >> 24);
    frame[1] = (uint8_t)(body >> 16);
    frame[2] = (uint8_t)(body >> 8);
    frame[3] = (uint8_t)body;
    castd__v1__file_handover__pack(&request, frame + 4);
    castd_code code = send_request(h, frame, body + 4, file, error);
    free(frame);
    if (code != CASTD_OK) return code;

    uint8_t header[4];
    if ((code = read_exact(h, header, 4, error)) != CASTD_OK) return code;
    size_t len = (size_t)header[0] << 24 | (size_t)header[1] << 16 | (size_t)header[2] << 8 | header[3];
    if (len > MAX_RESPONSE_BYTES)
        return castd_set_error(error, CASTD_INTERNAL,
                               "castd's files socket at %s answered a frame of %zu bytes (at most "
                               "%u expected)",
                               h->path, len, MAX_RESPONSE_BYTES);
    uint8_t *data = malloc(len ? len : 1);
    if (!data) return castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
    if ((code = read_exact(h, data, len, error)) != CASTD_OK) {
        free(data);
        return code;
    }
    Castd__V1__FileHandoverResponse *response =
        castd__v1__file_handover_response__unpack(NULL, len, data);
    free(data);
    if (!response)
        return castd_set_error(error, CASTD_INTERNAL,
                               "castd's files socket at %s answered something that is not a "
                               "FileHandoverResponse",
                               h->path);
    if (response->status && response->status->code != CASTD__V1__CODE__OK) {
        code = castd_set_error_from_status(error, response->status);
    } else if (response->n_handles != 1 || !response->handles[0] || !*response->handles[0]) {
        code = castd_set_error(error, CASTD_INTERNAL,
                               "castd answered %zu handles for the 1 file handed over",
                               response->n_handles);
    } else if (!(*handle = strdup(response->handles[0]))) {
        code = castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
    }
    castd__v1__file_handover_response__free_unpacked(response, NULL);
    return code;
}

castd_code castd_load_file(castd_client *client, const char *device, const char *path,
                           const char *title, const char *content_type,
                           Castd__V1__MediaStatus **out, castd_error *error) {
    if (out) *out = NULL;
    if (!client)
        return castd_set_error(error, CASTD_INVALID_ARGUMENT, "castd_load_file needs a client");
    if (!path || !*path)
        return castd_set_error(error, CASTD_INVALID_ARGUMENT,
                               "castd_load_file needs the path of a file to load");
    /* The file first: one that cannot be cast is reported before castd is asked anything. */
    int file = -1;
    castd_code code = open_file(path, &file, error);
    if (code != CASTD_OK) return code;
    char *name = file_name(path);
    if (!name) {
        close(file);
        return castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
    }

    handover h = {.fd = -1};
    int timeout = castd_client_timeout(client);
    h.timeout_ms = timeout > 0 && timeout < HANDOVER_TIMEOUT_MS ? timeout : HANDOVER_TIMEOUT_MS;
    h.deadline = now_ms() + h.timeout_ms;
    char *handle = NULL;
    code = connect_files(&h, castd_client_socket_path(client), error);
    if (code == CASTD_OK) code = hand_over(&h, file, name, &handle, error);
    /* castd holds its own copy of the descriptor now. */
    close(file);
    free(name);

    if (code == CASTD_OK) {
        Castd__V1__LoadRequest request = CASTD__V1__LOAD_REQUEST__INIT;
        Castd__V1__MediaInformation media = CASTD__V1__MEDIA_INFORMATION__INIT;
        Castd__V1__MediaMetadata metadata = CASTD__V1__MEDIA_METADATA__INIT;
        request.device = text(device);
        media.file = handle;
        media.content_type = text(content_type);
        if (title && *title) {
            metadata.title = text(title);
            media.metadata = &metadata;
        }
        request.media = &media;
        ProtobufCMessage *response = NULL;
        code = castd_call(client, "Load", &request.base, &castd__v1__media_status__descriptor,
                          out ? &response : NULL, timeout, error);
        if (out) *out = (Castd__V1__MediaStatus *)response;
    }
    /* Only now: castd lets go of a handle no call took when its connection closes. */
    if (h.fd >= 0) close(h.fd);
    free(handle);
    return code;
}
