/* libFuzzer target for the frame reader: the input (after two control bytes) is fed to a
 * castd_frame_reader in chunks whose sizes the control bytes pick; every whole frame is decoded
 * as a castd.v1.Frame, and a message frame's payload as a castd.v1.Event, as the client does.
 * Nothing may crash or leak; lengths over the limit must be refused without allocating. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "castd/v1/cast.pb-c.h"
#include "castd/v1/rpc.pb-c.h"
#include "frame_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode(const uint8_t *body, size_t len) {
    Castd__V1__Frame *frame = castd__v1__frame__unpack(NULL, len, body);
    if (!frame) return;
    if (frame->kind_case == CASTD__V1__FRAME__KIND_MESSAGE) {
        Castd__V1__Event *event =
            castd__v1__event__unpack(NULL, frame->message.len, frame->message.data);
        if (event) castd__v1__event__free_unpacked(event, NULL);
    }
    castd__v1__frame__free_unpacked(frame, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    /* Control byte 0: the limit (small ones reach the "too big" path); byte 1: chunk sizes. */
    static const size_t limits[] = {0, 1, 16, 64, 4096, 4u * 1024u * 1024u};
    size_t limit = limits[data[0] % (sizeof limits / sizeof limits[0])];
    uint32_t chunk_seed = data[1];
    data += 2;
    size -= 2;
    castd_frame_reader reader;
    castd_frame_reader_init(&reader, limit);
    size_t offset = 0;
    while (offset < size) {
        chunk_seed = chunk_seed * 1103515245u + 12345u;
        size_t chunk = 1 + (chunk_seed >> 16) % 64;
        if (chunk > size - offset) chunk = size - offset;
        size_t end = offset + chunk;
        while (offset < end) {
            size_t remaining = end - offset, used = 0, body_len = 0;
            uint8_t *body = NULL;
            int rc = castd_frame_reader_feed(&reader, data + offset, end - offset, &used, &body,
                                             &body_len);
            if (used > remaining) abort(); /* took more than it was given */
            offset += used;
            if (rc == CASTD_FRAME_READY) {
                if (!body || body_len > limit) abort();
                decode(body, body_len);
                free(body);
            } else if (rc == CASTD_FRAME_TOO_BIG) {
                if (reader.body || reader.refused <= limit) abort();
                castd_frame_reader_free(&reader);
                return 0;
            } else if (rc != CASTD_FRAME_NEED_MORE) {
                castd_frame_reader_free(&reader);
                return 0;
            } else if (used != remaining) {
                abort(); /* NEED_MORE takes everything */
            }
        }
    }
    castd_frame_reader_free(&reader);
    return 0;
}
