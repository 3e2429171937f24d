"""Where castd's socket is when the caller does not say."""

from __future__ import annotations

import os
from collections.abc import Mapping

SYSTEM_SOCKET = "/run/castd/castd.sock"


def resolve_socket_path(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The socket to connect to.

    ``explicit`` if given (and not empty); else ``$CASTD_SOCKET`` if set and not empty; else, with
    ``$XDG_RUNTIME_DIR`` set and not empty, ``$XDG_RUNTIME_DIR/castd/castd.sock`` — unless that does
    not exist and /run/castd/castd.sock does, then the latter; else /run/castd/castd.sock.
    """
    if explicit:
        return explicit
    env = os.environ if environ is None else environ
    from_env = env.get("CASTD_SOCKET", "")
    if from_env:
        return from_env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime:
        user_socket = os.path.join(runtime, "castd", "castd.sock")
        if not os.path.exists(user_socket) and os.path.exists(SYSTEM_SOCKET):
            return SYSTEM_SOCKET
        return user_socket
    return SYSTEM_SOCKET
