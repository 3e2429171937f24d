/* Tests against a tiny fake castd in this process, for what a real castd cannot do on purpose:
 * a frame over the limit, a frame cut short, a connection-level status before closing. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame_reader.h"
#include "harness.h"

static int listen_at(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        if (fd >= 0) close(fd);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 4) < 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static bool write_all(int fd, const void *data, size_t len) {
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* Reads one frame the client sent; returns it decoded (NULL on error). */
static Castd__V1__Frame *read_frame(int fd) {
    uint8_t header[4];
    size_t got = 0;
    while (got < 4) {
        ssize_t n = read(fd, header + got, 4 - got);
        if (n <= 0) return NULL;
        got += (size_t)n;
    }
    size_t len = ((size_t)header[0] << 24) | ((size_t)header[1] << 16) | ((size_t)header[2] << 8) | header[3];
    uint8_t *body = malloc(len ? len : 1);
    got = 0;
    while (got < len) {
        ssize_t n = read(fd, body + got, len - got);
        if (n <= 0) {
            free(body);
            return NULL;
        }
        got += (size_t)n;
    }
    Castd__V1__Frame *frame = castd__v1__frame__unpack(NULL, len, body);
    free(body);
    return frame;
}

static void put_length(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A connected client and the fake daemon's end of its connection. */
static bool pair(test_env *env, castd_client **client, int *listener, int *server) {
    *listener = listen_at(env->sock);
    CHECK(*listener >= 0, "cannot listen at %s: %s", env->sock, strerror(errno));
    castd_error error = CASTD_ERROR_INIT;
    *client = castd_client_connect(env->sock, &error);
    CHECK(*client, "connect: %s", msg(&error));
    *server = accept(*listener, NULL, NULL);
    CHECK(*server >= 0, "accept: %s", strerror(errno));
    return true;
}

static bool refused_length(test_env *env, uint32_t length, size_t max_frame) {
    castd_client *client;
    int listener, server;
    if (!pair(env, &client, &listener, &server)) return false;
    if (max_frame) castd_client_set_max_frame(client, max_frame);
    uint8_t header[4];
    put_length(header, length);
    CHECK(write_all(server, header, 4), "write");
    /* The connection stays open: the client must refuse the length itself. */
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    ProtobufCMessage *response = NULL;
    int64_t start = monotonic_ms();
    castd_code code = castd_call(client, "GetStatus", &request.base,
                                 &castd__v1__status_response__descriptor, &response, 5000, &error);
    int64_t elapsed = monotonic_ms() - start;
    CHECK(code == CASTD_RESOURCE_EXHAUSTED, "code %s: %s", castd_code_name(code), msg(&error));
    CHECK(response == NULL, "no response");
    char expected[128];
    snprintf(expected, sizeof expected, "castd sent a frame of %lu bytes, over this client's %zu-byte limit",
             (unsigned long)length, max_frame ? max_frame : (size_t)CASTD_DEFAULT_MAX_FRAME);
    CHECK(error.message && strstr(error.message, expected), "message: %s", msg(&error));
    CHECK(elapsed < 2000, "refused at once, not at the deadline (%lld ms)", (long long)elapsed);
    CHECK(castd_client_fd(client) == -1, "the connection is closed");
    /* The client sent a proper start frame before that. */
    Castd__V1__Frame *sent = read_frame(server);
    CHECK(sent && sent->call_id == 1 && sent->kind_case == CASTD__V1__FRAME__KIND_START &&
              !strcmp(sent->start->method, "/castd.v1.Cast/GetStatus") && sent->start->timeout_ms == 5000,
          "the start frame the client sent");
    castd__v1__frame__free_unpacked(sent, NULL);
    /* Later calls fail at once with the same error. */
    code = castd_call(client, "GetStatus", &request.base, &castd__v1__status_response__descriptor,
                      NULL, 0, &error);
    CHECK(code == CASTD_RESOURCE_EXHAUSTED && strstr(msg(&error), expected), "later call: %s", msg(&error));
    castd_error_clear(&error);
    castd_client_close(client);
    close(server);
    close(listener);
    unlink(env->sock);
    return true;
}

bool test_frame_too_big(test_env *env) {
    if (!refused_length(env, CASTD_DEFAULT_MAX_FRAME + 1, 0)) return false;
    if (!refused_length(env, 0xFFFFFFFFu, 0)) return false; /* would be 4 GiB if allocated */
    return refused_length(env, 1001, 1000);                 /* castd_client_set_max_frame */
}

bool test_half_frame(test_env *env) {
    castd_client *client;
    int listener, server;
    if (!pair(env, &client, &listener, &server)) return false;
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    Castd__V1__Frame *sent = read_frame(server); /* read first: unread data would reset */
    CHECK(sent && sent->kind_case == CASTD__V1__FRAME__KIND_START &&
              !strcmp(sent->start->method, "/castd.v1.Cast/Watch"), "the Watch start frame");
    castd__v1__frame__free_unpacked(sent, NULL);
    uint8_t half[14] = {0};
    put_length(half, 100);
    memset(half + 4, 0x0a, 10);
    CHECK(write_all(server, half, sizeof half), "write");
    close(server);
    ProtobufCMessage *message = NULL;
    castd_code code = castd_stream_next(watch, &message, 5000, &error);
    CHECK(code == CASTD_UNAVAILABLE, "code %s: %s", castd_code_name(code), msg(&error));
    CHECK(message == NULL, "no message");
    CHECK(strstr(msg(&error), "castd closed the connection in the middle of a frame (10 of its 100 bytes read)"),
          "message: %s", msg(&error));
    /* A unary call after that fails at once, the same way. */
    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    code = castd_call(client, "GetStatus", &request.base, &castd__v1__status_response__descriptor,
                      NULL, 0, &error);
    CHECK(code == CASTD_UNAVAILABLE && strstr(msg(&error), "middle of a frame"), "later: %s", msg(&error));
    castd_stream_close(watch);
    castd_error_clear(&error);
    castd_client_close(client);
    close(listener);
    return true;
}

bool test_connection_status(test_env *env) {
    castd_client *client;
    int listener, server;
    if (!pair(env, &client, &listener, &server)) return false;
    /* castd says why it closes the connection (call id 0), then closes it. */
    Castd__V1__Frame frame = CASTD__V1__FRAME__INIT;
    Castd__V1__Status status = CASTD__V1__STATUS__INIT;
    status.code = CASTD__V1__CODE__RESOURCE_EXHAUSTED;
    status.message = "too many connections for uid 1000";
    frame.call_id = 0;
    frame.kind_case = CASTD__V1__FRAME__KIND_STATUS;
    frame.status = &status;
    size_t size = castd__v1__frame__get_packed_size(&frame);
    uint8_t buffer[256];
    put_length(buffer, (uint32_t)size);
    castd__v1__frame__pack(&frame, buffer + 4);
    CHECK(write_all(server, buffer, 4 + size), "write");
    close(server);
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    castd_code code = castd_call(client, "GetStatus", &request.base,
                                 &castd__v1__status_response__descriptor, NULL, 5000, &error);
    CHECK(code == CASTD_RESOURCE_EXHAUSTED, "code %s: %s", castd_code_name(code), msg(&error));
    CHECK(!strcmp(msg(&error), "castd closed the connection: too many connections for uid 1000"),
          "message: %s", msg(&error));
    const castd_error *said = castd_client_connection_status(client);
    CHECK(said && said->code == CASTD_RESOURCE_EXHAUSTED, "connection status kept");
    castd_error_clear(&error);
    castd_client_close(client);
    close(listener);
    return true;
}

bool test_frame_reader_chunks(test_env *env) {
    (void)env;
    /* Three frames, one of them empty, cut in every chunk size from 1 to all at once. */
    const char *bodies[] = {"hello", "", "a longer frame body for the reader"};
    uint8_t stream[128];
    size_t len = 0;
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(bodies[i]);
        put_length(stream + len, (uint32_t)n);
        memcpy(stream + len + 4, bodies[i], n);
        len += 4 + n;
    }
    for (size_t chunk = 1; chunk <= len; chunk++) {
        castd_frame_reader reader;
        castd_frame_reader_init(&reader, 64);
        int seen = 0;
        for (size_t offset = 0; offset < len;) {
            size_t end = offset + chunk < len ? offset + chunk : len;
            while (offset < end) {
                size_t used;
                uint8_t *body;
                size_t body_len;
                int rc = castd_frame_reader_feed(&reader, stream + offset, end - offset, &used, &body, &body_len);
                offset += used;
                CHECK(rc >= 0, "chunk %zu: reader error %d", chunk, rc);
                if (rc == CASTD_FRAME_READY) {
                    CHECK(seen < 3 && body_len == strlen(bodies[seen]) &&
                              !memcmp(body, bodies[seen], body_len),
                          "chunk %zu: frame %d", chunk, seen);
                    free(body);
                    seen++;
                }
            }
        }
        CHECK(seen == 3, "chunk %zu: %d frames", chunk, seen);
        CHECK(!castd_frame_reader_partial(&reader), "nothing left over");
        castd_frame_reader_free(&reader);
    }
    /* A length over the limit is refused from its header alone. */
    castd_frame_reader reader;
    castd_frame_reader_init(&reader, 64);
    uint8_t header[4];
    put_length(header, 65);
    size_t used;
    uint8_t *body;
    size_t body_len;
    CHECK(castd_frame_reader_feed(&reader, header, 4, &used, &body, &body_len) == CASTD_FRAME_TOO_BIG &&
              reader.refused == 65 && body == NULL && reader.body == NULL,
          "refused without allocating");
    castd_frame_reader_free(&reader);
    return true;
}

