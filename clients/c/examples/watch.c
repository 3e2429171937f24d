/* castd-c-watch: one line per Watch event, driven by poll(2) on the client's socket. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "castd-client.h"

/* Text from castd, for the terminal: escape sequences in a device name or title are written out
 * (castd_visible), as castc does. Up to 4 at once, for one printf. */
static const char *shown(const char *text) {
    static char buffers[4][1024];
    static unsigned next;
    char *buffer = buffers[next++ % 4];
    castd_visible(text, buffer, sizeof buffers[0]);
    return buffer;
}

/* The enum value's name after its prefix: "PLAYER_STATE_PAUSED" → "PAUSED". */
static const char *name_of(const ProtobufCEnumDescriptor *type, int value, size_t prefix) {
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(type, value);
    return v && strlen(v->name) > prefix ? v->name + prefix : "UNKNOWN";
}

/* Device names by id, learnt from the snapshot and device events (media events carry ids). */
static struct { char id[128], name[128]; } names[64];
static size_t n_names;
static void learn(const Castd__V1__Device *d) {
    size_t i = 0;
    while (i < n_names && strcmp(names[i].id, d->id)) i++;
    if (i == n_names && n_names < 64) n_names++;
    if (i < 64) {
        snprintf(names[i].id, sizeof names[i].id, "%s", d->id);
        snprintf(names[i].name, sizeof names[i].name, "%s", d->friendly_name);
    }
}
static const char *name(const char *id) {
    for (size_t i = 0; i < n_names; i++) if (!strcmp(names[i].id, id)) return names[i].name;
    return id;
}

static const Castd__V1__Device *wanted; /* --device, resolved by castd; NULL: every device */
static int about(const char *id) {
    return !wanted || !strcmp(id, wanted->id) || !strcasecmp(name(id), wanted->friendly_name);
}

static void print(const Castd__V1__Event *e) {
    uint64_t seq = e->sequence;
    switch (e->kind_case) {
    case CASTD__V1__EVENT__KIND_SNAPSHOT:
        for (size_t i = 0; i < e->snapshot->n_devices; i++) learn(e->snapshot->devices[i]);
        printf("%" PRIu64 " snapshot %zu devices, %zu sessions, %zu media, %s\n", seq,
               e->snapshot->n_devices, e->snapshot->n_sessions, e->snapshot->n_media,
               name_of(&castd__v1__cast_state__descriptor, e->snapshot->cast_state, 11));
        break;
    case CASTD__V1__EVENT__KIND_DEVICE_ADDED:
    case CASTD__V1__EVENT__KIND_DEVICE_UPDATED:
    case CASTD__V1__EVENT__KIND_DEVICE_REMOVED: {
        const Castd__V1__Device *d = e->device_added; /* same member of the union for the three */
        learn(d);
        if (about(d->id))
            printf("%" PRIu64 " %s %s %s\n", seq,
                   e->kind_case == CASTD__V1__EVENT__KIND_DEVICE_ADDED ? "device_added"
                   : e->kind_case == CASTD__V1__EVENT__KIND_DEVICE_UPDATED ? "device_updated"
                                                                         : "device_removed",
                   shown(d->friendly_name), name_of(&castd__v1__link_state__descriptor, d->link_state, 11));
        break;
    }
    case CASTD__V1__EVENT__KIND_SESSION:
        if (about(e->session->device_id))
            printf("%" PRIu64 " session %s %s %s\n", seq, shown(name(e->session->device_id)),
                   name_of(&castd__v1__session_state__descriptor, e->session->state, 14),
                   shown(e->session->display_name));
        break;
    case CASTD__V1__EVENT__KIND_MEDIA: {
        const Castd__V1__MediaStatus *m = e->media;
        if (about(m->device_id))
            printf("%" PRIu64 " media %s %s %.1f %s\n", seq, shown(name(m->device_id)),
                   name_of(&castd__v1__player_state__descriptor, m->player_state, 13), m->current_time,
                   shown(m->media && m->media->metadata ? m->media->metadata->title : ""));
        break;
    }
    case CASTD__V1__EVENT__KIND_CAST_STATE:
        printf("%" PRIu64 " cast_state %s %s\n", seq,
               name_of(&castd__v1__cast_state__descriptor, e->cast_state->state, 11),
               name_of(&castd__v1__cast_state__descriptor, e->cast_state->previous, 11));
        break;
    case CASTD__V1__EVENT__KIND_QUEUE:
        if (about(e->queue->device_id))
            printf("%" PRIu64 " queue %s %s %zu items\n", seq, shown(name(e->queue->device_id)),
                   name_of(&castd__v1__queue_change_kind__descriptor, e->queue->kind, 18),
                   e->queue->n_item_ids);
        break;
    case CASTD__V1__EVENT__KIND_TRANSFERRED:
        if (about(e->transferred->from_device_id) || about(e->transferred->to_device_id))
            printf("%" PRIu64 " transferred %s %s\n", seq, shown(e->transferred->from_device_name),
                   shown(e->transferred->to_device_name));
        break;
    case CASTD__V1__EVENT__KIND_LAGGED:
        printf("%" PRIu64 " lagged %" PRIu64 "\n", seq, e->lagged->dropped);
        break;
    default:
        printf("%" PRIu64 " unknown\n", seq);
    }
    fflush(stdout); /* another program may read this through a pipe */
}

int main(int argc, char **argv) {
    const char *socket_path = NULL, *device = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--socket") && i + 1 < argc) socket_path = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else {
            int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            fprintf(help ? stdout : stderr, "usage: castd-c-watch [--socket PATH] [--device NAME]\n"
                    "Prints one line per castd event: SEQUENCE KIND DETAILS.\n");
            return help ? 0 : 64;
        }
    }
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(socket_path, &error);
    Castd__V1__Device *selected = NULL;
    if (client && device) {
        Castd__V1__GetDeviceRequest request = CASTD__V1__GET_DEVICE_REQUEST__INIT;
        request.device = (char *)device;
        castd_call(client, "GetDevice", &request.base, &castd__v1__device__descriptor,
                   (ProtobufCMessage **)&selected, 0, &error);
        wanted = selected;
    }
    castd_stream *watch = error.code == CASTD_OK ? castd_watch(client, &error) : NULL;
    castd_code code = error.code;
    while (watch) {
        ProtobufCMessage *message;
        /* Take everything already read, then wait for the socket. */
        while ((code = castd_stream_try_next(watch, &message, &error)) == CASTD_OK && message) {
            print((const Castd__V1__Event *)message);
            castd_free(message);
        }
        if (code != CASTD_NO_MESSAGE) break; /* the stream ended: OK, or an error */
        struct pollfd p = {castd_client_fd(client), castd_client_events(client), 0};
        if (poll(&p, 1, -1) < 0 && errno != EINTR) break;
        castd_client_dispatch(client, p.revents, NULL);
    }
    if (code != CASTD_OK && code != CASTD_NO_MESSAGE)
        fprintf(stderr, "castd-c-watch: %s: %s\n", castd_code_name(code), shown(error.message));
    castd_stream_close(watch);
    castd_free(selected);
    castd_error_clear(&error);
    castd_client_close(client);
    return code == CASTD_NO_MESSAGE ? CASTD_UNAVAILABLE : (int)code;
}
