/*
 * castd-client.h — libcastd-client, a C11 client for castd (the Google Cast daemon).
 *
 * castd serves the castd.v1 RPC (protos/castd/v1/cast.proto) on a Unix socket: every frame is a
 * 4-byte big-endian length followed by one castd.v1.Frame. This library connects to that socket,
 * multiplexes any number of calls on one connection, and hands back protobuf-c messages
 * (generated/castd/v1/cast.pb-c.h, installed as <castd/v1/cast.pb-c.h>).
 *
 *     castd_error error = CASTD_ERROR_INIT;
 *     castd_client *client = castd_client_connect(NULL, &error);
 *     if (!client) { fprintf(stderr, "%s\n", error.message); return error.code; }
 *     Castd__V1__MediaStatus *status = NULL;
 *     if (castd_pause(client, "Living Room TV", &status, &error) != CASTD_OK) { ... }
 *     castd_free(status);
 *     castd_client_close(client);
 *     castd_error_clear(&error);
 *
 * THREADING. The library has no global state. A castd_client, and every castd_stream opened on
 * it, is used from one thread at a time: the caller serialises every call on one client (for
 * example by using it from one thread only, or under the caller's own lock). Different clients
 * may be used from different threads at the same time. Nothing here creates threads or
 * installs signal handlers; writes use MSG_NOSIGNAL, so a closed socket never raises SIGPIPE.
 *
 * BLOCKING. Unary calls (castd_call and the typed wrappers) block until castd answers, the
 * call's deadline passes or the connection is lost. While one waits, the frames castd sends for
 * other open calls (streams) are read and queued on those streams (bounded: see
 * castd_client_set_stream_buffer). Streams can be read blocking (castd_stream_next with a
 * timeout) or from the caller's own poll(2) loop without blocking (castd_client_fd,
 * castd_client_events, castd_client_dispatch, castd_stream_try_next).
 *
 * ERRORS. Functions that can fail take a `castd_error *` (which may be NULL) and return a
 * castd_code. Initialise a castd_error with CASTD_ERROR_INIT before its first use; a function
 * given one clears what it held before and fills it (code CASTD_OK and NULL strings on success).
 * Release its strings with castd_error_clear.
 *
 * MEMORY. Every message the library returns is the caller's: free it with castd_free (or
 * protobuf_c_message_free_unpacked(message, NULL)).
 */
#ifndef CASTD_CLIENT_H
#define CASTD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "castd/v1/cast.pb-c.h"
#include "castd/v1/rpc.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CASTD_CLIENT_BUILDING) && defined(__GNUC__)
#define CASTD_API __attribute__((visibility("default")))
#else
#define CASTD_API
#endif

/* gRPC's canonical status codes, with gRPC's numbers (castd.v1.Code). */
typedef enum castd_code {
    /* Not a status: castd_stream_next found no message within its timeout and the stream is
     * still open. Never the code of a castd_error. */
    CASTD_NO_MESSAGE = -1,
    CASTD_OK = 0,
    CASTD_CANCELLED = 1,
    CASTD_UNKNOWN = 2,
    CASTD_INVALID_ARGUMENT = 3,
    CASTD_DEADLINE_EXCEEDED = 4,
    CASTD_NOT_FOUND = 5,
    CASTD_ALREADY_EXISTS = 6,
    CASTD_PERMISSION_DENIED = 7,
    CASTD_RESOURCE_EXHAUSTED = 8,
    CASTD_FAILED_PRECONDITION = 9,
    CASTD_ABORTED = 10,
    CASTD_OUT_OF_RANGE = 11,
    CASTD_UNIMPLEMENTED = 12,
    CASTD_INTERNAL = 13,
    CASTD_UNAVAILABLE = 14,
    CASTD_DATA_LOSS = 15,
    CASTD_UNAUTHENTICATED = 16
} castd_code;

/* An error a Cast device answered with (castd.v1.DeviceError); NULL strings when absent. */
typedef struct castd_device_error {
    char *type;   /* "LOAD_FAILED", "INVALID_REQUEST", "LAUNCH_ERROR", … */
    char *reason; /* "INVALID_PARAMS", "NOT_FOUND", … */
    char *detail;
} castd_device_error;

