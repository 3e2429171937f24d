/* libcastd-client: the connection, its calls and streams. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
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

#include "frame_reader.h"
#include "internal.h"

/* One message waiting for its reader. */
struct msg_node {
    ProtobufCMessage *message;
    size_t bytes; /* what decoding it allocated, counted against the stream's bound */
    struct msg_node *next;
};

/* A call: a castd_stream for streaming calls; unary calls use one internally. */
struct castd_stream {
    castd_client *client; /* NULL once the call has ended */
    uint64_t id;
    char *method; /* the full path, "/castd.v1.Cast/Watch" */
    const ProtobufCMessageDescriptor *type;
    bool streaming;
    bool ended;
    castd_code end_code;
    castd_error end_error;
    struct msg_node *head, *tail;
    size_t count, bytes;
    struct castd_stream *next; /* in the client's list of open calls */
};

struct castd_client {
    int fd;
    char *path;
    castd_frame_reader reader;
    uint8_t *out;
    size_t out_len, out_off, out_cap;
    uint64_t next_id;
    struct castd_stream *open; /* open calls */
    bool broken;
    castd_error broken_error;
    bool has_connection_status;
    castd_error connection_status;
    size_t max_frame, stream_max_messages, stream_max_bytes, max_decoded;
    int timeout_ms;
    int write_error; /* errno of a failed write, until the connection is failed for it */
};

/* ---- errors ------------------------------------------------------------------------------- */

static char *dup_or_null(const char *s) {
    if (!s || !*s) return NULL;
    return strdup(s);
}

void castd_error_clear(castd_error *error) {
    if (!error) return;
    free(error->message);
    free(error->reason);
    free(error->device_error.type);
    free(error->device_error.reason);
    free(error->device_error.detail);
    memset(error, 0, sizeof *error);
    error->code = CASTD_OK;
}

castd_code castd_set_error(castd_error *error, castd_code code, const char *format, ...) {
    if (!error) return code;
    castd_error_clear(error);
    error->code = code;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n >= 0) {
        error->message = malloc((size_t)n + 1);
        if (error->message) {
            va_start(args, format);
            vsnprintf(error->message, (size_t)n + 1, format, args);
            va_end(args);
        }
    }
    return code;
}

static castd_code copy_error(castd_error *dst, const castd_error *src) {
    if (!dst) return src->code;
    castd_error_clear(dst);
    dst->code = src->code;
    dst->message = dup_or_null(src->message);
    dst->reason = dup_or_null(src->reason);
    dst->device_error.type = dup_or_null(src->device_error.type);
    dst->device_error.reason = dup_or_null(src->device_error.reason);
    dst->device_error.detail = dup_or_null(src->device_error.detail);
    return src->code;
}

static castd_code ok(castd_error *error) {
    castd_error_clear(error);
    return CASTD_OK;
}

static void error_from_status(castd_error *dst, const Castd__V1__Status *status) {
    castd_error_clear(dst);
    dst->code = (castd_code)status->code;
    if (dst->code < CASTD_OK || dst->code > CASTD_UNAUTHENTICATED) dst->code = CASTD_UNKNOWN;
    dst->message = dup_or_null(status->message);
    dst->reason = dup_or_null(status->reason);
    if (status->device_error) {
        dst->device_error.type = dup_or_null(status->device_error->type);
        dst->device_error.reason = dup_or_null(status->device_error->reason);
        dst->device_error.detail = dup_or_null(status->device_error->detail);
    }
}

castd_code castd_set_error_from_status(castd_error *error, const Castd__V1__Status *status) {
    castd_error local = CASTD_ERROR_INIT;
    castd_error *dst = error ? error : &local;
    error_from_status(dst, status);
    castd_code code = dst->code;
    castd_error_clear(&local);
    return code;
}

const char *castd_code_name(castd_code code) {
    static const char *const names[] = {
        "OK",        "CANCELLED",         "UNKNOWN",         "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",  "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL",      "UNAVAILABLE",     "DATA_LOSS",
        "UNAUTHENTICATED"};
    if (code == CASTD_NO_MESSAGE) return "NO_MESSAGE";
    if (code < 0 || (size_t)code >= sizeof names / sizeof names[0]) return "INVALID_CODE";
    return names[code];
}