/* ---- what decoding costs --------------------------------------------------------------------
 * A frame's length bounds what is read, not what decoding it allocates: an empty submessage is
 * 2 bytes on the wire and a whole struct (with its pointer, and protobuf-c's bookkeeping) once
 * decoded. These frames are the worst a peer can send within the 4 MiB frame limit. */

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* Writes to `f` one frame (its length prefix too) for call `id` whose message is `pairs` ×
 * the two bytes `a b`, inside a submessage with tag `outer` when `outer` is not 0. With `id` 0,
 * the pairs are the frame's own fields. */
static bool write_flood_frame(FILE *f, uint64_t id, uint8_t outer, uint8_t a, uint8_t b, size_t pairs) {
    uint8_t head[64];
    size_t inner = 2 * pairs, message = inner, n = 4;
    uint8_t prefix[16];
    size_t prefix_len = 0;
    if (outer) {
        prefix[prefix_len++] = outer;
        prefix_len += put_varint(prefix + prefix_len, inner);
        message += prefix_len;
    }
    if (id) {
        head[n++] = 0x08; /* call_id */
        n += put_varint(head + n, id);
        head[n++] = 0x1a; /* message */
        n += put_varint(head + n, message);
    }
    put_length(head, (uint32_t)(n - 4 + message));
    if (fwrite(head, 1, n, f) != n || fwrite(prefix, 1, prefix_len, f) != prefix_len) return false;
    uint8_t chunk[4096];
    for (size_t i = 0; i < sizeof chunk; i += 2) chunk[i] = a, chunk[i + 1] = b;
    for (size_t left = inner; left;) {
        size_t take = left < sizeof chunk ? left : sizeof chunk;
        if (fwrite(chunk, 1, take, f) != take) return false;
        left -= take;
    }
    return true;
}