/* Why a call failed: castd's status as it sent it, or one of the library's own (connection
 * lost: UNAVAILABLE; frame over the limit: RESOURCE_EXHAUSTED; local deadline:
 * DEADLINE_EXCEEDED; …). Strings are heap copies owned by the castd_error (NULL when empty). */
typedef struct castd_error {
    castd_code code;
    char *message; /* a sentence for people */
    char *reason;  /* castd's Status.reason: "REPLACED", "DEVICE_ERROR", or NULL */
    castd_device_error device_error;
} castd_error;

#define CASTD_ERROR_INIT {CASTD_OK, NULL, NULL, {NULL, NULL, NULL}}

/* Frees the strings of `error` and resets it to CASTD_ERROR_INIT. NULL is allowed. */
CASTD_API void castd_error_clear(castd_error *error);

/* The code's name as in castd.v1 ("NOT_FOUND"); "NO_MESSAGE" for CASTD_NO_MESSAGE and
 * "INVALID_CODE" for numbers outside the enum. A static string. */
CASTD_API const char *castd_code_name(castd_code code);

/* Frees a message returned by this library (protobuf_c_message_free_unpacked); NULL is allowed. */
CASTD_API void castd_free(void *message);

/* Text from castd made safe to print on a terminal, as castc prints it: device names, titles and
 * messages come from devices, mDNS announcements and receiver apps, and an escape sequence in
 * one would drive the terminal (write the clipboard, clear the screen). Every control character
 * but newline and tab is written out as `\u001b`: C0, DEL and C1 (U+0080…U+009F); a byte that
 * is not UTF-8 becomes U+FFFD. Writes the result into `buffer` (NUL-terminated, truncated to
 * `size` between whole characters and escapes) and returns its full length, as snprintf does:
 * castd_visible(text, NULL, 0) + 1 is the size that holds it all. NULL `text` is "". */
CASTD_API size_t castd_visible(const char *text, char *buffer, size_t size);

/* The largest frame accepted and sent by default: 4 MiB. */
#define CASTD_DEFAULT_MAX_FRAME (4u * 1024u * 1024u)
/* Default per-stream buffer bounds (see castd_client_set_stream_buffer). */
#define CASTD_DEFAULT_STREAM_MAX_MESSAGES 1024u
#define CASTD_DEFAULT_STREAM_MAX_BYTES (16u * 1024u * 1024u)
/* The most one message (or frame) from castd may allocate as it is decoded, by default: 64 MiB
 * (see castd_client_set_max_decoded), and the least it can be set to: 64 KiB. */
#define CASTD_DEFAULT_MAX_DECODED (64u * 1024u * 1024u)
#define CASTD_MIN_MAX_DECODED (64u * 1024u)

typedef struct castd_client castd_client;
typedef struct castd_stream castd_stream;

/* ---- connecting ---------------------------------------------------------------------------- */

/* Writes the socket path castd_client_connect(NULL, …) uses into `buffer` (NUL-terminated,
 * truncated to `size`) and returns its full length: $CASTD_SOCKET if set and non-empty; else
 * $XDG_RUNTIME_DIR/castd/castd.sock if $XDG_RUNTIME_DIR is set and non-empty, unless that does
 * not exist and /run/castd/castd.sock does; else /run/castd/castd.sock. */
CASTD_API size_t castd_default_socket_path(char *buffer, size_t size);

/* Connects to castd at `path` (NULL: castd_default_socket_path). Returns the client, or NULL
 * with `error` set: UNAVAILABLE "cannot connect to castd at PATH: <why> — is castd running? …",
 * or PERMISSION_DENIED "… — ask for access to castd's socket (its group), …". castd closes a
 * connection that opens no call within its idle timeout (30 s by default): connect when there
 * is something to ask. */
CASTD_API castd_client *castd_client_connect(const char *path, castd_error *error);

/* Closes the connection and frees the client. Streams still open end with CANCELLED (they must
 * still be freed with castd_stream_close, which is then safe to call after this). NULL is
 * allowed. */