void castd_free(void *message) {
    if (message) protobuf_c_message_free_unpacked((ProtobufCMessage *)message, NULL);
}

/* ---- small helpers ------------------------------------------------------------------------ */

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *full_method(const char *method) {
    if (method[0] == '/') return strdup(method);
    static const char prefix[] = "/castd.v1.Cast/";
    size_t n = strlen(method);
    char *path = malloc(sizeof prefix + n);
    if (!path) return NULL;
    memcpy(path, prefix, sizeof prefix - 1);
    memcpy(path + sizeof prefix - 1, method, n + 1);
    return path;
}

static bool is_streaming_method(const char *path) {
    static const char *const streaming[] = {"/castd.v1.Cast/Watch", "/castd.v1.Cast/Listen",
                                            "/castd.v1.Cast/StreamLogs"};
    for (size_t i = 0; i < sizeof streaming / sizeof streaming[0]; i++)
        if (strcmp(path, streaming[i]) == 0) return true;
    return false;
}

static void free_messages(castd_stream *call) {
    struct msg_node *node = call->head;
    while (node) {
        struct msg_node *next = node->next;
        castd_free(node->message);
        free(node);
        node = next;
    }
    call->head = call->tail = NULL;
    call->count = call->bytes = 0;
}

/* ---- the socket path and connecting ------------------------------------------------------- */

static bool path_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

size_t castd_default_socket_path(char *buffer, size_t size) {
    static const char system_path[] = "/run/castd/castd.sock";
    const char *env = getenv("CASTD_SOCKET");
    int n;
    if (env && *env) {
        n = snprintf(buffer, size, "%s", env);
    } else {
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        if (xdg && *xdg) {
            size_t need = strlen(xdg) + sizeof "/castd/castd.sock";
            char *user = malloc(need);
            if (!user) {
                n = snprintf(buffer, size, "%s", system_path);
            } else {
                snprintf(user, need, "%s/castd/castd.sock", xdg);
                if (!path_exists(user) && path_exists(system_path))
                    n = snprintf(buffer, size, "%s", system_path);
                else
                    n = snprintf(buffer, size, "%s", user);
                free(user);
            }
        } else {
            n = snprintf(buffer, size, "%s", system_path);
        }
    }
    return n < 0 ? 0 : (size_t)n;
}

static castd_code connect_error(castd_error *error, const char *path, int code, const char *why) {
    if (code == EACCES || code == EPERM)
        return castd_set_error(error, CASTD_PERMISSION_DENIED,
                               "cannot connect to castd at %s: %s — ask for access to castd's "
                               "socket (its group), or use one you own with --socket / "
                               "CASTD_SOCKET",
                               path, why);
    return castd_set_error(error, CASTD_UNAVAILABLE,
                           "cannot connect to castd at %s: %s — is castd running? (start it "
                           "with `castd`, or set --socket / CASTD_SOCKET)",
                           path, why);
}

castd_client *castd_client_connect(const char *path, castd_error *error) {
    char *resolved;
    if (path) {
        resolved = strdup(path);
    } else {
        size_t n = castd_default_socket_path(NULL, 0);
        resolved = malloc(n + 1);
        if (resolved) castd_default_socket_path(resolved, n + 1);
    }
    if (!resolved) {
        castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
        return NULL;
    }
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(resolved) >= sizeof address.sun_path) {
        connect_error(error, resolved, 0, "the path is too long for a Unix socket");
        free(resolved);
        return NULL;
    }
    memcpy(address.sun_path, resolved, strlen(resolved) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int code = errno;
        connect_error(error, resolved, code, strerror(code));
        free(resolved);
        return NULL;
    }
    int rc;
    do {
        rc = connect(fd, (const struct sockaddr *)&address, sizeof address);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        int code = errno;
        connect_error(error, resolved, code, strerror(code));
        close(fd);
        free(resolved);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int code = errno;
        connect_error(error, resolved, code, strerror(code));
        close(fd);
        free(resolved);
        return NULL;
    }
    castd_client *client = calloc(1, sizeof *client);
    if (!client) {
        close(fd);
        free(resolved);
        castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
        return NULL;
    }
    client->fd = fd;
    client->path = resolved;
    client->next_id = 1;
    client->max_frame = CASTD_DEFAULT_MAX_FRAME;
    client->stream_max_messages = CASTD_DEFAULT_STREAM_MAX_MESSAGES;
    client->stream_max_bytes = CASTD_DEFAULT_STREAM_MAX_BYTES;
    client->max_decoded = CASTD_DEFAULT_MAX_DECODED;
    castd_frame_reader_init(&client->reader, client->max_frame);
    ok(error);
    return client;
}

