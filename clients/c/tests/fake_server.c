/* Tests against a tiny fake castd in this process, for what a real castd cannot do on purpose:
 * a frame over the limit, a frame cut short, a connection-level status before closing. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
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