CASTD_API void castd_client_close(castd_client *client);

/* The socket path this client connected to (owned by the client). */
CASTD_API const char *castd_client_socket_path(const castd_client *client);

/* The largest frame accepted from castd and sent to it, in bytes (default 4 MiB, at least 16).
 * A longer incoming length is refused before anything is allocated for it: the connection is
 * closed and every open call fails with RESOURCE_EXHAUSTED. */
CASTD_API void castd_client_set_max_frame(castd_client *client, size_t bytes);

/* Bounds what is buffered for each stream that its reader has not taken yet: at most
 * `max_messages` messages, taking at most `max_bytes` bytes decoded (what decoding them
 * allocated, counted as castd_client_set_max_decoded says: not their encoded size, which can be
 * a hundredth of it). A stream whose next message would go over either is ended with
 * RESOURCE_EXHAUSTED (the messages already buffered are still delivered first) and cancelled
 * on castd; its message is not decoded past the bound. So one message of a stream decodes to
 * at most min(max_bytes, the decode limit). 0 keeps a bound's current value. Defaults: 1024
 * messages, 16 MiB. */
CASTD_API void castd_client_set_stream_buffer(castd_client *client, size_t max_messages,
                                              size_t max_bytes);

/* The most memory decoding one message from castd may allocate, in bytes (default 64 MiB, at
 * least 64 KiB): a frame's length bounds what is read, but decoding can cost far more (an empty
 * submessage is 2 bytes on the wire and a whole struct decoded; 4 MiB of them, hundreds of
 * MB). Each allocation protobuf-c makes while decoding counts its size plus 16 bytes, and the
 * decode stops at the limit, having allocated no more. A unary response over it ends that call
 * with RESOURCE_EXHAUSTED ("the castd.v1.StatusResponse castd sent for /castd.v1.Cast/GetStatus
 * (N bytes) takes more than L bytes to decode, …"), and castd is told to cancel it; a stream's
 * message is held to its stream's bound as well (castd_client_set_stream_buffer). Other calls go
 * on. A frame (the envelope of every message) over it fails the connection. */
CASTD_API void castd_client_set_max_decoded(castd_client *client, size_t bytes);

/* The deadline the typed wrappers (castd_status … castd_previous) give their calls, in ms;
 * 0 (the default) means none. */
CASTD_API void castd_client_set_timeout(castd_client *client, int timeout_ms);

/* The last connection-level status castd sent (call id 0: a refused frame, or why castd is
 * closing the connection), or NULL if none. Owned by the client, valid until the next call on
 * it. */
CASTD_API const castd_error *castd_client_connection_status(const castd_client *client);

/* ---- unary calls --------------------------------------------------------------------------- */

/* Makes one unary call of castd.v1.Cast. `method` is "Pause" or "/castd.v1.Cast/Pause";
 * `request` is the method's request message; `response_type` the descriptor of its response
 * (e.g. &castd__v1__media_status__descriptor). `timeout_ms` (0: none) is sent to castd and
 * enforced here: a call not ended by then fails with DEADLINE_EXCEEDED and is cancelled on
 * castd. Blocks until the call ends. On CASTD_OK, *response (if `response` is not NULL) is the
 * decoded response, to be freed with castd_free; else *response is NULL and `error` says why.
 * Streaming methods (Watch, Listen, StreamLogs) are refused with INVALID_ARGUMENT: use
 * castd_stream_open. */
CASTD_API castd_code castd_call(castd_client *client, const char *method,
                                const ProtobufCMessage *request,
                                const ProtobufCMessageDescriptor *response_type,
                                ProtobufCMessage **response, int timeout_ms, castd_error *error);

/* Typed wrappers. Each uses the client's timeout (castd_client_set_timeout). `device` is a
 * selector (id, friendly name, host or host:port); NULL or "" lets castd choose (the device with
 * a session, else the only device). `out` may be NULL when the response is not wanted; else on
 * CASTD_OK it is the response, to be freed with castd_free. */