const char *castd_client_socket_path(const castd_client *client) { return client->path; }

void castd_client_set_max_frame(castd_client *client, size_t bytes) {
    if (bytes < 16) bytes = 16;
    if (bytes > UINT32_MAX) bytes = UINT32_MAX;
    client->max_frame = bytes;
    client->reader.max_frame = bytes;
}

void castd_client_set_stream_buffer(castd_client *client, size_t max_messages, size_t max_bytes) {
    if (max_messages) client->stream_max_messages = max_messages;
    if (max_bytes) client->stream_max_bytes = max_bytes;
}

void castd_client_set_max_decoded(castd_client *client, size_t bytes) {
    client->max_decoded = bytes < CASTD_MIN_MAX_DECODED ? CASTD_MIN_MAX_DECODED : bytes;
}

void castd_client_set_timeout(castd_client *client, int timeout_ms) {
    client->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
}

int castd_client_timeout(const castd_client *client) { return client->timeout_ms; }

const castd_error *castd_client_connection_status(const castd_client *client) {
    return client->has_connection_status ? &client->connection_status : NULL;
}

/* ---- calls ending ------------------------------------------------------------------------- */

static void unlink_call(castd_client *client, castd_stream *call) {
    for (castd_stream **p = &client->open; *p; p = &(*p)->next) {
        if (*p == call) {
            *p = call->next;
            call->next = NULL;
            return;
        }
    }
}

/* Ends `call` with `error` (copied), and takes it off the client's list. */
static void end_call(castd_stream *call, const castd_error *error) {
    if (call->ended) return;
    if (call->client) unlink_call(call->client, call);
    call->client = NULL;
    call->ended = true;
    call->end_code = error->code;
    copy_error(&call->end_error, error);
}

