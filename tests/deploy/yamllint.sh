#!/bin/bash
# kaas-test-timeout: 120
# The Kubernetes manifests pass yamllint with its default rules, warnings
# included (-s): deploy/kubernetes and its cluster-dir component.
. "$KAAS_TOP_SRCDIR/tests/lib.sh"
command -v yamllint >/dev/null 2>&1 || kaas_skip "yamllint is not installed (scripts/setup installs it)"
files=$(find "$KAAS_TOP_SRCDIR/deploy/kubernetes" -name '*.yaml' | sort)
[ "$(echo "$files" | wc -l)" -ge 6 ] || kaas_fail "expected the manifests in deploy/kubernetes, found: $files"
# shellcheck disable=SC2086 # one file per word
yamllint -s -d default $files || kaas_fail "yamllint finds problems in deploy/kubernetes"
echo "yamllint: $(echo "$files" | wc -l) manifests clean"
