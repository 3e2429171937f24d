"""python3 -m castd: see castd._cli."""

from castd._cli import main

raise SystemExit(main())
