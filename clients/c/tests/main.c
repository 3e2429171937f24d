/* libcastd-client's tests: a real castd and cast-emulator per test (see harness.c).
 * Usage: test [NAME…] runs the named tests (all without arguments). */
#define _GNU_SOURCE
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *const DEVICE = "Test TV";

/* ---- helpers ------------------------------------------------------------------------------ */

static castd_client *connect_or_null(test_env *env) {
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(env->sock, &error);
    if (!client) fprintf(stderr, "    connect: %s\n", msg(&error));
    castd_error_clear(&error);
    return client;
}

/* What a second connection's GetStatus says plays on the test device (NULL if nothing). The
 * StatusResponse is returned in *owner for freeing. */
static const Castd__V1__MediaStatus *media_seen_by_other(test_env *env,
                                                         Castd__V1__StatusResponse **owner) {
    *owner = NULL;
    castd_client *other = connect_or_null(env);
    if (!other) return NULL;
    castd_error error = CASTD_ERROR_INIT;
    castd_status(other, owner, &error);
    castd_client_close(other);
    castd_error_clear(&error);
    if (!*owner) return NULL;
    for (size_t d = 0; d < (*owner)->n_devices; d++) {
        if (strcmp((*owner)->devices[d]->friendly_name, DEVICE)) continue;
        for (size_t m = 0; m < (*owner)->n_media; m++)
            if (!strcmp((*owner)->media[m]->device_id, (*owner)->devices[d]->id)) return (*owner)->media[m];
    }
    return NULL;
}

static const char *title_of(const Castd__V1__MediaStatus *m) {
    return m && m->media && m->media->metadata ? m->media->metadata->title : "";
}

/* Loads the test media and returns true once castd says it plays. */
static bool load_media(castd_client *client, const char *title) {
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__MediaStatus *status = NULL;
    castd_code code = castd_load(client, DEVICE, "http://127.0.0.1/x.mp4", title, "video/mp4", &status, &error);
    CHECK(code == CASTD_OK, "load: %s %s", castd_code_name(code), msg(&error));
    CHECK(status && !strcmp(title_of(status), title), "the loaded title: %s", title_of(status));
    castd_free(status);
    return true;
}

/* The next Watch event, waiting up to `ms`; NULL (with a message) if none. */
static Castd__V1__Event *next_event(castd_stream *watch, int64_t ms) {
    castd_error error = CASTD_ERROR_INIT;
    ProtobufCMessage *message = NULL;
    castd_code code = castd_stream_next(watch, &message, (int)ms, &error);
    if (code != CASTD_OK || !message)
        fprintf(stderr, "    no event: %s %s\n", castd_code_name(code), msg(&error));
    castd_error_clear(&error);
    return (Castd__V1__Event *)message;
}

/* ---- wrappers ----------------------------------------------------------------------------- */

