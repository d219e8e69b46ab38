"""The collective's cost on the modeled cluster: HCCL's algorithm per topology, its alpha-beta-gamma
time never below the alpha-beta terms of its algorithm nor below the algorithm-independent
bandwidth bound, also when the collective is simulated beside kernels that load the HBM."""

from __future__ import annotations

import pytest
from device_cases import raw, vector_task

from ge.device import SimTask, TaskWork
from ge.device import cluster as cluster_model
from ge.device.cluster import all_reduce_plan, bandwidth_bound
from ge.device.simulator import simulate
from ge.target import load_target

TARGETS = ("ascend910", "ascend910b")
SIZES = (256, 1 << 20, 25 << 20, 100 << 20, 500 << 20)


def collective(nbytes: int, replicas: int, name: str = "/data_parallel/bucket.0") -> TaskWork:
    return TaskWork(name, "hcom_all_reduce", "hccl", "f32", 0, 0, 0, (raw(f"{name}:in", nbytes, "f32"),),
                    (raw(f"{name}:out", nbytes, "f32"),), replicas=replicas)  # fmt: skip


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("replicas", [2, 4, 8, 16])
def test_the_modeled_time_is_never_below_the_bounds(target, replicas):
    c = load_target(target).cluster
    for n in SIZES:
        plan = all_reduce_plan(c, replicas, n)
        assert plan.seconds >= plan.alpha_beta_s >= bandwidth_bound(c, replicas, n) > 0, (replicas, n)


@pytest.mark.parametrize("target", TARGETS)
def test_simulated_beside_hbm_heavy_kernels_it_is_never_faster(target):
    """The simulator times the collective from the plan; kernels competing for HBM only slow it."""
    c = load_target(target).cluster
    for replicas in (2, 8, 16):
        n = 25 << 20
        loads = [
            SimTask(vector_task(f"/v{i}", 64 << 20, 64 << 20, elems=1 << 20, block_dim=24), 0, 0) for i in range(4)
        ]
        tasks = [SimTask(collective(n, replicas), 1, 0), *loads]
        result = simulate(tasks, target)
        taken = result.tasks[0].end - result.tasks[0].start
        plan = all_reduce_plan(c, replicas, n)
        assert taken >= plan.alpha_beta_s * (1 - 1e-9)
        assert taken >= plan.seconds * (1 - 1e-9)
        assert result.tasks[0].task_type == "HCCL"


def test_hccl_picks_the_algorithm_by_topology():
    c910, c910b = load_target("ascend910").cluster, load_target("ascend910b").cluster
    assert all_reduce_plan(c910, 4, 1 << 20).algorithm == "mesh"  # one HCCS group of 4
    assert all_reduce_plan(c910, 8, 1 << 20).algorithm == "mesh+ring"  # two groups, over PCIe
    assert all_reduce_plan(c910, 16, 1 << 20).algorithm == "mesh+ring+H-D_R"  # two servers
    assert all_reduce_plan(c910b, 8, 1 << 20).algorithm == "mesh"  # one HCCS mesh of 8
    assert all_reduce_plan(c910b, 16, 1 << 20).algorithm == "mesh+H-D_R"
    assert all_reduce_plan(c910, 6, 1 << 20).algorithm == "ring"  # no such shape: a ring at the slowest link


def test_the_alpha_beta_terms_are_hccls_formulas():
    """Ring over p: 2(p-1) a + 2((p-1)/p) n b; mesh of p: 2 a + 2 (n/p) b (the cann-hccl docs)."""
    c = load_target("ascend910").cluster
    n = 64 << 20
    mesh = all_reduce_plan(c, 4, n)
    assert mesh.alpha_beta_s == pytest.approx(2 * c.hccs_latency_s + 2 * (n / 4) / c.hccs_bandwidth)
    ring = all_reduce_plan(c, 6, n)
    assert ring.alpha_beta_s == pytest.approx(10 * c.inter_group_latency_s + 2 * (5 / 6) * n / c.inter_group_bandwidth)


# -- mutations -------------------------------------------------------------------------------------


def test_mutation_a_collective_without_its_transfer_term_is_caught(monkeypatch):
    """A mesh whose steps forgot the bytes (latency only) falls below the bandwidth bound."""
    real = cluster_model._mesh

    def latency_only(p, n, link, gamma, where):
        return real(p, 0.0, link, gamma, where)

    monkeypatch.setattr(cluster_model, "_mesh", latency_only)
    for target in TARGETS:
        c = load_target(target).cluster
        plan = all_reduce_plan(c, 4, 100 << 20)
        assert plan.alpha_beta_s < bandwidth_bound(c, 4, 100 << 20)