static bool write_status_frame(FILE *f, uint64_t id) {
    Castd__V1__Frame frame = CASTD__V1__FRAME__INIT;
    Castd__V1__Status status = CASTD__V1__STATUS__INIT;
    frame.call_id = id;
    frame.kind_case = CASTD__V1__FRAME__KIND_STATUS;
    frame.status = &status;
    uint8_t buffer[64];
    size_t size = castd__v1__frame__get_packed_size(&frame);
    put_length(buffer, (uint32_t)size);
    castd__v1__frame__pack(&frame, buffer + 4);
    return fwrite(buffer, 1, 4 + size, f) == 4 + size;
}

/* As many pairs as fit a frame of the default limit (with room for the headers). */
#define FLOOD_PAIRS ((CASTD_DEFAULT_MAX_FRAME - 64) / 2)

enum flood { WATCH_SUBMESSAGES, WATCH_UNKNOWN_FIELDS, UNARY_SUBMESSAGES };

/* One attack on a fresh connection: the fake server writes its frames (through cat, so that
 * they are written while this process reads), the client makes a GetStatus meanwhile. Checks
 * that the call or stream attacked ended with RESOURCE_EXHAUSTED naming the limit, that the
 * connection goes on, and that the peak resident size grew by less than `bound_mb`. */