static void end_call_with(castd_stream *call, castd_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void end_call_with(castd_stream *call, castd_code code, const char *format, ...) {
    castd_error error = CASTD_ERROR_INIT;
    char text[512];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    castd_set_error(&error, code, "%s", text);
    end_call(call, &error);
    castd_error_clear(&error);
}

/* The connection is over: every open call, and every later one, fails with this error (or with
 * what castd said on call id 0 before closing it). */
static void connection_failed(castd_client *client, castd_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void connection_failed(castd_client *client, castd_code code, const char *format, ...) {
    if (client->broken) return;
    client->broken = true;
    char text[512];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    if (client->has_connection_status && client->connection_status.code != CASTD_OK &&
        code == CASTD_UNAVAILABLE) {
        /* castd said why it closes the connection: that is the error. */
        const castd_error *said = &client->connection_status;
        castd_set_error(&client->broken_error, said->code, "castd closed the connection: %s",
                        said->message ? said->message : castd_code_name(said->code));
        client->broken_error.reason = dup_or_null(said->reason);
    } else {
        castd_set_error(&client->broken_error, code, "%s", text);
    }
    if (client->fd >= 0) close(client->fd);
    client->fd = -1;
    free(client->out);
    client->out = NULL;
    client->out_len = client->out_off = client->out_cap = 0;
    castd_frame_reader_free(&client->reader);
    while (client->open) end_call(client->open, &client->broken_error);
}

/* ---- writing ------------------------------------------------------------------------------ */

/* Writes what is queued, without blocking. */
static void flush(castd_client *client) {
    while (!client->broken && !client->write_error && client->out_off < client->out_len) {
        ssize_t n = send(client->fd, client->out + client->out_off,
                         client->out_len - client->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            /* Not failed yet: what castd sent before closing (maybe why) is read first. */
            client->write_error = errno;
            client->out_off = client->out_len = 0;
            return;
        }
        client->out_off += (size_t)n;
    }
    if (client->out_off == client->out_len) client->out_off = client->out_len = 0;
}

/* Queues one frame (length prefix and body). */
static castd_code enqueue_frame(castd_client *client, const Castd__V1__Frame *frame,
                                const char *method, castd_error *error) {
    size_t size = protobuf_c_message_get_packed_size(&frame->base);
    if (size > client->max_frame)
        return castd_set_error(error, CASTD_RESOURCE_EXHAUSTED,
                               "the %s request is %zu bytes, over the %zu-byte frame limit",
                               method, size, client->max_frame);
    size_t need = client->out_len + 4 + size;
    if (need > client->out_cap) {
        size_t cap = client->out_cap ? client->out_cap : 4096;
        while (cap < need) cap *= 2;
        uint8_t *grown = realloc(client->out, cap);
        if (!grown) return castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
        client->out = grown;
        client->out_cap = cap;
    }
    uint8_t *p = client->out + client->out_len;
    p[0] = (uint8_t)(size >> 24);
    p[1] = (uint8_t)(size >> 16);
    p[2] = (uint8_t)(size >> 8);
    p[3] = (uint8_t)size;
    protobuf_c_message_pack(&frame->base, p + 4);
    client->out_len = need;
    return ok(error);
}

static void send_cancel(castd_client *client, uint64_t id, const char *method) {
    if (client->broken) return;
    Castd__V1__Frame frame = CASTD__V1__FRAME__INIT;
    Castd__V1__Cancel cancel = CASTD__V1__CANCEL__INIT;
    frame.call_id = id;
    frame.kind_case = CASTD__V1__FRAME__KIND_CANCEL;
    frame.cancel = &cancel;
    if (enqueue_frame(client, &frame, method, NULL) == CASTD_OK) flush(client);
}

/* ---- reading and routing ------------------------------------------------------------------ */

static castd_stream *find_call(castd_client *client, uint64_t id) {
    for (castd_stream *call = client->open; call; call = call->next)
        if (call->id == id) return call;
    return NULL;
}

/* ---- decoding within a budget -------------------------------------------------------------
 * A frame's length bounds the bytes read, not what decoding them allocates: an empty submessage
 * is 2 bytes on the wire and a whole struct once decoded (and protobuf-c's scan keeps ~40 bytes
 * per field while it decodes), so 4 MiB can decode to hundreds of MB. Every decode of what castd
 * sends goes through this allocator, which counts each allocation (its size, plus what malloc
 * spends on it) and fails once the decode's budget is spent: protobuf-c 1.4 then frees what it
 * had allocated and returns NULL. Freed memory is not given back to the budget (protobuf-c's
 * free does not say the size), so the count is what the decode allocated in all, at least its
 * peak. The blocks are malloc's: the message is freed with castd_free, as any other. */

#define DECODE_MALLOC_OVERHEAD 16

typedef struct decode_budget {
    size_t limit, used;
    bool exceeded;
} decode_budget;

static void *budget_alloc(void *data, size_t size) {
    decode_budget *budget = data;
    size_t cost = size + DECODE_MALLOC_OVERHEAD;
    if (cost < size || cost > budget->limit - budget->used) {
        budget->exceeded = true;
        return NULL;
    }
    void *block = malloc(size ? size : 1);
    if (block) budget->used += cost;
    return block;
}

static void budget_free(void *data, void *block) {
    (void)data;
    free(block);
}

/* Decodes `len` bytes as `type`, allocating at most `limit` bytes (as counted above). NULL when
 * it cannot: *over_budget says whether the budget is why; *cost is what the message took. */
static ProtobufCMessage *decode_within(const ProtobufCMessageDescriptor *type, size_t len,
                                       const uint8_t *data, size_t limit, bool *over_budget,
                                       size_t *cost) {
    decode_budget budget = {limit, 0, false};
    ProtobufCAllocator allocator = {budget_alloc, budget_free, &budget};
    ProtobufCMessage *message = protobuf_c_message_unpack(type, &allocator, len, data);
    *over_budget = !message && budget.exceeded;
    *cost = budget.used;
    return message;
}

static void deliver(castd_client *client, castd_stream *call, const ProtobufCBinaryData *data) {
    if (!call->streaming && call->head) return; /* a unary call takes its first response */
    if (call->streaming && call->count + 1 > client->stream_max_messages) {
        uint64_t id = call->id;
        end_call_with(call, CASTD_RESOURCE_EXHAUSTED,
                      "%s fell behind: %zu messages (%zu bytes decoded) were waiting to be read, "
                      "over this client's bound (%zu messages, %zu bytes); the stream was "
                      "cancelled",
                      call->method, call->count, call->bytes, client->stream_max_messages,
                      client->stream_max_bytes);
        send_cancel(client, id, call->method);
        return;
    }
    /* A stream's messages, decoded, stay within its bound together; a unary response (or a
     * stream's message) within the decode limit. */
    size_t limit = client->max_decoded;
    bool stream_bound = false;
    if (call->streaming) {
        size_t room = client->stream_max_bytes > call->bytes
                          ? client->stream_max_bytes - call->bytes
                          : 0;
        if (room <= limit) {
            limit = room;
            stream_bound = true;
        }
    }
    bool over_budget;
    size_t cost;
    ProtobufCMessage *message =
        decode_within(call->type, data->len, data->data, limit, &over_budget, &cost);
    if (!message) {
        uint64_t id = call->id;
        if (!over_budget)
            end_call_with(call, CASTD_INTERNAL, "cannot decode the %s castd sent for %s",
                          call->type->name, call->method);
        else if (stream_bound && call->count > 0)
            end_call_with(call, CASTD_RESOURCE_EXHAUSTED,
                          "%s fell behind: %zu messages (%zu bytes decoded) were waiting to be "
                          "read, and the next takes more than the %zu bytes left of this "
                          "client's bound (%zu messages, %zu bytes); the stream was cancelled",
                          call->method, call->count, call->bytes, limit,
                          client->stream_max_messages, client->stream_max_bytes);
        else
            end_call_with(call, CASTD_RESOURCE_EXHAUSTED,
                          "the %s castd sent for %s (%zu bytes) takes more than %zu bytes to "
                          "decode, over this client's limit (%s); the %s was cancelled",
                          call->type->name, call->method, data->len, limit,
                          stream_bound ? "castd_client_set_stream_buffer"
                                       : "castd_client_set_max_decoded",
                          call->streaming ? "stream" : "call");
        send_cancel(client, id, call->method);
        return;
    }
    struct msg_node *node = malloc(sizeof *node);
    if (!node) {
        castd_free(message);
        end_call_with(call, CASTD_RESOURCE_EXHAUSTED, "out of memory buffering %s",
                      call->method);
        return;
    }
    node->message = message;
    node->bytes = cost;
    node->next = NULL;
    if (call->tail)
        call->tail->next = node;
    else
        call->head = node;
    call->tail = node;
    call->count++;
    call->bytes += cost;
}

static void route_frame(castd_client *client, const uint8_t *body, size_t len) {
    /* The frame itself (unknown fields in it cost as much as in a message) within the limit. */
    bool over_budget;
    size_t cost;
    Castd__V1__Frame *frame = (Castd__V1__Frame *)decode_within(
        &castd__v1__frame__descriptor, len, body, client->max_decoded, &over_budget, &cost);
    if (!frame && over_budget) {
        connection_failed(client, CASTD_RESOURCE_EXHAUSTED,
                          "castd sent a castd.v1 frame (%zu bytes) that takes more than %zu bytes "
                          "to decode, over this client's limit (castd_client_set_max_decoded); "
                          "connection closed",
                          len, client->max_decoded);
        return;
    }
    if (!frame) {
        connection_failed(client, CASTD_INTERNAL,
                          "castd sent a malformed castd.v1 frame (%zu bytes); connection closed",
                          len);
        return;
    }
    if (frame->call_id == 0) {
        if (frame->kind_case == CASTD__V1__FRAME__KIND_STATUS && frame->status) {
            error_from_status(&client->connection_status, frame->status);
            client->has_connection_status = true;
        }
        castd__v1__frame__free_unpacked(frame, NULL);
        return;
    }
    castd_stream *call = find_call(client, frame->call_id);
    if (call) {
        if (frame->kind_case == CASTD__V1__FRAME__KIND_MESSAGE) {
            deliver(client, call, &frame->message);
        } else if (frame->kind_case == CASTD__V1__FRAME__KIND_STATUS && frame->status) {
            castd_error error = CASTD_ERROR_INIT;
            error_from_status(&error, frame->status);
            if (error.code == CASTD_OK && !call->streaming && !call->head) {
                castd_set_error(&error, CASTD_INTERNAL,
                                "castd ended %s with OK but sent no response", call->method);
            }
            end_call(call, &error);
            castd_error_clear(&error);
        }
    }
    /* Frames of calls that ended here (a local deadline, a cancel) are dropped. */
    castd__v1__frame__free_unpacked(frame, NULL);
}

/* Reads what the socket has (a bounded number of reads) and routes each whole frame. */
static void read_available(castd_client *client) {
    uint8_t buffer[65536];
    for (int reads = 0; reads < 64 && !client->broken; reads++) {
        ssize_t n = recv(client->fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            const char *why = n < 0 ? strerror(errno) : NULL;
            char where[128] = "";
            castd_frame_reader *r = &client->reader;
            if (castd_frame_reader_partial(r) && r->header_len < 4)
                snprintf(where, sizeof where,
                         " in the middle of a frame (%zu of its 4 length bytes read)",
                         r->header_len);
            else if (castd_frame_reader_partial(r))
                snprintf(where, sizeof where,
                         " in the middle of a frame (%zu of its %zu bytes read)", r->body_got,
                         r->body_len);
            connection_failed(client, CASTD_UNAVAILABLE, "castd closed the connection%s%s%s%s",
                              where, why ? " (" : "", why ? why : "", why ? ")" : "");
            return;
        }
        size_t offset = 0;
        while (offset < (size_t)n && !client->broken) {
            size_t used = 0;
            uint8_t *body = NULL;
            size_t body_len = 0;
            int rc = castd_frame_reader_feed(&client->reader, buffer + offset, (size_t)n - offset,
                                             &used, &body, &body_len);
            offset += used;
            if (rc == CASTD_FRAME_READY) {
                route_frame(client, body, body_len);
                free(body);
            } else if (rc == CASTD_FRAME_TOO_BIG) {
                connection_failed(client, CASTD_RESOURCE_EXHAUSTED,
                                  "castd sent a frame of %lu bytes, over this client's %zu-byte "
                                  "limit; connection closed",
                                  (unsigned long)client->reader.refused, client->max_frame);
            } else if (rc == CASTD_FRAME_NO_MEMORY) {
                connection_failed(client, CASTD_RESOURCE_EXHAUSTED,
                                  "out of memory reading a frame from castd; connection closed");
            }
        }
        if ((size_t)n < sizeof buffer) return; /* likely drained */
    }
}

/* ---- the event loop ----------------------------------------------------------------------- */

/* After a write failed: reads what castd sent before it closed (its reason, the end of the
 * connection), then fails the connection with the write's error if reading did not. */
static void settle(castd_client *client) {
    if (!client->write_error || client->broken) return;
    read_available(client);
    if (!client->broken)
        connection_failed(client, CASTD_UNAVAILABLE, "castd closed the connection (%s)",
                          strerror(client->write_error));
}

int castd_client_fd(const castd_client *client) { return client->broken ? -1 : client->fd; }

short castd_client_events(const castd_client *client) {
    if (client->broken) return 0;
    return (short)(POLLIN | (client->out_off < client->out_len ? POLLOUT : 0));
}

castd_code castd_client_dispatch(castd_client *client, short revents, castd_error *error) {
    if (!client->broken && (revents == 0 || (revents & (POLLOUT | POLLERR | POLLHUP))))
        flush(client);
    if (!client->broken && (revents == 0 || (revents & (POLLIN | POLLERR | POLLHUP))))
        read_available(client);
    if (!client->broken) flush(client);
    settle(client);
    if (client->broken) return copy_error(error, &client->broken_error);
    return ok(error);
}

/* Does I/O until `call` has a message or has ended, or `deadline` (-1: none) passes. */
static void pump(castd_client *client, castd_stream *call, int64_t deadline) {
    flush(client);
    settle(client);
    while (!call->ended && !(call->streaming && call->head) && !client->broken) {
        int wait = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0) return;
            wait = left > 60000 ? 60000 : (int)left;
        }
        struct pollfd p = {client->fd, castd_client_events(client), 0};
        int rc = poll(&p, 1, wait);
        if (rc < 0) {
            if (errno == EINTR) continue;
            int code = errno;
            connection_failed(client, CASTD_UNAVAILABLE, "poll failed: %s", strerror(code));
            return;
        }
        if (rc == 0) continue;
        castd_client_dispatch(client, p.revents, NULL);
    }
}

