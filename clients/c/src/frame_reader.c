#include "frame_reader.h"

#include <stdlib.h>
#include <string.h>

void castd_frame_reader_init(castd_frame_reader *reader, size_t max_frame) {
    memset(reader, 0, sizeof *reader);
    reader->max_frame = max_frame;
}

void castd_frame_reader_free(castd_frame_reader *reader) {
    free(reader->body);
    reader->body = NULL;
    reader->header_len = 0;
    reader->body_len = 0;
    reader->body_got = 0;
}

int castd_frame_reader_partial(const castd_frame_reader *reader) {
    return reader->header_len > 0;
}

int castd_frame_reader_feed(castd_frame_reader *reader, const uint8_t *data, size_t len,
                            size_t *consumed, uint8_t **frame, size_t *frame_len) {
    size_t used = 0;
    *frame = NULL;
    *frame_len = 0;
    if (reader->refused) {
        *consumed = 0;
        return CASTD_FRAME_TOO_BIG;
    }
    while (used < len) {
        if (reader->header_len < 4) {
            size_t take = 4 - reader->header_len;
            if (take > len - used) take = len - used;
            memcpy(reader->header + reader->header_len, data + used, take);
            reader->header_len += take;
            used += take;
            if (reader->header_len < 4) break;
            uint32_t length = ((uint32_t)reader->header[0] << 24) |
                              ((uint32_t)reader->header[1] << 16) |
                              ((uint32_t)reader->header[2] << 8) | (uint32_t)reader->header[3];
            if ((size_t)length > reader->max_frame) {
                /* Refused before allocating anything for it. */
                reader->refused = length ? length : 1;
                *consumed = used;
                return CASTD_FRAME_TOO_BIG;
            }
            reader->body_len = length;
            reader->body_got = 0;
            /* malloc(0) may return NULL: always ask for at least one byte. */
            reader->body = malloc(length ? length : 1);
            if (!reader->body) {
                *consumed = used;
                return CASTD_FRAME_NO_MEMORY;
            }
        }
        size_t take = reader->body_len - reader->body_got;
        if (take > len - used) take = len - used;
        if (take) memcpy(reader->body + reader->body_got, data + used, take);
        reader->body_got += take;
        used += take;
        if (reader->body_got == reader->body_len) {
            *frame = reader->body;
            *frame_len = reader->body_len;
            reader->body = NULL;
            reader->header_len = 0;
            reader->body_len = 0;
            reader->body_got = 0;
            *consumed = used;
            return CASTD_FRAME_READY;
        }
    }
    *consumed = used;
    return CASTD_FRAME_NEED_MORE;
}