static bool flood(test_env *env, enum flood kind, long bound_mb) {
    static const char *const names[] = {"4 unread Watch frames of empty submessages",
                                        "a Watch frame of unknown fields",
                                        "a GetStatus response of empty submessages"};
    char path[400];
    snprintf(path, sizeof path, "%s/flood", env->dir);
    FILE *f = fopen(path, "w");
    CHECK(f, "cannot write %s", path);
    bool written = true;
    /* The Watch is call 1, the GetStatus call 2. Event: snapshot (3) { media (3) {} … };
     * unknown fields: field 15, varint 0; StatusResponse: media (4) {} … */
    if (kind == WATCH_SUBMESSAGES)
        for (int i = 0; i < 4; i++) written &= write_flood_frame(f, 1, 0x1a, 0x1a, 0x00, FLOOD_PAIRS);
    if (kind == WATCH_UNKNOWN_FIELDS) written &= write_flood_frame(f, 1, 0, 0x78, 0x00, FLOOD_PAIRS);
    if (kind == UNARY_SUBMESSAGES) written &= write_flood_frame(f, 2, 0, 0x22, 0x00, FLOOD_PAIRS);
    else written &= write_flood_frame(f, 2, 0, 0x28, 0x01, 1); /* a StatusResponse: cast_state 1 */
    written &= write_status_frame(f, 2);
    CHECK(fclose(f) == 0 && written, "cannot write %s", path);

    castd_client *client;
    int listener, server;
    unlink(env->sock); /* left by an attack before that failed */
    if (!pair(env, &client, &listener, &server)) return false;
    long mark = rss_mark();
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    pid_t cat = feed_file(path, server);
    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    ProtobufCMessage *response = NULL;
    castd_code code = castd_call(client, "GetStatus", &request.base,
                                 &castd__v1__status_response__descriptor, &response, (int)scaled_ms(60), &error);
    ProtobufCMessage *message = NULL;
    castd_error stream_error = CASTD_ERROR_INIT;
    castd_code stream_code = CASTD_OK;
    int delivered = -1;
    do {
        castd_free(message);
        delivered++;
    } while ((stream_code = castd_stream_next(watch, &message, 0, &stream_error)) == CASTD_OK && message);
    long growth = rss_peak_growth_kb(mark);
    fprintf(stderr, "    %s: peak RSS +%ld kB (bound %ld MB); GetStatus %s, the Watch %s after %d messages\n",
            names[kind], growth, bound_mb, castd_code_name(code), castd_code_name(stream_code), delivered);
    int status;
    waitpid(cat, &status, 0);
    CHECK(growth >= 0, "the peak resident size is known (/proc/self/status)");
    CHECK(growth < bound_mb * 1024, "memory stays bounded: +%ld kB", growth);
    const char *refused = kind == UNARY_SUBMESSAGES ? msg(&error) : msg(&stream_error);
    castd_code refused_code = kind == UNARY_SUBMESSAGES ? code : stream_code;
    char limit[128];
    snprintf(limit, sizeof limit, "takes more than %zu bytes to decode",
             kind == UNARY_SUBMESSAGES ? (size_t)CASTD_DEFAULT_MAX_DECODED : (size_t)CASTD_DEFAULT_STREAM_MAX_BYTES);
    CHECK(refused_code == CASTD_RESOURCE_EXHAUSTED && strstr(refused, limit) &&
              strstr(refused, kind == UNARY_SUBMESSAGES ? "castd.v1.StatusResponse" : "castd.v1.Event"),
          "refused: %s %s", castd_code_name(refused_code), refused);
    CHECK(delivered == 0, "nothing of it delivered: %d", delivered);
    if (kind == UNARY_SUBMESSAGES) {
        CHECK(response == NULL, "no response");
        CHECK(stream_code == CASTD_NO_MESSAGE, "the Watch goes on: %s", castd_code_name(stream_code));
    } else {
        CHECK(code == CASTD_OK && response, "the GetStatus on the same connection: %s", msg(&error));
    }
    CHECK(castd_client_fd(client) >= 0, "only the call ended, not the connection");
    castd_free(response);
    castd_stream_close(watch);
    castd_error_clear(&error);
    castd_error_clear(&stream_error);
    castd_client_close(client);
    close(server);
    close(listener);
    unlink(env->sock);
    unlink(path);
    return true;
}

