# tests/deploy: the Kubernetes manifests, the Containerfile and the Grafana
# dashboard (deploy/) against what kaasd and the README say.
DEPLOY_TESTS = tests/deploy/yamllint.sh tests/deploy/manifest_flags.sh \
	tests/deploy/probes.sh tests/deploy/grafana.sh tests/deploy/containerfile.sh \
	tests/deploy/kustomize.sh
# The manifests, dashboard and Containerfile are text: checked once, in the
# normal suite (the sanitizer suite runs kaasd's code, which probes.sh
# exercises no differently from the rest of the suite).
if !SANITIZERS
TESTS += $(DEPLOY_TESTS)
endif
EXTRA_DIST += $(DEPLOY_TESTS) tests/deploy/deploy-lib.sh tests/deploy/metric-names.txt \
	deploy Containerfile .dockerignore
