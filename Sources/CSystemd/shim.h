#ifndef CASTD_CSYSTEMD_SHIM_H
#define CASTD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
// castd passes CODE_FILE, CODE_LINE and CODE_FUNC of the Swift log statement itself; without this,
// sd-journal.h would make sd_journal_sendv a macro adding this header's location.
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>
#endif