bool test_decoded_size_bound(test_env *env) {
    /* Unbounded (protobuf-c 1.4.1, -O1): +2.0 GB, +184 MB and +568 MB. Bounded: the frame, its
     * copy and at most the limit's worth of decoding (16 MiB for a stream, 64 MiB for one
     * message): +24, +24 and +72 MB (ASan: +55, +28, +83; valgrind: +31, +28, +90). */
    return flood(env, WATCH_SUBMESSAGES, 100) && flood(env, WATCH_UNKNOWN_FIELDS, 100) &&
           flood(env, UNARY_SUBMESSAGES, 160);
}

/* The limits' setters and their other refusals, with small frames. */
bool test_decode_limits(test_env *env) {
    char path[400];
    snprintf(path, sizeof path, "%s/frames", env->dir);
    FILE *f = fopen(path, "w");
    CHECK(f, "cannot write %s", path);
    bool written = true;
    /* Call 1, a Watch: 60 events of 100 empty media each (200 bytes encoded, ~30 KB decoded). */
    for (int i = 0; i < 60; i++) written &= write_flood_frame(f, 1, 0x1a, 0x1a, 0x00, 100);
    /* Call 2, a GetStatus: 4,000 empty media (8 KB). */
    written &= write_flood_frame(f, 2, 0, 0x22, 0x00, 4000) && write_status_frame(f, 2);
    /* Then a frame of 40,000 unknown fields (80 KB): the connection's end. */
    written &= write_flood_frame(f, 0, 0, 0x78, 0x00, 40000);
    CHECK(fclose(f) == 0 && written, "cannot write %s", path);

    castd_client *client;
    int listener, server;
    if (!pair(env, &client, &listener, &server)) return false;
    castd_client_set_stream_buffer(client, 0, 1u << 20);
    castd_client_set_max_decoded(client, 64u * 1024u);
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    pid_t cat = feed_file(path, server);
    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    ProtobufCMessage *response = NULL;
    castd_code code = castd_call(client, "GetStatus", &request.base,
                                 &castd__v1__status_response__descriptor, &response, (int)scaled_ms(20), &error);
    CHECK(code == CASTD_RESOURCE_EXHAUSTED && !response &&
              strstr(msg(&error), "the castd.v1.StatusResponse castd sent for /castd.v1.Cast/GetStatus (8000 bytes) "
                                  "takes more than 65536 bytes to decode, over this client's limit "
                                  "(castd_client_set_max_decoded); the call was cancelled"),
          "the response over the decode limit: %s %s", castd_code_name(code), msg(&error));
    /* The Watch: as many events as 1 MiB decoded holds (each within the 64 KiB limit), then
     * the end. */
    ProtobufCMessage *message;
    int delivered = 0;
    while ((code = castd_stream_next(watch, &message, 0, &error)) == CASTD_OK && message) {
        CHECK(((Castd__V1__Event *)message)->snapshot->n_media == 100, "an event of 100 media");
        delivered++;
        castd_free(message);
    }
    CHECK(delivered > 1 && delivered < 60, "some of the 60 events: %d", delivered);
    CHECK(code == CASTD_RESOURCE_EXHAUSTED && strstr(msg(&error), "/castd.v1.Cast/Watch fell behind: ") &&
              strstr(msg(&error), "and the next takes more than the ") &&
              strstr(msg(&error), "bytes left of this client's bound (1024 messages, 1048576 bytes)"),
          "the Watch over its bound: %s %s", castd_code_name(code), msg(&error));
    /* The frame of unknown fields ends the connection. */
    int64_t deadline = monotonic_ms() + scaled_ms(20);
    while (castd_client_fd(client) >= 0 && monotonic_ms() < deadline) {
        struct pollfd p = {castd_client_fd(client), castd_client_events(client), 0};
        CHECK(poll(&p, 1, 200) >= 0, "poll");
        castd_client_dispatch(client, p.revents, &error);
    }
    CHECK(castd_client_fd(client) == -1, "the connection failed");
    code = castd_call(client, "GetStatus", &request.base, &castd__v1__status_response__descriptor, NULL, 0, &error);
    CHECK(code == CASTD_RESOURCE_EXHAUSTED &&
              strstr(msg(&error), "castd sent a castd.v1 frame (80000 bytes) that takes more than 65536 bytes to "
                                  "decode, over this client's limit (castd_client_set_max_decoded); connection closed"),
          "the frame over the limit: %s %s", castd_code_name(code), msg(&error));
    int status;
    waitpid(cat, &status, 0);
    castd_stream_close(watch);
    castd_error_clear(&error);
    castd_client_close(client);
    close(server);
    close(listener);
    return true;
}