static bool test_status_and_devices(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    CHECK(!strcmp(castd_client_socket_path(client), env->sock), "socket path kept");
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__StatusResponse *status = NULL;
    CHECK(castd_status(client, &status, &error) == CASTD_OK, "status: %s", msg(&error));
    CHECK(status->daemon && status->daemon->pid == (uint32_t)env->castd, "daemon pid %u", status->daemon ? status->daemon->pid : 0);
    CHECK(status->n_devices == 1 && !strcmp(status->devices[0]->friendly_name, DEVICE), "one device");
    CHECK(status->cast_state == CASTD__V1__CAST_STATE__CAST_STATE_NOT_CONNECTED, "not connected yet");
    castd_free(status);
    Castd__V1__ListDevicesResponse *devices = NULL;
    CHECK(castd_list_devices(client, true, &devices, &error) == CASTD_OK, "devices: %s", msg(&error));
    char port[16];
    snprintf(port, sizeof port, "%d", env->port);
    CHECK(devices->n_devices == 1 && !strcmp(devices->devices[0]->friendly_name, DEVICE) &&
              devices->devices[0]->port == (uint32_t)env->port && !strcmp(devices->devices[0]->host, "127.0.0.1"),
          "the device at the emulator's port");
    castd_free(devices);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_load_play_pause_stop(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_client_set_timeout(client, (int)scaled_ms(20));
    if (!load_media(client, "C client title")) return false;
    Castd__V1__StatusResponse *seen;
    const Castd__V1__MediaStatus *m = media_seen_by_other(env, &seen);
    CHECK(m && !strcmp(title_of(m), "C client title") &&
              (m->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_PLAYING ||
               m->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_BUFFERING),
          "another client sees it play");
    castd_free(seen);

    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__MediaStatus *status = NULL;
    CHECK(castd_pause(client, DEVICE, &status, &error) == CASTD_OK, "pause: %s", msg(&error));
    CHECK(status->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_PAUSED, "paused answer");
    castd_free(status);
    m = media_seen_by_other(env, &seen);
    CHECK(m && m->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_PAUSED, "another client sees PAUSED");
    castd_free(seen);

    CHECK(castd_play(client, NULL, NULL, &error) == CASTD_OK, "play (device chosen by castd): %s", msg(&error));
    m = media_seen_by_other(env, &seen);
    CHECK(m && m->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_PLAYING, "another client sees PLAYING");
    castd_free(seen);

    CHECK(castd_stop(client, DEVICE, &status, &error) == CASTD_OK, "stop: %s", msg(&error));
    CHECK(status->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_IDLE, "idle answer");
    castd_free(status);
    m = media_seen_by_other(env, &seen);
    CHECK(!m || m->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_IDLE, "another client sees it stopped");
    castd_free(seen);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_seek(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    if (!load_media(client, "seek")) return false;
    castd_error error = CASTD_ERROR_INIT;
    CHECK(castd_pause(client, DEVICE, NULL, &error) == CASTD_OK, "pause: %s", msg(&error));
    Castd__V1__MediaStatus *status = NULL;
    CHECK(castd_seek(client, DEVICE, 120, false, &status, &error) == CASTD_OK, "seek: %s", msg(&error));
    CHECK(fabs(status->current_time - 120) < 1, "at 120 s: %f", status->current_time);
    castd_free(status);
    CHECK(castd_seek(client, DEVICE, -30, true, &status, &error) == CASTD_OK, "relative seek: %s", msg(&error));
    CHECK(fabs(status->current_time - 90) < 1, "at 90 s: %f", status->current_time);
    castd_free(status);
    Castd__V1__StatusResponse *seen;
    const Castd__V1__MediaStatus *m = media_seen_by_other(env, &seen);
    CHECK(m && fabs(m->current_time - 90) < 1, "another client sees 90 s");
    castd_free(seen);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static double device_volume(test_env *env) {
    Castd__V1__StatusResponse *seen;
    media_seen_by_other(env, &seen);
    double level = -1;
    for (size_t d = 0; seen && d < seen->n_devices; d++)
        if (seen->devices[d]->receiver && seen->devices[d]->receiver->volume)
            level = seen->devices[d]->receiver->volume->level;
    castd_free(seen);
    return level;
}

static bool test_volume(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    if (!load_media(client, "volume")) return false;
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__Volume *volume = NULL;
    CHECK(castd_set_volume(client, DEVICE, 0.25, &volume, &error) == CASTD_OK, "volume: %s", msg(&error));
    CHECK(fabs(volume->level - 0.25) < 0.001, "answer 0.25: %f", volume->level);
    castd_free(volume);
    CHECK(fabs(device_volume(env) - 0.25) < 0.001, "another client sees 0.25");
    /* 0.0 is sent too (proto3 optional): the level goes to 0, not "nothing to change". */
    CHECK(castd_set_volume(client, DEVICE, 0.0, &volume, &error) == CASTD_OK, "volume 0: %s", msg(&error));
    CHECK(volume->level == 0.0, "answer 0: %f", volume->level);
    castd_free(volume);
    CHECK(device_volume(env) == 0.0, "another client sees 0");
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_next_previous(test_env *env) {
    char out[4096];
    int rc = run_castc(env, out, sizeof out, "--device", DEVICE, "queue", "load", "http://127.0.0.1/a.mp4",
                       "http://127.0.0.1/b.mp4", "http://127.0.0.1/c.mp4", NULL);
    CHECK(rc == 0, "castc queue load exited %d", rc);
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__MediaStatus *status = NULL;
    CHECK(castd_next(client, DEVICE, &status, &error) == CASTD_OK, "next: %s", msg(&error));
    int64_t second = status->current_item_id;
    CHECK(status->media && strstr(status->media->content_id, "b.mp4"), "playing b after next: %s",
          status->media ? status->media->content_id : "(none)");
    castd_free(status);
    CHECK(castd_next(client, DEVICE, &status, &error) == CASTD_OK, "next: %s", msg(&error));
    CHECK(status->media && strstr(status->media->content_id, "c.mp4"), "playing c");
    castd_free(status);
    CHECK(castd_previous(client, DEVICE, &status, &error) == CASTD_OK, "previous: %s", msg(&error));
    CHECK(status->current_item_id == second && strstr(status->media->content_id, "b.mp4"), "back at b");
    castd_free(status);
    Castd__V1__StatusResponse *seen;
    const Castd__V1__MediaStatus *m = media_seen_by_other(env, &seen);
    CHECK(m && m->current_item_id == second, "another client sees item b");
    castd_free(seen);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

/* ---- the generic call and errors ---------------------------------------------------------- */

static bool test_generic_call(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__GetDeviceRequest request = CASTD__V1__GET_DEVICE_REQUEST__INIT;
    request.device = "test tv"; /* castd matches names case-insensitively */
    ProtobufCMessage *response = NULL;
    CHECK(castd_call(client, "GetDevice", &request.base, &castd__v1__device__descriptor, &response,
                     (int)scaled_ms(10), &error) == CASTD_OK, "GetDevice: %s", msg(&error));
    CHECK(response->descriptor == &castd__v1__device__descriptor &&
              !strcmp(((Castd__V1__Device *)response)->friendly_name, DEVICE), "the device");
    castd_free(response);
    Castd__V1__ListDevicesRequest list = CASTD__V1__LIST_DEVICES_REQUEST__INIT;
    CHECK(castd_call(client, "/castd.v1.Cast/ListDevices", &list.base,
                     &castd__v1__list_devices_response__descriptor, &response, 0, &error) == CASTD_OK,
          "full path: %s", msg(&error));
    CHECK(((Castd__V1__ListDevicesResponse *)response)->n_devices == 1, "one device");
    castd_free(response);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_errors(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__MediaStatus *status = (Castd__V1__MediaStatus *)1;
    castd_code code = castd_pause(client, "no such device", &status, &error);
    CHECK(code == CASTD_NOT_FOUND && error.code == CASTD_NOT_FOUND, "unknown device: %s", castd_code_name(code));
    CHECK(status == NULL, "no response on error");
    CHECK(strstr(msg(&error), "no such device") && strstr(msg(&error), DEVICE), "names the choices: %s", msg(&error));

    if (!load_media(client, "errors")) return false;
    code = castd_set_volume(client, DEVICE, 2.0, NULL, &error);
    CHECK(code == CASTD_INVALID_ARGUMENT, "volume 2.0: %s %s", castd_code_name(code), msg(&error));
    CHECK(strstr(msg(&error), "2.0"), "says the level: %s", msg(&error));

    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    code = castd_call(client, "NoSuchMethod", &request.base, &castd__v1__status_response__descriptor, NULL, 0, &error);
    CHECK(code == CASTD_UNIMPLEMENTED, "unknown method: %s %s", castd_code_name(code), msg(&error));
    CHECK(strstr(msg(&error), "unknown method '/castd.v1.Cast/NoSuchMethod'"), "names the method: %s", msg(&error));

    /* A streaming method through castd_call is refused here. */
    Castd__V1__WatchRequest watch = CASTD__V1__WATCH_REQUEST__INIT;
    code = castd_call(client, "Watch", &watch.base, &castd__v1__event__descriptor, NULL, 0, &error);
    CHECK(code == CASTD_INVALID_ARGUMENT && strstr(msg(&error), "streaming"), "Watch unary: %s", msg(&error));

    /* Device errors carry castd's reason and device_error when the device refused. The
     * connection is still good after every error above. */
    CHECK(castd_status(client, NULL, &error) == CASTD_OK && error.message == NULL, "still usable: %s", msg(&error));
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_deadline(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    Castd__V1__LoadRequest request = CASTD__V1__LOAD_REQUEST__INIT;
    Castd__V1__MediaInformation media = CASTD__V1__MEDIA_INFORMATION__INIT;
    media.content_id = "http://127.0.0.1/x.mp4";
    request.device = (char *)DEVICE;
    request.media = &media;
    int64_t start = monotonic_ms();
    ProtobufCMessage *response = NULL;
    castd_code code = castd_call(client, "Load", &request.base, &castd__v1__media_status__descriptor,
                                 &response, 300, &error);
    int64_t elapsed = monotonic_ms() - start;
    CHECK(code == CASTD_DEADLINE_EXCEEDED, "code %s: %s", castd_code_name(code), msg(&error));
    CHECK(response == NULL, "no response");
    CHECK(elapsed >= 250 && elapsed < 300 + scaled_ms(1.5), "ended near 300 ms: %lld ms", (long long)elapsed);
    fprintf(stderr, "    (deadline of 300 ms ended the call after %lld ms: %s)\n", (long long)elapsed, msg(&error));
    /* The connection goes on; castd's late answer to the cancelled call is dropped. */
    CHECK(castd_status(client, NULL, &error) == CASTD_OK, "still usable: %s", msg(&error));
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

/* ---- the connection lost ------------------------------------------------------------------ */

static bool test_connect_unavailable(test_env *env) {
    char path[400];
    snprintf(path, sizeof path, "%s/nobody.sock", env->dir);
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(path, &error);
    CHECK(client == NULL, "no client");
    CHECK(error.code == CASTD_UNAVAILABLE, "code %s", castd_code_name(error.code));
    char expected[1024];
    snprintf(expected, sizeof expected,
             "cannot connect to castd at %s: No such file or directory — is castd running? (start it "
             "with `castd`, or set --socket / CASTD_SOCKET)", path);
    CHECK(!strcmp(msg(&error), expected), "message: %s", msg(&error));

    /* The socket path rules. */
    char resolved[512];
    setenv("CASTD_SOCKET", "/x/y.sock", 1);
    castd_default_socket_path(resolved, sizeof resolved);
    CHECK(!strcmp(resolved, "/x/y.sock"), "CASTD_SOCKET: %s", resolved);
    setenv("CASTD_SOCKET", "", 1);
    setenv("XDG_RUNTIME_DIR", env->dir, 1);
    castd_default_socket_path(resolved, sizeof resolved);
    snprintf(expected, sizeof expected, "%s/castd/castd.sock", env->dir);
    bool system_exists = access("/run/castd/castd.sock", F_OK) == 0;
    CHECK(!strcmp(resolved, system_exists ? "/run/castd/castd.sock" : expected), "XDG: %s", resolved);
    unsetenv("XDG_RUNTIME_DIR");
    unsetenv("CASTD_SOCKET");
    castd_default_socket_path(resolved, sizeof resolved);
    CHECK(!strcmp(resolved, "/run/castd/castd.sock"), "default: %s", resolved);
    /* connect(NULL) follows them. */
    setenv("CASTD_SOCKET", path, 1);
    client = castd_client_connect(NULL, &error);
    unsetenv("CASTD_SOCKET");
    CHECK(!client && error.code == CASTD_UNAVAILABLE && strstr(msg(&error), path), "NULL path: %s", msg(&error));
    castd_error_clear(&error);
    return true;
}

static bool test_castd_killed_during_unary(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    /* The emulator delays each reply by 3 s: the Load waits; castd is killed meanwhile. */
    pid_t killer = kill_later(env->castd, 500);
    castd_error error = CASTD_ERROR_INIT;
    int64_t start = monotonic_ms();
    castd_code code = castd_load(client, DEVICE, "http://127.0.0.1/x.mp4", "t", NULL, NULL, &error);
    int64_t elapsed = monotonic_ms() - start;
    waitpid(killer, NULL, 0);
    env_kill_castd(env);
    CHECK(code == CASTD_UNAVAILABLE, "code %s: %s", castd_code_name(code), msg(&error));
    CHECK(strstr(msg(&error), "castd closed the connection"), "message: %s", msg(&error));
    CHECK(elapsed < 3000, "ended when castd died, not when the device answered: %lld ms", (long long)elapsed);
    code = castd_status(client, NULL, &error);
    CHECK(code == CASTD_UNAVAILABLE, "later calls fail too: %s", castd_code_name(code));
    CHECK(castd_client_fd(client) == -1 && castd_client_events(client) == 0, "closed");
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_castd_killed_during_watch(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    Castd__V1__Event *event = next_event(watch, scaled_ms(10));
    CHECK(event && event->kind_case == CASTD__V1__EVENT__KIND_SNAPSHOT, "snapshot first");
    castd_free(event);
    env_kill_castd(env);
    ProtobufCMessage *message = NULL;
    castd_code code;
    /* Whatever castd had sent before dying may come first; then the end. */
    while ((code = castd_stream_next(watch, &message, (int)scaled_ms(10), &error)) == CASTD_OK && message)
        castd_free(message);
    CHECK(code == CASTD_UNAVAILABLE, "code %s: %s", castd_code_name(code), msg(&error));
    CHECK(strstr(msg(&error), "castd closed the connection"), "message: %s", msg(&error));
    CHECK(castd_stream_ended(watch), "ended");
    code = castd_stream_next(watch, &message, 0, &error);
    CHECK(code == CASTD_UNAVAILABLE, "keeps its end");
    castd_stream_close(watch);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

/* ---- streams ------------------------------------------------------------------------------ */

static bool test_watch_snapshot_then_deltas(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    if (!load_media(client, "watched")) return false;
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    Castd__V1__Event *event = next_event(watch, scaled_ms(10));
    CHECK(event && event->kind_case == CASTD__V1__EVENT__KIND_SNAPSHOT, "snapshot first");
    uint64_t snapshot = event->sequence;
    CHECK(event->snapshot->n_media == 1 && !strcmp(title_of(event->snapshot->media[0]), "watched"), "media in it");
    castd_free(event);
    /* Another process pauses. */
    int rc = run_castc(env, NULL, 0, "--device", DEVICE, "pause", NULL);
    CHECK(rc == 0, "castc pause exited %d", rc);
    bool paused = false;
    int64_t deadline = monotonic_ms() + scaled_ms(10);
    while (!paused && monotonic_ms() < deadline) {
        event = next_event(watch, deadline - monotonic_ms());
        CHECK(event, "an event");
        CHECK(event->sequence > snapshot, "sequence %llu after the snapshot's %llu",
              (unsigned long long)event->sequence, (unsigned long long)snapshot);
        paused = event->kind_case == CASTD__V1__EVENT__KIND_MEDIA &&
                 event->media->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_PAUSED;
        castd_free(event);
    }
    CHECK(paused, "a media event with PAUSED");
    castd_stream_close(watch);
    /* Closing cancels on castd; the connection goes on. */
    CHECK(castd_status(client, NULL, &error) == CASTD_OK, "still usable: %s", msg(&error));
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_multiplexed(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    /* Unary calls on the same connection while the Watch is open and unread: its events are
     * buffered for it meanwhile. */
    if (!load_media(client, "multiplexed")) return false;
    CHECK(castd_pause(client, DEVICE, NULL, &error) == CASTD_OK, "pause: %s", msg(&error));
    CHECK(castd_seek(client, DEVICE, 42, false, NULL, &error) == CASTD_OK, "seek: %s", msg(&error));
    Castd__V1__StatusResponse *status = NULL;
    CHECK(castd_status(client, &status, &error) == CASTD_OK, "status: %s", msg(&error));
    castd_free(status);
    /* Everything is there, in order, without a gap in the sequence. */
    ProtobufCMessage *message;
    uint64_t last = 0;
    int events = 0;
    bool paused = false, seeked = false, loaded = false;
    while (castd_stream_next(watch, &message, 0, &error) == CASTD_OK && message) {
        Castd__V1__Event *e = (Castd__V1__Event *)message;
        if (events == 0) CHECK(e->kind_case == CASTD__V1__EVENT__KIND_SNAPSHOT, "snapshot first");
        else CHECK(e->sequence == last + 1, "sequence %llu follows %llu", (unsigned long long)e->sequence,
                   (unsigned long long)last);
        last = e->sequence;
        if (e->kind_case == CASTD__V1__EVENT__KIND_MEDIA) {
            loaded |= !strcmp(title_of(e->media), "multiplexed");
            paused |= e->media->player_state == CASTD__V1__PLAYER_STATE__PLAYER_STATE_PAUSED;
            seeked |= paused && fabs(e->media->current_time - 42) < 1;
        }
        events++;
        castd_free(message);
    }
    fprintf(stderr, "    (%d events buffered for the Watch during 4 unary calls)\n", events);
    CHECK(loaded && paused && seeked, "load, pause and seek events buffered (%d events)", events);
    CHECK(!castd_stream_ended(watch), "the Watch is still open");
    castd_stream_close(watch);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_stream_buffer_bound(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_client_set_stream_buffer(client, 3, 0);
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    /* Nobody reads the Watch while a Load makes many events. */
    if (!load_media(client, "bounded")) return false;
    CHECK(castd_stream_ended(watch), "the unread Watch was ended");
    ProtobufCMessage *message;
    int delivered = 0;
    castd_code code;
    while ((code = castd_stream_next(watch, &message, 0, &error)) == CASTD_OK && message) {
        delivered++;
        castd_free(message);
    }
    CHECK(delivered == 3, "the 3 buffered messages are delivered first: %d", delivered);
    CHECK(code == CASTD_RESOURCE_EXHAUSTED && strstr(msg(&error), "fell behind"), "then: %s %s",
          castd_code_name(code), msg(&error));
    castd_stream_close(watch);
    CHECK(castd_status(client, NULL, &error) == CASTD_OK, "the connection goes on: %s", msg(&error));
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_poll_driven_watch(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    bool snapshot = false, loaded = false, started_load = false;
    int64_t deadline = monotonic_ms() + scaled_ms(20);
    while (!loaded && monotonic_ms() < deadline) {
        ProtobufCMessage *message;
        castd_code code;
        while ((code = castd_stream_try_next(watch, &message, &error)) == CASTD_OK && message) {
            Castd__V1__Event *e = (Castd__V1__Event *)message;
            if (!snapshot) CHECK(e->kind_case == CASTD__V1__EVENT__KIND_SNAPSHOT, "snapshot first");
            snapshot = true;
            loaded |= e->kind_case == CASTD__V1__EVENT__KIND_MEDIA && !strcmp(title_of(e->media), "polled");
            castd_free(message);
        }
        CHECK(code == CASTD_NO_MESSAGE || (code == CASTD_OK), "stream open: %s %s", castd_code_name(code), msg(&error));
        if (snapshot && !started_load) {
            /* Another process loads media: its events reach us through poll + dispatch. */
            int rc = run_castc(env, NULL, 0, "--device", DEVICE, "load", "http://127.0.0.1/p.mp4", "--title", "polled", NULL);
            CHECK(rc == 0, "castc load exited %d", rc);
            started_load = true;
        }
        struct pollfd p = {castd_client_fd(client), castd_client_events(client), 0};
        CHECK(p.fd >= 0 && (p.events & POLLIN), "fd and events");
        int rc = poll(&p, 1, 200);
        CHECK(rc >= 0, "poll");
        CHECK(castd_client_dispatch(client, p.revents, &error) == CASTD_OK, "dispatch: %s", msg(&error));
    }
    CHECK(snapshot && loaded, "snapshot %d, media event for the load %d", snapshot, loaded);
    castd_stream_close(watch);
    /* An asynchronous unary call on the same path: GetStatus opened as a stream. */
    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    castd_stream *call = castd_stream_open(client, "GetStatus", &request.base,
                                           &castd__v1__status_response__descriptor, &error);
    CHECK(call, "async GetStatus: %s", msg(&error));
    ProtobufCMessage *response = NULL;
    castd_code code = CASTD_NO_MESSAGE;
    deadline = monotonic_ms() + scaled_ms(10);
    while ((code = castd_stream_try_next(call, &response, &error)) == CASTD_NO_MESSAGE && monotonic_ms() < deadline) {
        struct pollfd p = {castd_client_fd(client), castd_client_events(client), 0};
        CHECK(poll(&p, 1, 200) >= 0, "poll");
        castd_client_dispatch(client, p.revents, &error);
    }
    CHECK(code == CASTD_OK && response, "the response: %s %s", castd_code_name(code), msg(&error));
    CHECK(((Castd__V1__StatusResponse *)response)->n_media == 1, "it has the media");
    castd_free(response);
    CHECK(castd_stream_next(call, &response, (int)scaled_ms(10), &error) == CASTD_OK && !response, "then OK");
    castd_stream_close(call);
    castd_error_clear(&error);
    castd_client_close(client);
    return true;
}

static bool test_stream_logs_end(test_env *env) {
    castd_client *client = connect_or_null(env);
    CHECK(client, "connect");
    castd_error error = CASTD_ERROR_INIT;
    castd_stream *logs = castd_stream_logs(client, false, 5, &error);
    CHECK(logs, "logs: %s", msg(&error));
    ProtobufCMessage *message;
    int records = 0;
    castd_code code;
    while ((code = castd_stream_next(logs, &message, (int)scaled_ms(10), &error)) == CASTD_OK && message) {
        CHECK(message->descriptor == &castd__v1__log_record__descriptor, "a log record");
        records++;
        castd_free(message);
    }
    CHECK(code == CASTD_OK && message == NULL, "a normal end (OK, no message): %s %s", castd_code_name(code), msg(&error));
    CHECK(records >= 1 && records <= 5, "1…5 recent records: %d", records);
    CHECK(castd_stream_next(logs, &message, 0, &error) == CASTD_OK && !message, "keeps its end");
    castd_stream_close(logs);
    /* A stream closed while open is cancelled on castd, and the connection goes on. */
    castd_stream *watch = castd_watch(client, &error);
    CHECK(watch, "watch: %s", msg(&error));
    castd_stream_close(watch);
    castd_stream *left_open = castd_watch(client, &error);
    CHECK(left_open, "watch: %s", msg(&error));
    CHECK(castd_status(client, NULL, &error) == CASTD_OK, "after a cancel: %s", msg(&error));
    /* Closing the client ends what is open; the stream is freed after. */
    castd_client_close(client);
    while ((code = castd_stream_next(left_open, &message, 0, &error)) == CASTD_OK && message)
        castd_free(message); /* what was read before the close is still delivered */
    CHECK(code == CASTD_CANCELLED && strstr(msg(&error), "closed by this client"), "cancelled by close: %s",
          msg(&error));
    castd_stream_close(left_open);
    castd_error_clear(&error);
    return true;
}

/* ---- the examples ------------------------------------------------------------------------- */

static bool test_examples(test_env *env) {
    char program[512], out[8192];
    snprintf(program, sizeof program, "%s/castd-c-control", build_dir());
    int rc = run_program(out, sizeof out, program, "--socket", env->sock, "--device", DEVICE, "load",
                         "http://127.0.0.1/x.mp4", "Example", NULL);
    CHECK(rc == 0, "control load exited %d", rc);
    rc = run_program(out, sizeof out, program, "--socket", env->sock, "--device", DEVICE, "pause", NULL);
    CHECK(rc == 0 && !strncmp(out, "PAUSED", 6), "control pause: %d %s", rc, out);
    rc = run_program(out, sizeof out, program, "--socket", env->sock, "--device", "nope", "pause", NULL);
    CHECK(rc == CASTD_NOT_FOUND, "unknown device exits 5: %d", rc);
    rc = run_program(out, sizeof out, program, "--socket", env->sock, "volume", "2.0", NULL);
    CHECK(rc == CASTD_INVALID_ARGUMENT, "volume 2.0 exits 3: %d", rc);
    rc = run_program(out, sizeof out, program, "--socket", env->sock, "dance", NULL);
    CHECK(rc == 64, "bad usage exits 64: %d", rc);
    char nobody[400];
    snprintf(nobody, sizeof nobody, "%s/nobody.sock", env->dir);
    rc = run_program(out, sizeof out, program, "--socket", nobody, "play", NULL);
    CHECK(rc == CASTD_UNAVAILABLE, "no castd exits 14: %d", rc);

    snprintf(program, sizeof program, "%s/castd-c-status", build_dir());
    rc = run_program(out, sizeof out, program, "--socket", env->sock, "--device", "test tv", NULL);
    CHECK(rc == 0 && strstr(out, "Test TV\tconnected\tDefault Media Receiver\tpaused\tExample"), "status: %d %s", rc, out);

    /* castd-c-watch through a pipe: its first line is the snapshot; a pause gives a media line.
     * It runs until killed, so it is read here line by line. */
    snprintf(program, sizeof program, "%s/castd-c-watch", build_dir());
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(program, program, "--socket", env->sock, "--device", DEVICE, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    pid_t guard = kill_later(pid, scaled_ms(20)); /* a deadline for the reads below */
    FILE *lines = fdopen(fds[0], "r");
    char line[1024];
    bool first = fgets(line, sizeof line, lines) != NULL;
    bool snapshot = first && strstr(line, " snapshot ") != NULL;
    run_castc(env, NULL, 0, "--device", DEVICE, "play", NULL);
    bool playing = false;
    while (!playing && fgets(line, sizeof line, lines)) playing = strstr(line, " media Test TV PLAYING") != NULL;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    kill(guard, SIGKILL);
    waitpid(guard, NULL, 0);
    fclose(lines);
    CHECK(snapshot, "the first line is the snapshot");
    CHECK(playing, "a media line with PLAYING");
    return true;
}

/* ---- the runner --------------------------------------------------------------------------- */

static const char *const DELAYED[] = {"--reply-delay", "3000", NULL};

enum { NONE, CASTD };
static const struct {
    const char *name;
    bool (*run)(test_env *);
    int needs;
    const char *const *emulator_args;
} TESTS[] = {
    {"frame_reader_chunks", test_frame_reader_chunks, NONE, NULL},
    {"connect_unavailable", test_connect_unavailable, NONE, NULL},
    {"frame_too_big", test_frame_too_big, NONE, NULL},
    {"half_frame", test_half_frame, NONE, NULL},
    {"connection_status", test_connection_status, NONE, NULL},
    {"decoded_size_bound", test_decoded_size_bound, NONE, NULL},
    {"decode_limits", test_decode_limits, NONE, NULL},
    {"visible", test_visible, NONE, NULL},
    {"example_escapes", test_example_escapes, NONE, NULL},
    {"load_file_local_errors", test_load_file_local_errors, NONE, NULL},
    {"load_file_handover", test_load_file_handover, NONE, NULL},
    {"status_and_devices", test_status_and_devices, CASTD, NULL},
    {"load_play_pause_stop", test_load_play_pause_stop, CASTD, NULL},
    {"seek", test_seek, CASTD, NULL},
    {"volume", test_volume, CASTD, NULL},
    {"next_previous", test_next_previous, CASTD, NULL},
    {"generic_call", test_generic_call, CASTD, NULL},
    {"errors", test_errors, CASTD, NULL},
    {"deadline", test_deadline, CASTD, DELAYED},
    {"castd_killed_during_unary", test_castd_killed_during_unary, CASTD, DELAYED},
    {"castd_killed_during_watch", test_castd_killed_during_watch, CASTD, NULL},
    {"watch_snapshot_then_deltas", test_watch_snapshot_then_deltas, CASTD, NULL},
    {"multiplexed", test_multiplexed, CASTD, NULL},
    {"stream_buffer_bound", test_stream_buffer_bound, CASTD, NULL},
    {"poll_driven_watch", test_poll_driven_watch, CASTD, NULL},
    {"stream_logs_end", test_stream_logs_end, CASTD, NULL},
    {"examples", test_examples, CASTD, NULL},
    {"load_file", test_load_file, CASTD, NULL},
};

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        bool selected = argc < 2;
        for (int a = 1; a < argc; a++) selected |= !strcmp(argv[a], TESTS[i].name);
        if (!selected) continue;
        int64_t start = monotonic_ms();
        test_env env;
        bool ok = TESTS[i].needs == CASTD ? env_start(&env, TESTS[i].emulator_args) : env_dir(&env);
        if (ok) ok = TESTS[i].run(&env);
        env_stop(&env);
        printf("%s %s (%lld ms)\n", ok ? "PASS" : "FAIL", TESTS[i].name, (long long)(monotonic_ms() - start));
        fflush(stdout);
        if (ok) passed++;
        else failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
