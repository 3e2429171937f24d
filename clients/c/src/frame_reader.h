/* The frame reader: bytes in (in any chunks), whole length-prefixed frame bodies out.
 * Internal to libcastd-client; the fuzzer drives it without a socket. */
#ifndef CASTD_FRAME_READER_H
#define CASTD_FRAME_READER_H

#include <stddef.h>
#include <stdint.h>

typedef struct castd_frame_reader {
    size_t max_frame;   /* largest body accepted */
    uint8_t header[4];
    size_t header_len;  /* bytes of the header read so far */
    uint8_t *body;      /* allocated once the header is whole and accepted */
    size_t body_len;    /* the header's length */
    size_t body_got;
    uint32_t refused;   /* the refused length, once feed returned CASTD_FRAME_TOO_BIG */
} castd_frame_reader;

enum {
    CASTD_FRAME_NEED_MORE = 0, /* every byte given was taken; no whole frame yet */
    CASTD_FRAME_READY = 1,     /* *frame is a whole body (malloc'd, the caller frees it) */
    CASTD_FRAME_TOO_BIG = -1,  /* a length over max_frame: nothing allocated; the stream is dead */
    CASTD_FRAME_NO_MEMORY = -2
};

void castd_frame_reader_init(castd_frame_reader *reader, size_t max_frame);
void castd_frame_reader_free(castd_frame_reader *reader);

/* Takes bytes from data[0..len) until a frame is whole or the bytes run out; *consumed says how
 * many it took. Returns one of the values above. On READY, *frame / *frame_len are the body
 * (frame is non-NULL even for an empty body). After TOO_BIG the reader takes nothing more. */
int castd_frame_reader_feed(castd_frame_reader *reader, const uint8_t *data, size_t len,
                            size_t *consumed, uint8_t **frame, size_t *frame_len);

/* True when the reader holds part of a frame (a header or body begun and not finished). */
int castd_frame_reader_partial(const castd_frame_reader *reader);

#endif
