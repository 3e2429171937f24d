/* castd-c-control: pause, play, stop, seek, volume, next, previous or load on a device. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

static int usage(FILE *out, int code) {
    fprintf(out, "usage: castd-c-control [--socket PATH] [--device NAME] "
                 "pause|play|stop|seek SECONDS|volume LEVEL|next|previous|load URL|PATH [TITLE]\n");
    return code;
}

/* Whether `text` is a URL (a scheme: a letter, then letters, digits, +, - or ., then ':'), as
 * castc tells them apart; anything else is a file on this machine. */
static bool is_url(const char *text) {
    if (!isalpha((unsigned char)text[0])) return false;
    const char *p = text + 1;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.') p++;
    return *p == ':';
}

static int number(const char *text, double *value) {
    char *end;
    *value = strtod(text, &end);
    return end != text && *end == '\0';
}

int main(int argc, char **argv) {
    const char *socket_path = NULL, *device = NULL;
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "-", 1); i++) {
        if (!strcmp(argv[i], "--socket") && i + 1 < argc) socket_path = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout, 0);
        else return usage(stderr, 64);
    }
    if (i >= argc) return usage(stderr, 64);
    const char *command = argv[i++];
    int rest = argc - i;
    double value = 0;
    int known = (!strcmp(command, "pause") || !strcmp(command, "play") || !strcmp(command, "stop") ||
                 !strcmp(command, "next") || !strcmp(command, "previous")) ? rest == 0
              : (!strcmp(command, "seek") || !strcmp(command, "volume")) ? rest == 1 && number(argv[i], &value)
              : !strcmp(command, "load") ? rest == 1 || rest == 2
              : 0;
    if (!known) return usage(stderr, 64);

    castd_error error = CASTD_ERROR_INIT;
    castd_client *client = castd_client_connect(socket_path, &error);
    Castd__V1__MediaStatus *media = NULL;
    Castd__V1__Volume *volume = NULL;
    if (client) {
        if (!strcmp(command, "pause")) castd_pause(client, device, &media, &error);
        else if (!strcmp(command, "play")) castd_play(client, device, &media, &error);
        else if (!strcmp(command, "stop")) castd_stop(client, device, &media, &error);
        else if (!strcmp(command, "next")) castd_next(client, device, &media, &error);
        else if (!strcmp(command, "previous")) castd_previous(client, device, &media, &error);
        else if (!strcmp(command, "seek")) castd_seek(client, device, value, false, &media, &error);
        else if (!strcmp(command, "volume")) castd_set_volume(client, device, value, &volume, &error);
        else if (is_url(argv[i]))
            castd_load(client, device, argv[i], rest == 2 ? argv[i + 1] : NULL, NULL, &media, &error);
        else /* opened here, and handed to castd */
            castd_load_file(client, device, argv[i], rest == 2 ? argv[i + 1] : NULL, NULL, &media, &error);
    }
    int code = error.code;
    if (code != CASTD_OK) {
        fprintf(stderr, "castd-c-control: %s: %s\n", castd_code_name(error.code), shown(error.message));
    } else if (media) {
        const ProtobufCEnumValue *state =
            protobuf_c_enum_descriptor_get_value(&castd__v1__player_state__descriptor, media->player_state);
        printf("%s %.1f\n", state ? state->name + 13 : "UNKNOWN", media->current_time);
    } else if (volume) {
        printf("volume %.2f%s\n", volume->level, volume->muted ? " muted" : "");
    }
    castd_free(media);
    castd_free(volume);
    castd_error_clear(&error);
    castd_client_close(client);
    return code;
}