/* ---- starting calls ----------------------------------------------------------------------- */

static castd_stream *start_call(castd_client *client, const char *method,
                                const ProtobufCMessage *request,
                                const ProtobufCMessageDescriptor *response_type, bool streaming,
                                int timeout_ms, castd_code *code_out, castd_error *error) {
    *code_out = CASTD_INVALID_ARGUMENT;
    if (!client || !method || !*method || !request || !response_type) {
        castd_set_error(error, CASTD_INVALID_ARGUMENT,
                        "a call needs a client, a method, a request and a response type");
        return NULL;
    }
    if (client->broken) {
        *code_out = copy_error(error, &client->broken_error);
        return NULL;
    }
    *code_out = CASTD_RESOURCE_EXHAUSTED;
    castd_stream *call = calloc(1, sizeof *call);
    char *path = full_method(method);
    size_t size = protobuf_c_message_get_packed_size(request);
    uint8_t *packed = malloc(size ? size : 1);
    if (!call || !path || !packed) {
        free(call);
        free(path);
        free(packed);
        castd_set_error(error, CASTD_RESOURCE_EXHAUSTED, "out of memory");
        return NULL;
    }
    if (!streaming && is_streaming_method(path)) {
        *code_out = castd_set_error(error, CASTD_INVALID_ARGUMENT,
                        "%s is a streaming method; open it with castd_stream_open (or "
                        "castd_watch, castd_listen, castd_stream_logs)",
                        path);
        free(call);
        free(path);
        free(packed);
        return NULL;
    }
    protobuf_c_message_pack(request, packed);
    call->client = client;
    call->id = client->next_id++;
    call->method = path;
    call->type = response_type;
    call->streaming = streaming;

    Castd__V1__Frame frame = CASTD__V1__FRAME__INIT;
    Castd__V1__CallStart start = CASTD__V1__CALL_START__INIT;
    start.method = path;
    start.request.data = packed;
    start.request.len = size;
    start.timeout_ms = timeout_ms > 0 ? (uint64_t)timeout_ms : 0;
    frame.call_id = call->id;
    frame.kind_case = CASTD__V1__FRAME__KIND_START;
    frame.start = &start;
    castd_code code = enqueue_frame(client, &frame, path, error);
    free(packed);
    *code_out = code;
    if (code != CASTD_OK) {
        free(call->method);
        free(call);
        return NULL;
    }
    call->next = client->open;
    client->open = call;
    return call;
}

