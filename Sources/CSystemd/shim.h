#ifndef CASTD_CSYSTEMD_SHIM_H
#define CASTD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