/* GetStatus: castd, its devices, sessions and media, in one snapshot. */
CASTD_API castd_code castd_status(castd_client *client, Castd__V1__StatusResponse **out,
                                  castd_error *error);
/* ListDevices; `all` lists every device, whatever castd's own criterion. */
CASTD_API castd_code castd_list_devices(castd_client *client, bool all,
                                        Castd__V1__ListDevicesResponse **out, castd_error *error);
/* Load `url` (title and content_type may be NULL), starting a session if there is none. */
CASTD_API castd_code castd_load(castd_client *client, const char *device, const char *url,
                                const char *title, const char *content_type,
                                Castd__V1__MediaStatus **out, castd_error *error);
/* Load the file at `path` on this machine: castd serves it to the device from its own media
 * server (the device is given castd's http:// URL, never the path). castd never opens a path:
 * this opens the file (O_RDONLY, with this process's permissions), checks that it is a regular
 * file, hands the open descriptor to castd over its files socket (castd_client_socket_path +
 * ".files", SCM_RIGHTS; rpc.proto "The files socket"), then calls Load with the handle castd
 * gave for it (MediaInformation.file), keeping the files connection open until the Load is
 * answered, and closes it and the descriptor before returning. castd is told the file's name
 * (the last path component), from which it takes a content type when the file's first bytes do
 * not say and, when `title` is NULL or "", the title (the name without its extension).
 * `content_type` (NULL: castd's guess) and `title` as for castd_load.
 *
 * A file that cannot be cast is reported before castd is asked anything, with reason
 * "LOCAL_FILE" and a message naming the path: NOT_FOUND (it does not exist), PERMISSION_DENIED
 * (this process may not read it), INVALID_ARGUMENT (a directory, or not a regular file),
 * RESOURCE_EXHAUSTED (no descriptors left). Handing it over fails with UNAVAILABLE (no files
 * socket: castd not running, or too old to take files), castd's status (PERMISSION_DENIED
 * without control access, RESOURCE_EXHAUSTED past its bounds), or DEADLINE_EXCEEDED if castd
 * does not answer within the client's timeout (castd_client_set_timeout; at most 10 s). Then
 * the Load's own errors, as for castd_load. */
CASTD_API castd_code castd_load_file(castd_client *client, const char *device, const char *path,
                                     const char *title, const char *content_type,
                                     Castd__V1__MediaStatus **out, castd_error *error);
CASTD_API castd_code castd_play(castd_client *client, const char *device,
                                Castd__V1__MediaStatus **out, castd_error *error);
CASTD_API castd_code castd_pause(castd_client *client, const char *device,
                                 Castd__V1__MediaStatus **out, castd_error *error);
CASTD_API castd_code castd_stop(castd_client *client, const char *device,
                                Castd__V1__MediaStatus **out, castd_error *error);
/* Seek to `seconds`, or by `seconds` from the current position when `relative`. */
CASTD_API castd_code castd_seek(castd_client *client, const char *device, double seconds,
                                bool relative, Castd__V1__MediaStatus **out, castd_error *error);
/* The device's volume (not the stream's), 0.0 … 1.0. */
CASTD_API castd_code castd_set_volume(castd_client *client, const char *device, double level,
                                      Castd__V1__Volume **out, castd_error *error);
/* The next / previous item of the queue (QueueUpdate with jump +1 / -1). */
CASTD_API castd_code castd_next(castd_client *client, const char *device,
                                Castd__V1__MediaStatus **out, castd_error *error);
CASTD_API castd_code castd_previous(castd_client *client, const char *device,
                                    Castd__V1__MediaStatus **out, castd_error *error);

/* ---- streams ------------------------------------------------------------------------------- */

/* Opens a server-streaming call (`method` as for castd_call, e.g. "Watch") whose messages are
 * decoded as `response_type` (a unary method opened this way gives its one message, then
 * ends). Returns the stream, or NULL
 * with `error` set. The start frame is queued and written as far as the socket takes it without
 * blocking; the rest goes out with the next I/O on the client. Free with castd_stream_close. */