/* ---- text from castd on a terminal ------------------------------------------------------- */

static bool visible_is(const char *text, const char *expected) {
    char out[256];
    size_t n = castd_visible(text, out, sizeof out);
    CHECK(n == strlen(expected) && !strcmp(out, expected), "castd_visible(\"%s\") = \"%s\" (%zu), not \"%s\"", text, out,
          n, expected);
    return true;
}

bool test_visible(test_env *env) {
    (void)env;
    /* castc's rule (Terminal.visible): C0 but newline and tab, DEL and C1 written out. */
    if (!visible_is("Living Room TV", "Living Room TV") || !visible_is("", "") ||
        !visible_is("a\tb\nc", "a\tb\nc") ||
        !visible_is("TV\x1b]52;c;aGk=\x07", "TV\\u001b]52;c;aGk=\\u0007") /* OSC 52: the clipboard */
        || !visible_is("\x1b[2J\x1b[H", "\\u001b[2J\\u001b[H")                /* clear the screen */
        || !visible_is("\r\b\x01\x1f\x7f", "\\u000d\\u0008\\u0001\\u001f\\u007f") ||
        !visible_is("\xc2\x9b" "2J \xc2\x80\xc2\x9f", "\\u009b2J \\u0080\\u009f") /* C1, CSI */
        || !visible_is("caf\xc3\xa9 \xc2\xa0 \xe2\x80\xae \xf0\x9f\x93\xba", "caf\xc3\xa9 \xc2\xa0 \xe2\x80\xae \xf0\x9f\x93\xba")
        /* not UTF-8 (a lone C1 byte, a cut sequence, an overlong NUL, a surrogate): U+FFFD */
        || !visible_is("\x9b" "2J", "\xef\xbf\xbd" "2J") || !visible_is("a\xc3", "a\xef\xbf\xbd") ||
        !visible_is("\xc0\x80", "\xef\xbf\xbd\xef\xbf\xbd") || !visible_is("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"))
        return false;
    CHECK(castd_visible(NULL, NULL, 0) == 0, "NULL is \"\"");
    /* snprintf's contract: the full length, and whole pieces only in a short buffer. */
    CHECK(castd_visible("ab\x1b" "cd", NULL, 0) == 10, "the length without a buffer");
    char small[8];
    memset(small, 'x', sizeof small);
    CHECK(castd_visible("ab\x1b" "cd", small, sizeof small) == 10 && !strcmp(small, "ab"),
          "an escape is not cut: \"%s\"", small);
    CHECK(castd_visible("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", small, 6) == 8 && !strcmp(small, "\xc3\xa9\xc3\xa9"),
          "a character is not cut: \"%s\"", small);
    CHECK(castd_visible("abc", small, 1) == 3 && small[0] == '\0', "room for the NUL only");
    return true;
}

