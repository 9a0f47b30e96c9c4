# tests/deploy: the Kubernetes manifests, the Containerfile and the Grafana
# dashboard (deploy/) against what kaasd and the README say.
DEPLOY_TESTS = tests/deploy/yamllint.sh tests/deploy/manifest_flags.sh \
	tests/deploy/probes.sh tests/deploy/grafana.sh tests/deploy/containerfile.sh \
	tests/deploy/kustomize.sh
TESTS += $(DEPLOY_TESTS)
EXTRA_DIST += $(DEPLOY_TESTS) tests/deploy/deploy-lib.sh tests/deploy/metric-names.txt \
	deploy Containerfile .dockerignore
