"""What an AllReduce costs on the modeled cluster: HCCL's algorithms in the alpha-beta-gamma model.

A step that sends n bytes over a link costs `alpha + n / bandwidth` (the link's latency and
bandwidth, target `[cluster]`), and adding n received bytes into a buffer `n / reduce_bandwidth`
(gamma). The replicas fill the cluster server by server and, inside a server, HCCS group by group.
HCCL chooses the algorithm from the topology (its docs: Mesh inside an HCCS full mesh, Ring or
H-D_R between servers); the AllReduce is hierarchical, as HCCL runs it across levels:

- one HCCS group (p <= hccs_group): mesh, every chip exchanging a 1/p share with each peer at once
  over its own link: reduce-scatter `a + (n/p) b + ((p-1)/p) n g`, all-gather `a + (n/p) b`;
- more: reduce-scatter in the group (mesh), then the group's shards all-reduced across the groups
  of a server (ring over the inter-group link) and across servers (RoCE: recursive
  halving-doubling when the server count is a power of two, HCCL's default on the 910, else ring),
  then all-gathered back down the same levels.

Ring all-reduce over p: `2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g`; H-D_R over p (a power of two):
`2 log2(p) a + 2((p-1)/p) n b + ((p-1)/p) n g` (cann-hccl docs). Replica counts that fill no such
shape (6 chips of a 910 server) run a ring over all of them at the slowest link the ring crosses.

`bandwidth_bound` is the algorithm-independent floor: every chip must send 2((p-1)/p) n bytes
through all its links together, and n bytes must cross every cut between two halves of the
replicas (each side needs the other's sum); no schedule beats it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ge.target.spec import Cluster


@dataclass(frozen=True)
class Phase:
    """One step of a collective on one kind of link (every chip of the level runs it at once)."""

    what: str  # e.g. "reduce-scatter, mesh of 4 over HCCS"
    link: str  # "hccs", "inter_group", "roce"
    alpha_s: float
    beta_s: float
    gamma_s: float
    bytes_per_link: float  # bytes one link carries one way

    @property
    def seconds(self) -> float:
        return self.alpha_s + self.beta_s + self.gamma_s


@dataclass(frozen=True)
class CollectivePlan:
    """An AllReduce of `nbytes` over `replicas` chips: the algorithm and its phases in order."""

    algorithm: str
    replicas: int
    nbytes: int
    phases: tuple[Phase, ...]

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.phases)

    @property
    def alpha_beta_s(self) -> float:
        """The latency and transfer terms alone (the algorithm's alpha-beta time)."""
        return sum(p.alpha_s + p.beta_s for p in self.phases)


@dataclass(frozen=True)
class _Link:
    name: str
    bandwidth: float
    latency_s: float


def _links(cluster: Cluster) -> dict[str, _Link]:
    return {
        "hccs": _Link("hccs", cluster.hccs_bandwidth, cluster.hccs_latency_s),
        "inter_group": _Link("inter_group", cluster.inter_group_bandwidth, cluster.inter_group_latency_s),
        "roce": _Link("roce", cluster.roce_bandwidth, cluster.roce_latency_s),
    }


def _mesh(p: int, n: float, link: _Link, gamma: float, where: str) -> list[Phase]:
    share = n / p
    return [
        Phase(f"reduce-scatter, mesh of {p} {where}", link.name, link.latency_s, share / link.bandwidth,
              (p - 1) / p * n / gamma, share),
        Phase(f"all-gather, mesh of {p} {where}", link.name, link.latency_s, share / link.bandwidth, 0.0, share),
    ]  # fmt: skip


def _ring(p: int, n: float, link: _Link, gamma: float, where: str) -> tuple[Phase, Phase]:
    moved = (p - 1) / p * n
    return (
        Phase(f"reduce-scatter, ring of {p} {where}", link.name, (p - 1) * link.latency_s, moved / link.bandwidth,
              moved / gamma, moved),
        Phase(f"all-gather, ring of {p} {where}", link.name, (p - 1) * link.latency_s, moved / link.bandwidth, 0.0,
              moved),
    )  # fmt: skip


def _halving_doubling(p: int, n: float, link: _Link, gamma: float, where: str) -> tuple[Phase, Phase]:
    moved = (p - 1) / p * n
    steps = math.log2(p)
    return (
        Phase(f"reduce-scatter, halving-doubling of {p} {where}", link.name, steps * link.latency_s,
              moved / link.bandwidth, moved / gamma, moved),
        Phase(f"all-gather, halving-doubling of {p} {where}", link.name, steps * link.latency_s,
              moved / link.bandwidth, 0.0, moved),
    )  # fmt: skip


def _is_power_of_two(k: int) -> bool:
    return k > 0 and k & (k - 1) == 0


def all_reduce_plan(cluster: Cluster, replicas: int, nbytes: int) -> CollectivePlan:
    """HCCL's AllReduce of `nbytes` on each of `replicas` chips (see the module docstring)."""
    if replicas < 1 or replicas > cluster.chips:
        raise ValueError(f"{replicas} replicas on a cluster of {cluster.chips} chips")
    links = _links(cluster)
    gamma = cluster.reduce_bandwidth
    n = float(nbytes)
    if replicas == 1:
        return CollectivePlan("none", 1, nbytes, ())
    group = cluster.hccs_group
    server = cluster.chips_per_server
    if replicas <= group:
        return CollectivePlan("mesh", replicas, nbytes, tuple(_mesh(replicas, n, links["hccs"], gamma, "over HCCS")))
    groups = min(replicas, server) // group
    servers = replicas // server if replicas >= server else 1
    if replicas % group or (replicas > server and replicas % server):
        slowest = links["roce"] if replicas > server else links["inter_group"]
        return CollectivePlan("ring", replicas, nbytes, _ring(replicas, n, slowest, gamma, f"over {slowest.name}"))
    down: list[Phase] = []
    up = _mesh(group, n, links["hccs"], gamma, "over HCCS")
    up, down = [up[0]], [up[1]]
    shard = n / group
    names = ["mesh"]
    if groups > 1:
        rs, ag = _ring(groups, shard, links["inter_group"], gamma, "across the server's HCCS groups")
        up.append(rs)
        down.insert(0, ag)
        shard /= groups
        names.append("ring")
    if servers > 1:
        make = _halving_doubling if _is_power_of_two(servers) else _ring
        rs, ag = make(servers, shard, links["roce"], gamma, "across servers over RoCE")
        up.append(rs)
        down.insert(0, ag)
        names.append("H-D_R" if make is _halving_doubling else "ring")
    return CollectivePlan("+".join(names), replicas, nbytes, tuple(up + down))


def bandwidth_bound(cluster: Cluster, replicas: int, nbytes: int) -> float:
    """No AllReduce schedule is faster (see the module docstring): one link latency plus the larger
    of a chip's sends over all its links and the bytes that must cross the narrowest cut."""
    if replicas <= 1:
        return 0.0
    group = min(replicas, cluster.hccs_group)
    in_server = min(replicas, cluster.chips_per_server)
    servers = math.ceil(replicas / cluster.chips_per_server)
    egress = (group - 1) * cluster.hccs_bandwidth
    cuts = []
    if in_server > group:
        egress += cluster.inter_group_bandwidth
        cuts.append(nbytes / (group * cluster.inter_group_bandwidth))
    if servers > 1:
        egress += cluster.roce_bandwidth
        cuts.append(nbytes / (in_server * cluster.roce_bandwidth))
    latency = min(cluster.hccs_latency_s, cluster.inter_group_latency_s, cluster.roce_latency_s)
    return latency + max([2 * (replicas - 1) / replicas * nbytes / egress, *cuts])
