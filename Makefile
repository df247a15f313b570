# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED ?= ../shared

.PHONY: demo test lint typecheck unit slow bench mutation clean image envtest kubectl etcdctl upstream kwok

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	@echo "== render examples/kubevirt.yaml (with observed runtime inputs)"
	$(BIN)/tenantctl render -f examples/kubevirt.yaml --observed examples/observed-kubevirt.yaml > $(VENV)/kubevirt.rendered.yaml
	@echo "== render examples/proxmox.yaml (with observed runtime inputs)"
	$(BIN)/tenantctl render -f examples/proxmox.yaml --observed examples/observed-proxmox.yaml > $(VENV)/proxmox.rendered.yaml
	@echo "== validate both examples against the bundled core schemas$(if $(wildcard $(SHARED)/crds), and the CRDs in $(SHARED)/crds,)"
	$(BIN)/tenantctl validate -f examples/kubevirt.yaml --observed examples/observed-kubevirt.yaml $(if $(wildcard $(SHARED)/crds),--crds $(SHARED)/crds,)
	$(BIN)/tenantctl validate -f examples/proxmox.yaml --observed examples/observed-proxmox.yaml $(if $(wildcard $(SHARED)/crds),--crds $(SHARED)/crds,)
	@echo "== audit: no credential reaches a tenant"
	$(BIN)/tenantctl audit -f examples/proxmox.yaml --observed examples/observed-proxmox.yaml
	@echo "== provider packages for examples/platform.yaml (planning mode: no components directory)"
	$(BIN)/tenantctl providers render -f examples/platform.yaml > $(VENV)/providers.rendered.yaml
	@echo "== rendered objects: $(VENV)/kubevirt.rendered.yaml $(VENV)/proxmox.rendered.yaml $(VENV)/providers.rendered.yaml"
	@echo "== run tenantctl yourself: $(BIN)/tenantctl --help (or: . $(BIN)/activate; tenantctl --help)"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/hadolint Containerfile

# The operator image, tagged with the reference `tenantctl install` renders (the package version).
image: $(VENV)/.installed
	@builder=; for b in podman docker buildah; do \
		if command -v $$b >/dev/null && $$b info >/dev/null 2>&1; then builder=$$b; break; fi; done; \
	if [ -z "$$builder" ]; then echo "make image: no working container builder (podman, docker or buildah); skipped"; exit 0; fi; \
	tag=$$($(BIN)/python -c 'from tenantctl.operator.install.objects import DEFAULT_IMAGE; print(DEFAULT_IMAGE)'); \
	case "$$builder" in *buildah) set -- bud ;; *) set -- build ;; esac; \
	echo "$$builder $$1 -f Containerfile -t $$tag ."; "$$builder" "$$1" -f Containerfile -t "$$tag" .

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy src

unit: $(VENV)/.installed-dev
	$(BIN)/pytest -q -m "not slow"

# The real control plane the real-API tier (tests/real) runs on: kube-apiserver, kube-controller-manager and
# etcd built from their Go modules (hack/envtest, pinned by go.mod/go.sum) into a cache outside the clone,
# keyed by version. Prints the directory; a cached run takes seconds, the first build ~10 minutes on 2 cores.
envtest:
	@bash hack/envtest/build.sh

# kubectl of the same Kubernetes release (hack/kubectl, its own pins and cache), for the test that runs
# docs/getting-started.md's commands. ~1 min the first time with envtest's Go cache warm; cached, instant.
kubectl:
	@bash hack/kubectl/build.sh

# etcdctl of the real control plane's etcd release (hack/etcdctl, its own pins and cache): `tenantctl backup`
# exports and imports a tenant's keys with it, and the backup tests run it against the real etcd.
etcdctl:
	@bash hack/etcdctl/build.sh

# The upstream managers (hack/upstream: Cluster API core, the in-cluster IPAM provider, CABPT) built from their
# Go modules into a cache keyed by their pins, as envtest; then capmox, Kamaji and Kamaji's provider, which the
# module proxy does not serve, from their trees (build-sources.sh: ../shared/upstream-src's archives, SHA-256
# checked, else a clone at the pinned tag). tests/real/test_upstream_*.py run them beside the real API server.
# First build ~6 min with the envtest build's Go cache warm, plus the source builds; cached, instant.
upstream:
	@bash hack/upstream/build.sh
	@TENANTCTL_SHARED=$(abspath $(SHARED)) bash hack/upstream/build-sources.sh

# KWOK v0.8.0 and kube-scheduler of the envtest release (hack/kwok, its own pins and cache): the nodes and the
# scheduler that make the Pods of Kamaji's control-plane Deployment Running in tests/real/test_upstream_kamaji.py.
# First build ~1.5 min with envtest's Go cache warm; cached, instant.
kwok:
	@bash hack/kwok/build.sh

# `slow` tests are deselected, not skipped: a skip in this summary always means something is missing.
# In TEST_WORKERS pytest-xdist workers, each taking the next test as it frees (worksteal): most of the suite
# waits on the processes it drives, so three workers on two cores beat two (414 s against 820 s serial; four
# took 436 s). Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): every
# `tenantctl` the tests start would otherwise compile its modules again, a quarter second each start.
TEST_WORKERS ?= 3
test: lint typecheck envtest kubectl etcdctl upstream kwok $(VENV)/.installed-dev
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -m "not slow" -n $(TEST_WORKERS) --dist worksteal

slow: $(VENV)/.installed-dev
	$(BIN)/pytest -q -m slow

# Mutation testing (CPU-heavy, not part of `make test`; docs/testing.md keeps the scores). First the promise
# mutants (benchmarks/promise_mutants.toml: hand-written, every one must be killed); then mutmut generates the
# mutants and maps tests to functions (its run of one audit mutant), and a seeded sample per area is checked
# against the area's suites and scored (benchmarks/mutation_scores.py).
mutation: $(VENV)/.installed-dev
	TENANTCTL_SHARED=$(abspath $(SHARED)) $(BIN)/python benchmarks/promise_mutants.py
	TENANTCTL_SHARED=$(abspath $(SHARED)) $(BIN)/mutmut run "tenantctl.audit.x_credential_values__mutmut_1" || test -s mutants/mutmut-stats.json
	$(BIN)/python benchmarks/mutation_scores.py sample | TENANTCTL_SHARED=$(abspath $(SHARED)) $(BIN)/python benchmarks/mutation_scores.py run
	$(BIN)/python benchmarks/mutation_scores.py report

# Issue 41's figures (benchmarks/bench.py runs each step whatever the one before answered, then lists every
# target judged): render and cold starts, backup, then 1000 tenants on the real kube-apiserver and the floor
# under its create figure, on kopf and without it (about nine minutes on 2 cores, seeding the world through
# the API three times a third of it), then 10,000 tenants over 8 shards on the emulators (about ten minutes
# more, 5 GiB for the emulators' process), then `make test` timed with its caches warm (about four). Exits 1
# when any step exited non-zero: a missed target (the 10,000-tenant run's time against 561 s is judged but
# never fails it: a figure of another machine) or a failure; 128+N when signal N stopped it (130 on Ctrl-C),
# its summary printed all the same. `--skip KEY` leaves steps out when run by hand.
bench: envtest $(VENV)/.installed-dev
	TENANTCTL_SHARED=$(abspath $(SHARED)) $(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache mutants