static void free_call(castd_stream *call) {
    free_messages(call);
    castd_error_clear(&call->end_error);
    free(call->method);
    free(call);
}

castd_code castd_call(castd_client *client, const char *method, const ProtobufCMessage *request,
                      const ProtobufCMessageDescriptor *response_type,
                      ProtobufCMessage **response, int timeout_ms, castd_error *error) {
    if (response) *response = NULL;
    if (timeout_ms < 0)
        return castd_set_error(error, CASTD_INVALID_ARGUMENT,
                               "timeout_ms is %d; give 0 for none, or a number of milliseconds",
                               timeout_ms);
    castd_code started;
    castd_stream *call =
        start_call(client, method, request, response_type, false, timeout_ms, &started, error);
    if (!call) return started;
    int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : -1;
    pump(client, call, deadline);
    if (!call->ended) {
        /* The local deadline passed: the call fails here, and castd is told. */
        uint64_t id = call->id;
        end_call_with(call, CASTD_DEADLINE_EXCEEDED, "%s did not finish within %d ms",
                      call->method, timeout_ms);
        send_cancel(client, id, call->method);
    }
    castd_code code = call->end_code;
    if (code == CASTD_OK) {
        if (response) {
            *response = call->head->message;
            call->head->message = NULL;
        }
        ok(error);
    } else {
        copy_error(error, &call->end_error);
    }
    free_call(call);
    return code;
}