CASTD_API castd_stream *castd_stream_open(castd_client *client, const char *method,
                                          const ProtobufCMessage *request,
                                          const ProtobufCMessageDescriptor *response_type,
                                          castd_error *error);
/* An asynchronous unary call is a stream too: castd_stream_open(client, "Pause", …) returns at
 * once; castd_stream_next / castd_stream_try_next then give the one response, then the end (OK
 * with no message, or castd's error). Such a call has no local deadline: give it up with
 * castd_stream_close (which cancels it on castd). */

/* Watch: messages are Castd__V1__Event, a snapshot first, then every change. */
CASTD_API castd_stream *castd_watch(castd_client *client, castd_error *error);
/* Listen on a custom namespace of a device: messages are Castd__V1__ChannelEvent. */
CASTD_API castd_stream *castd_listen(castd_client *client, const char *device,
                                     const char *namespace_, castd_error *error);
/* StreamLogs: the last `recent` records, then (with `follow`) every new one:
 * Castd__V1__LogRecord. */
CASTD_API castd_stream *castd_stream_logs(castd_client *client, bool follow, uint32_t recent,
                                          castd_error *error);

/* Takes the stream's next message. `timeout_ms`: -1 waits as long as it takes, 0 does no I/O
 * and only takes what is already buffered, > 0 waits up to that long (reading the socket, and
 * routing frames for other calls too). Returns:
 *   CASTD_OK with *message set: a message, to be freed with castd_free;
 *   CASTD_OK with *message NULL: the stream ended normally (castd's OK status);
 *   CASTD_NO_MESSAGE: none within the timeout, the stream still open (`error` cleared);
 *   any other code: the stream ended with that error (`error` says why).
 * Once ended, it keeps returning the same end. */
CASTD_API castd_code castd_stream_next(castd_stream *stream, ProtobufCMessage **message,
                                       int timeout_ms, castd_error *error);
/* castd_stream_next(stream, message, 0, error): for poll loops, after castd_client_dispatch. */
CASTD_API castd_code castd_stream_try_next(castd_stream *stream, ProtobufCMessage **message,
                                           castd_error *error);
/* True once the stream has ended (its end status is known), whether or not its buffered
 * messages have all been taken. */
CASTD_API bool castd_stream_ended(const castd_stream *stream);
/* Cancels the stream on castd if it is still open, and frees it with its buffered messages.
 * NULL is allowed. Allowed after castd_client_close. */
CASTD_API void castd_stream_close(castd_stream *stream);

/* ---- event-loop integration (no threads) ---------------------------------------------------
 *
 *     for (;;) {
 *         struct pollfd p = {castd_client_fd(c), castd_client_events(c), 0};
 *         if (poll(&p, 1, -1) < 0 && errno != EINTR) break;
 *         castd_client_dispatch(c, p.revents, NULL);
 *         while ((code = castd_stream_try_next(s, &m, &e)) == CASTD_OK && m) { use(m); castd_free(m); }
 *         if (code != CASTD_NO_MESSAGE) break;   // the stream ended
 *     }
 *
 * A blocking call (castd_call, castd_stream_next with a timeout) also reads the socket and
 * queues what it reads for the streams: drain them with castd_stream_try_next after such a call
 * before polling again. */

/* The connected socket (non-blocking), or -1 once the connection is closed. */
CASTD_API int castd_client_fd(const castd_client *client);
/* The poll(2) events to wait for: POLLIN, plus POLLOUT while output is queued; 0 once the
 * connection is closed. */
CASTD_API short castd_client_events(const castd_client *client);
/* Reads what the socket has and writes what is queued, without blocking, and routes the frames
 * read to their calls. `revents` is what poll(2) returned for the fd (0 just tries both).
 * Returns CASTD_OK while the connection is up; once it is lost, the error every open call ended
 * with (UNAVAILABLE, RESOURCE_EXHAUSTED for a frame over the limit, …). */
CASTD_API castd_code castd_client_dispatch(castd_client *client, short revents,
                                           castd_error *error);

#ifdef __cplusplus
}
#endif

#endif /* CASTD_CLIENT_H */
