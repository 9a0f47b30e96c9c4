# tests/tools: kaasctl, the operator CLI (status, groups, verify, dump-log,
# trash) against volumes kaasd wrote: on a directory, on 2 brokers, and over
# nfs:// (skips without the NFS test server).
KAASCTL_TESTS = tests/tools/kaasctl_verify.sh tests/tools/kaasctl_groups_dump.sh \
	tests/tools/kaasctl_status.sh tests/tools/kaasctl_nfs.sh
TESTS += $(KAASCTL_TESTS)
EXTRA_DIST += $(KAASCTL_TESTS) tests/tools/kaasctl-lib.sh
