# The substrate conformance suite, on a POSIX directory here; the nfs and
# faultfs tests run the same binary against their URLs.
check_PROGRAMS += tests/conformance/conformance
TESTS += tests/conformance/conformance tests/conformance/substrate_check_cli.sh \
	tests/conformance/substrate_check_peer.sh
EXTRA_DIST += tests/conformance/substrate_check_cli.sh tests/conformance/substrate_check_peer.sh
tests_conformance_conformance_SOURCES = tests/conformance/conformance.c
