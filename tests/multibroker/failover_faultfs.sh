#!/bin/bash
# failover.sh with each of the three brokers on its own faultfs host view
# (close-to-open caching, silly-rename, ESTALE between hosts).
MB_ON_FAULTFS=1 exec bash "$KAAS_TOP_SRCDIR/tests/multibroker/failover.sh"
