#ifndef CASTD_CSYSTEMD_SHIM_H
#define CASTD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
// castd passes CODE_FILE, CODE_LINE and CODE_FUNC of the Swift log statement itself; without this,
// sd-journal.h would make sd_journal_sendv a macro adding this header's location.
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>
// cast-mpris: D-Bus (sd-bus) on libsystemd's event loop (sd-event). Only the functions that take
// no C varargs are usable from Swift; CastMPRIS builds every message from the basic ones.
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
// The eventfd that wakes cast-mpris's sd-event loop for work from other threads (Glibc's module
// has no sys/eventfd.h).
#include <sys/eventfd.h>
#endif
