# tests/multibroker: several kaasd processes on one shared directory.
check_PROGRAMS += tests/multibroker/mbclient
tests_multibroker_mbclient_SOURCES = tests/multibroker/mbclient.c
tests_multibroker_mbclient_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS)
tests_multibroker_mbclient_LDADD = $(RDKAFKA_LIBS)
MULTIBROKER_TESTS = tests/multibroker/failover.sh tests/multibroker/controller.sh \
	tests/multibroker/zombie.sh \
	tests/multibroker/failover_faultfs.sh tests/multibroker/coordinator.sh \
	tests/multibroker/recreate_faults.sh \
	tests/multibroker/selffence.sh tests/multibroker/dup_id.sh tests/multibroker/full_volume.sh \
	tests/multibroker/metadata_lag.sh tests/multibroker/kill9_group.sh \
	tests/multibroker/recreate_offsets.sh tests/multibroker/autocreate_race.sh \
	tests/multibroker/offline_retry.sh tests/multibroker/corrupt_assignment.sh \
	tests/multibroker/paused_controller.sh tests/multibroker/selffence_order.sh \
	tests/multibroker/selffence_slow_round.sh \
	tests/multibroker/check_acked_cases.sh
TESTS += $(MULTIBROKER_TESTS)
# Re-creating topics under racing brokers: the sanitizer suite runs the same
# paths with faults in recreate_faults.sh, so the plain run is normal-only.
if !SANITIZERS
TESTS += tests/multibroker/recreate.sh
endif
EXTRA_DIST += tests/multibroker/recreate.sh
EXTRA_DIST += $(MULTIBROKER_TESTS) tests/multibroker/mb-lib.sh tests/multibroker/check_acked.sh
# A topic config changed through one broker, applied by another.
TESTS += tests/multibroker/topic_config_follow.sh
EXTRA_DIST += tests/multibroker/topic_config_follow.sh
# ACLs made through one broker, enforced by another (kafka-python's admin
# client; normal suite only: the ACL code is in the sanitizer suite through
# tests/security).
if !SANITIZERS
TESTS += tests/multibroker/acl_follow.sh
endif
EXTRA_DIST += tests/multibroker/acl_follow.sh tests/multibroker/acl_follow.py
# The partition admin APIs answered by the partition's leader only (issue 15).
TESTS += tests/multibroker/admin_leader.sh
EXTRA_DIST += tests/multibroker/admin_leader.sh
# Two admins changing one topic document through two brokers (issue 33):
# neither change lost, a stale grow refused, a re-created topic's document
# left alone; POSIX and fault+.
TESTS += tests/multibroker/topic_doc_race.sh
EXTRA_DIST += tests/multibroker/topic_doc_race.sh tests/multibroker/topic_doc_admin.py
# A coordinator that takes slots over finds their groups (issue 33):
# Empty and listed after a failover and a restart, a deleted group Dead.
TESTS += tests/multibroker/group_state_failover.sh
EXTRA_DIST += tests/multibroker/group_state_failover.sh tests/multibroker/group_state.py
# A broker on a volume it cannot write refuses to start (issue 33).
TESTS += tests/multibroker/unwritable_volume.sh
EXTRA_DIST += tests/multibroker/unwritable_volume.sh
# A coordinator taking a group over with a stale "no such name" for groups/
# cached on its host still answers the committed offsets (chaos seed 1).
TESTS += tests/multibroker/group_offsets_negcache.sh
EXTRA_DIST += tests/multibroker/group_offsets_negcache.sh