/* ---- streams ------------------------------------------------------------------------------ */

castd_stream *castd_stream_open(castd_client *client, const char *method,
                                const ProtobufCMessage *request,
                                const ProtobufCMessageDescriptor *response_type,
                                castd_error *error) {
    castd_code started;
    castd_stream *stream =
        start_call(client, method, request, response_type, true, 0, &started, error);
    if (!stream) return NULL;
    flush(client);
    settle(client);
    if (client->broken) {
        /* The connection went while writing: the stream has its error already. */
        copy_error(error, &stream->end_error);
        free_call(stream);
        return NULL;
    }
    ok(error);
    return stream;
}

castd_code castd_stream_next(castd_stream *stream, ProtobufCMessage **message, int timeout_ms,
                             castd_error *error) {
    *message = NULL;
    if (!stream->head && !stream->ended && timeout_ms != 0 && stream->client) {
        int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : -1;
        pump(stream->client, stream, deadline);
    }
    if (stream->head) {
        struct msg_node *node = stream->head;
        stream->head = node->next;
        if (!stream->head) stream->tail = NULL;
        stream->count--;
        stream->bytes -= node->bytes;
        *message = node->message;
        free(node);
        return ok(error);
    }
    if (stream->ended) {
        if (stream->end_code == CASTD_OK) return ok(error);
        return copy_error(error, &stream->end_error);
    }
    castd_error_clear(error);
    return CASTD_NO_MESSAGE;
}

castd_code castd_stream_try_next(castd_stream *stream, ProtobufCMessage **message,
                                 castd_error *error) {
    return castd_stream_next(stream, message, 0, error);
}

bool castd_stream_ended(const castd_stream *stream) { return stream->ended; }

void castd_stream_close(castd_stream *stream) {
    if (!stream) return;
    if (!stream->ended && stream->client) {
        castd_client *client = stream->client;
        uint64_t id = stream->id;
        end_call_with(stream, CASTD_CANCELLED, "%s was closed by this client", stream->method);
        send_cancel(client, id, stream->method);
    }
    free_call(stream);
}

/* ---- closing ------------------------------------------------------------------------------ */

void castd_client_close(castd_client *client) {
    if (!client) return;
    while (client->open)
        end_call_with(client->open, CASTD_CANCELLED,
                      "the connection to castd was closed by this client");
    if (client->fd >= 0) close(client->fd);
    castd_frame_reader_free(&client->reader);
    free(client->out);
    free(client->path);
    castd_error_clear(&client->broken_error);
    castd_error_clear(&client->connection_status);
    free(client);
}
