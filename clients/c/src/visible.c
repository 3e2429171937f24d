/* libcastd-client: text from castd made safe to print on a terminal (castd_visible). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The length of the valid UTF-8 sequence at `s` (1…4), or 0 if none starts there. Overlong
 * forms, surrogates and values past U+10FFFF are not valid. */
size_t castd_utf8_length(const unsigned char *s) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

size_t castd_visible(const char *text, char *buffer, size_t size) {
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t total = 0, written = 0;
    bool fits = buffer && size > 0;
    while (*s) {
        char piece[8];
        size_t piece_len, take = castd_utf8_length(s);
        if (take == 1 && *s != '\n' && *s != '\t' && (*s < 0x20 || *s == 0x7F)) {
            snprintf(piece, sizeof piece, "\\u%04x", (unsigned)*s); /* C0, DEL */
            piece_len = 6;
        } else if (take == 2 && s[0] == 0xC2 && s[1] < 0xA0) {
            snprintf(piece, sizeof piece, "\\u%04x", (unsigned)s[1]); /* C1: U+0080…U+009F */
            piece_len = 6;
        } else if (take == 0) {
            memcpy(piece, "\xEF\xBF\xBD", 3); /* a byte that is not UTF-8: U+FFFD */
            piece_len = 3;
            take = 1;
        } else {
            memcpy(piece, s, take);
            piece_len = take;
        }
        /* Only whole pieces are written: no escape or character is cut in two. */
        if (fits && written + piece_len < size) {
            memcpy(buffer + written, piece, piece_len);
            written += piece_len;
        } else {
            fits = false;
        }
        total += piece_len;
        s += take;
    }
    if (buffer && size > 0) buffer[written] = '\0';
    return total;
}
