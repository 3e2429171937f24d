/* castd-c-status: the devices castd knows and what plays on them, from one GetStatus. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

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

/* "PLAYER_STATE_PAUSED" → "paused" (after the enum's prefix). */
static const char *enum_name(const ProtobufCEnumDescriptor *type, int value, size_t prefix,
                             char *buffer, size_t size) {
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(type, value);
    const char *name = v && strlen(v->name) > prefix ? v->name + prefix : "unknown";
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++) buffer[i] = (char)tolower((unsigned char)name[i]);
    buffer[i] = '\0';
    return buffer;
}

int main(int argc, char **argv) {
    const char *socket_path = NULL, *device = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--socket") && i + 1 < argc) socket_path = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else {
            int help = !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
            fprintf(help ? stdout : stderr, "usage: castd-c-status [--socket PATH] [--device NAME]\n"
                    "Prints each device castd knows: name, link state, app, player state, title, position.\n");
            return help ? 0 : 64;
        }
    }
    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(socket_path, &error);
    Castd__V1__StatusResponse *status = NULL;
    Castd__V1__Device *selected = NULL;
    if (client && device) {
        /* castd resolves the selector (id, name or host) by its own rules. */
        Castd__V1__GetDeviceRequest request = CASTD__V1__GET_DEVICE_REQUEST__INIT;
        request.device = (char *)device;
        castd_call(client, "GetDevice", &request.base, &castd__v1__device__descriptor,
                   (ProtobufCMessage **)&selected, 0, &error);
    }
    if (client && error.code == CASTD_OK) castd_status(client, &status, &error);
    if (error.code != CASTD_OK) {
        fprintf(stderr, "castd-c-status: %s: %s\n", castd_code_name(error.code), shown(error.message));
        int code = error.code;
        castd_error_clear(&error);
        castd_free(selected);
        castd_client_close(client);
        return code;
    }
    for (size_t i = 0; i < status->n_devices; i++) {
        const Castd__V1__Device *d = status->devices[i];
        if (selected && strcmp(d->id, selected->id) != 0) continue;
        char link[32], player[32];
        const char *app = "-";
        if (d->receiver)
            for (size_t a = 0; a < d->receiver->n_applications; a++)
                if (!d->receiver->applications[a]->is_idle_screen)
                    app = d->receiver->applications[a]->display_name;
        printf("%s\t%s\t%s", shown(d->friendly_name),
               enum_name(&castd__v1__link_state__descriptor, d->link_state, 11, link, sizeof link), shown(app));
        for (size_t m = 0; m < status->n_media; m++) {
            const Castd__V1__MediaStatus *media = status->media[m];
            if (strcmp(media->device_id, d->id) != 0) continue;
            const char *title = media->media && media->media->metadata ? media->media->metadata->title : "";
            printf("\t%s\t%s\t%.1f",
                   enum_name(&castd__v1__player_state__descriptor, media->player_state, 13, player, sizeof player),
                   shown(title), media->current_time);
        }
        printf("\n");
    }
    castd_free(status);
    castd_free(selected);
    castd_client_close(client);
    return 0;
}
