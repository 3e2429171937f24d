/* libcastd-client: typed wrappers over castd_call and castd_stream_open. */
#include "internal.h"

/* protobuf-c's string fields are `char *`; requests are only read. */
static char *text(const char *s) { return (char *)(s ? s : ""); }

static castd_code unary(castd_client *client, const char *method, const ProtobufCMessage *request,
                        const ProtobufCMessageDescriptor *type, void *out, castd_error *error) {
    ProtobufCMessage *response = NULL;
    castd_code code = castd_call(client, method, request, type, out ? &response : NULL,
                                 client ? castd_client_timeout(client) : 0, error);
    if (out) *(ProtobufCMessage **)out = response;
    return code;
}

castd_code castd_status(castd_client *client, Castd__V1__StatusResponse **out,
                        castd_error *error) {
    Castd__V1__GetStatusRequest request = CASTD__V1__GET_STATUS_REQUEST__INIT;
    return unary(client, "GetStatus", &request.base, &castd__v1__status_response__descriptor, out,
                 error);
}

castd_code castd_list_devices(castd_client *client, bool all,
                              Castd__V1__ListDevicesResponse **out, castd_error *error) {
    Castd__V1__ListDevicesRequest request = CASTD__V1__LIST_DEVICES_REQUEST__INIT;
    request.all = all;
    return unary(client, "ListDevices", &request.base,
                 &castd__v1__list_devices_response__descriptor, out, error);
}

castd_code castd_load(castd_client *client, const char *device, const char *url,
                      const char *title, const char *content_type, Castd__V1__MediaStatus **out,
                      castd_error *error) {
    if (!url || !*url) {
        if (out) *out = NULL;
        return castd_set_error(error, CASTD_INVALID_ARGUMENT, "castd_load needs a URL to load");
    }
    Castd__V1__LoadRequest request = CASTD__V1__LOAD_REQUEST__INIT;
    Castd__V1__MediaInformation media = CASTD__V1__MEDIA_INFORMATION__INIT;
    Castd__V1__MediaMetadata metadata = CASTD__V1__MEDIA_METADATA__INIT;
    request.device = text(device);
    media.content_id = text(url);
    media.content_url = text(url);
    media.content_type = text(content_type);
    if (title && *title) {
        metadata.title = text(title);
        media.metadata = &metadata;
    }
    request.media = &media;
    return unary(client, "Load", &request.base, &castd__v1__media_status__descriptor, out, error);
}

static castd_code media(castd_client *client, const char *method, const char *device,
                        Castd__V1__MediaStatus **out, castd_error *error) {
    Castd__V1__MediaRequest request = CASTD__V1__MEDIA_REQUEST__INIT;
    request.device = text(device);
    return unary(client, method, &request.base, &castd__v1__media_status__descriptor, out, error);
}

castd_code castd_play(castd_client *client, const char *device, Castd__V1__MediaStatus **out,
                      castd_error *error) {
    return media(client, "Play", device, out, error);
}

castd_code castd_pause(castd_client *client, const char *device, Castd__V1__MediaStatus **out,
                       castd_error *error) {
    return media(client, "Pause", device, out, error);
}

castd_code castd_stop(castd_client *client, const char *device, Castd__V1__MediaStatus **out,
                      castd_error *error) {
    return media(client, "Stop", device, out, error);
}

castd_code castd_seek(castd_client *client, const char *device, double seconds, bool relative,
                      Castd__V1__MediaStatus **out, castd_error *error) {
    Castd__V1__SeekRequest request = CASTD__V1__SEEK_REQUEST__INIT;
    request.device = text(device);
    request.position = seconds;
    request.relative = relative;
    return unary(client, "Seek", &request.base, &castd__v1__media_status__descriptor, out, error);
}

castd_code castd_set_volume(castd_client *client, const char *device, double level,
                            Castd__V1__Volume **out, castd_error *error) {
    Castd__V1__SetVolumeRequest request = CASTD__V1__SET_VOLUME_REQUEST__INIT;
    request.device = text(device);
    /* `optional`: present even when the level is 0.0. */
    request._level_case = CASTD__V1__SET_VOLUME_REQUEST___LEVEL_LEVEL;
    request.level = level;
    return unary(client, "SetVolume", &request.base, &castd__v1__volume__descriptor, out, error);
}

static castd_code jump(castd_client *client, const char *device, int32_t by,
                       Castd__V1__MediaStatus **out, castd_error *error) {
    Castd__V1__QueueUpdateRequest request = CASTD__V1__QUEUE_UPDATE_REQUEST__INIT;
    request.device = text(device);
    request.jump = by;
    return unary(client, "QueueUpdate", &request.base, &castd__v1__media_status__descriptor, out,
                 error);
}

castd_code castd_next(castd_client *client, const char *device, Castd__V1__MediaStatus **out,
                      castd_error *error) {
    return jump(client, device, +1, out, error);
}

castd_code castd_previous(castd_client *client, const char *device, Castd__V1__MediaStatus **out,
                          castd_error *error) {
    return jump(client, device, -1, out, error);
}

castd_stream *castd_watch(castd_client *client, castd_error *error) {
    Castd__V1__WatchRequest request = CASTD__V1__WATCH_REQUEST__INIT;
    return castd_stream_open(client, "Watch", &request.base, &castd__v1__event__descriptor, error);
}

castd_stream *castd_listen(castd_client *client, const char *device, const char *namespace_,
                           castd_error *error) {
    Castd__V1__ListenRequest request = CASTD__V1__LISTEN_REQUEST__INIT;
    request.device = text(device);
    request.namespace_ = text(namespace_);
    return castd_stream_open(client, "Listen", &request.base,
                             &castd__v1__channel_event__descriptor, error);
}

castd_stream *castd_stream_logs(castd_client *client, bool follow, uint32_t recent,
                                castd_error *error) {
    Castd__V1__StreamLogsRequest request = CASTD__V1__STREAM_LOGS_REQUEST__INIT;
    request.follow = follow;
    request.recent = recent;
    return castd_stream_open(client, "StreamLogs", &request.base,
                             &castd__v1__log_record__descriptor, error);
}