/* castd-c-status against a fake castd whose device name and title carry escape sequences. */
bool test_example_escapes(test_env *env) {
    int listener = listen_at(env->sock);
    CHECK(listener >= 0, "cannot listen at %s: %s", env->sock, strerror(errno));
    char program[512];
    snprintf(program, sizeof program, "%s/castd-c-status", build_dir());
    int out[2];
    CHECK(pipe(out) == 0, "pipe");
    char *argv[] = {program, "--socket", env->sock, NULL};
    pid_t pid = start_program(argv, out[1]);
    close(out[1]);
    int server = accept(listener, NULL, NULL);
    CHECK(server >= 0, "accept: %s", strerror(errno));
    Castd__V1__Frame *start = read_frame(server);
    CHECK(start && start->call_id == 1 && start->kind_case == CASTD__V1__FRAME__KIND_START, "the GetStatus start");
    castd__v1__frame__free_unpacked(start, NULL);
    /* A StatusResponse: one device, named with an OSC 52 clipboard write and a screen clear;
     * media on it titled with a C1 CSI. */
    Castd__V1__Device device = CASTD__V1__DEVICE__INIT, *devices[] = {&device};
    device.id = "d1";
    device.friendly_name = "TV\x1b]52;c;aGk=\x07\x1b[2J";
    Castd__V1__MediaMetadata metadata = CASTD__V1__MEDIA_METADATA__INIT;
    metadata.title = "Film\xc2\x9b" "31m";
    Castd__V1__MediaInformation information = CASTD__V1__MEDIA_INFORMATION__INIT;
    information.metadata = &metadata;
    Castd__V1__MediaStatus media = CASTD__V1__MEDIA_STATUS__INIT, *medias[] = {&media};
    media.device_id = "d1";
    media.media = &information;
    Castd__V1__StatusResponse response = CASTD__V1__STATUS_RESPONSE__INIT;
    response.n_devices = 1;
    response.devices = devices;
    response.n_media = 1;
    response.media = medias;
    uint8_t packed[1024];
    size_t packed_len = castd__v1__status_response__get_packed_size(&response);
    CHECK(packed_len <= sizeof packed, "packed");
    castd__v1__status_response__pack(&response, packed);
    Castd__V1__Frame frame = CASTD__V1__FRAME__INIT;
    frame.call_id = 1;
    frame.kind_case = CASTD__V1__FRAME__KIND_MESSAGE;
    frame.message.data = packed;
    frame.message.len = packed_len;
    uint8_t buffer[1200];
    size_t size = castd__v1__frame__get_packed_size(&frame);
    put_length(buffer, (uint32_t)size);
    castd__v1__frame__pack(&frame, buffer + 4);
    Castd__V1__Frame end = CASTD__V1__FRAME__INIT;
    Castd__V1__Status ok = CASTD__V1__STATUS__INIT;
    end.call_id = 1;
    end.kind_case = CASTD__V1__FRAME__KIND_STATUS;
    end.status = &ok;
    size_t end_size = castd__v1__frame__get_packed_size(&end);
    put_length(buffer + 4 + size, (uint32_t)end_size);
    castd__v1__frame__pack(&end, buffer + 8 + size);
    CHECK(write_all(server, buffer, 8 + size + end_size), "write");
    /* Its whole output (it exits after one GetStatus), within a deadline. */
    pid_t guard = kill_later(pid, scaled_ms(10));
    char text[2048];
    size_t got = 0;
    ssize_t n;
    while (got + 1 < sizeof text && (n = read(out[0], text + got, sizeof text - 1 - got)) > 0) got += (size_t)n;
    text[got] = '\0';
    int status;
    waitpid(pid, &status, 0);
    kill(guard, SIGKILL);
    waitpid(guard, NULL, 0);
    close(out[0]);
    close(server);
    close(listener);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "castd-c-status exited %d", status);
    CHECK(strstr(text, "TV\\u001b]52;c;aGk=\\u0007\\u001b[2J\t") && strstr(text, "\tFilm\\u009b31m\t"),
          "the name and title written out: %s", text);
    for (size_t i = 0; i < got; i++)
        CHECK(text[i] != 0x1b && text[i] != 0x07 && !((unsigned char)text[i] == 0xc2 && (unsigned char)text[i + 1] == 0x9b),
              "no control character reaches the terminal (byte %zu)", i);
    return true;
}
