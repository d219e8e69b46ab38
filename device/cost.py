"""Timing model of one task on a modeled Ascend chip, from the task's work and the target file only.

A task of `block_dim` blocks runs each block on one core (one AIC + r AIVs for a cube+vector kernel
on a separated-core chip, r = vector_core / cube_core). A block streams its share of the bytes in
tiles through a double-buffered pipeline: load (MTE2), compute (Cube, Vector, Cube->Vector hand-off),
store (MTE3). Its time is `max(stage) + (sum(stage) - max(stage)) / tiles`: the slowest stage plus
one tile's fill and drain. HBM bytes also flow through a shared pipe: a block given `b` bytes/s of
HBM cannot finish before `hbm_bytes / b`. Formulas and sources: docs/device_model.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

from ge.device.cluster import all_reduce_plan, bandwidth_bound
from ge.device.work import TaskWork, dtype_bytes
from ge.target import Target, load_target

INF = math.inf


# --------------------------------------------------------------------------------------------------
# Target numbers


@dataclass(frozen=True)
class Hardware:
    """A target as the timing model reads it: the target file's numbers (`spec`, in the file's units) and
    what the model derives from them (core counts per pool, per-core transfer rates in bytes/s)."""

    spec: Target

    @classmethod
    def of(cls, target: Target | str | Hardware) -> Hardware:
        """The hardware of a loaded target, of a known target's name, or `target` itself."""
        if isinstance(target, Hardware):
            return target
        return cls(load_target(target) if isinstance(target, str) else target)

    # -- cores ------------------------------------------------------------------------------------

    @property
    def cube_cores(self) -> int:
        """Cores with a Cube unit (every AI Core on a unified-core chip)."""
        cores = self.spec.cores
        return cores.cube_core if cores.separated_cube_vector else cores.ai_core

    @property
    def vector_cores(self) -> int:
        """Cores with a Vector unit (every AI Core on a unified-core chip)."""
        cores = self.spec.cores
        return cores.vector_core if cores.separated_cube_vector else cores.ai_core

    @property
    def vec_per_block(self) -> int:
        """AIVs that join one AIC in a cube+vector block (1 on a unified-core chip)."""
        return max(1, self.vector_cores // self.cube_cores) if self.spec.cores.separated_cube_vector else 1

    @property
    def pools(self) -> dict[str, int]:
        """Cores per pool a block can take: AIC and AIV (separated chip) or AI Core, AI CPU, DMA engine."""
        cores = self.spec.cores
        pools = (
            {"aic": cores.cube_core, "aiv": cores.vector_core}
            if cores.separated_cube_vector
            else {"aicore": cores.ai_core}
        )
        pools["aicpu"] = cores.ai_cpu
        pools["dma"] = self.spec.dma.engines
        pools["hccl"] = 1  # the chip's links: one collective at a time (HCCL runs them in order)
        return pools

    # -- per-core transfer rates, bytes/s (the file gives bytes per cycle) -------------------------

    @property
    def ddr_rate(self) -> float:
        return self.spec.mte.ddr * self.spec.cores.clock_hz

    @property
    def l2_read_rate(self) -> float:
        return self.spec.mte.l2_read * self.spec.cores.clock_hz

    @property
    def l2_write_rate(self) -> float:
        return self.spec.mte.l2_write * self.spec.cores.clock_hz

    @property
    def l0c_to_ub_rate(self) -> float:
        return self.spec.mte.l0c_to_ub * self.spec.cores.clock_hz

    @property
    def store_rate(self) -> float:
        """UB -> HBM."""
        return self.spec.mte.ub_to_ddr * self.spec.cores.clock_hz

    # -- rates ------------------------------------------------------------------------------------

    def cube_macs_per_cycle(self, dtype: str) -> float:
        """MACs per cycle per Cube unit: 16x16x16 for 2-byte floats, k doubled for 1-byte types
        (int8), quadrupled for 4-bit, times fp32_ratio for 4- and 8-byte types."""
        cube = self.spec.cube
        m, k, n = cube.m, cube.k, cube.n
        size = dtype_bytes(dtype)
        if size <= 0.5:
            return m * cube.int4_k * n
        if size <= 1:
            return m * cube.int8_k * n
        if size <= 2:
            return m * k * n
        return m * k * n * cube.fp32_ratio

    def vector_lanes(self, dtype: str) -> float:
        """Elements per cycle per Vector unit: fp16 lanes for types of at most 2 bytes, fp32 lanes for
        4-byte types, half that for 8-byte types."""
        size = dtype_bytes(dtype)
        if size <= 2:
            return self.spec.vector.fp16_lanes
        if size <= 4:
            return self.spec.vector.fp32_lanes
        return self.spec.vector.fp32_lanes / 2

    def vector_cycles(self, work: TaskWork) -> float:
        """Vector-unit cycles of the whole task (summed over cores); a layout conversion at the
        kernel's boundary is Vector work unless the MTE converts on the move."""
        ops = work.vector_elems + self.spec.vector.transcendental_cost * work.transcendental_elems
        if not self.spec.mte.nd_nz_on_the_move:
            ops += work.moved_layout_elems
        return ops / self.vector_lanes(work.dtype)

    def cube_cycles(self, work: TaskWork) -> float:
        """Cycles of the task's Cube work at the rate the Cube sustains (`[cube] sustained` of the
        nominal rate, measured on large matrix products)."""
        return work.cube_macs / (self.cube_macs_per_cycle(work.dtype) * self.spec.cube.sustained)

    def need(self, engine: str) -> dict[str, int]:
        """Cores of each pool one block of `engine` occupies."""
        if engine == "aicpu":
            return {"aicpu": 1}
        if engine == "dma":
            return {"dma": 1}
        if engine == "hccl":
            return {"hccl": 1}
        if not self.spec.cores.separated_cube_vector:
            return {"aicore": 1}
        if engine == "cube":
            return {"aic": 1}
        if engine == "vector":
            return {"aiv": 1}
        return {"aic": 1, "aiv": self.vec_per_block}  # cube+vector

    def max_blocks(self, engine: str) -> int:
        """Blocks of `engine` that can run at once on the whole chip."""
        return min(self.pools[p] // c for p, c in self.need(engine).items())


# --------------------------------------------------------------------------------------------------
# One block


def _unique(tensors) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tensors:
        out[t.name] = max(out.get(t.name, 0), int(t.nbytes))
    return out


@dataclass(frozen=True)
class BlockCost:
    """Per-block quantities of a task (bandwidth independent); `body(b)` gives a block's time when
    it is allotted `b` bytes/s of HBM."""

    engine: str
    blocks: int
    overhead_s: float
    tiles: float  # tiles per block (bytes / tile size, at least 1)
    cube_s: float  # Cube pipe time of one block
    vector_s: float  # Vector pipe time of one block (its AIVs work in parallel)
    c2v_write_s: float  # Cube -> Vector hand-off, producer side (L0C->UB on 910, AIC->L2 on 910B)
    c2v_read_s: float  # consumer side (AIVs read from L2 on 910B; 0 on 910)
    compute_s: float  # AI CPU compute of one block (0 for AI Core / DMA)
    hbm_in: float  # bytes per block read from HBM
    l2_in: float  # bytes per block read from L2 (resident inputs)
    out: float  # bytes per block written (through to HBM)
    read_rate: float  # per-core rate of HBM reads
    l2_rate: float  # per-core rate of L2 reads
    store_rate: float  # per-block rate of stores
    hbm_read_bytes: int  # whole task
    hbm_write_bytes: int
    l2_read_bytes: int

    @property
    def hbm(self) -> float:
        """HBM bytes per block (reads not served by L2, plus all writes)."""
        return self.hbm_in + self.out

    def stages(self, b: float) -> dict[str, float]:
        """Stage times of one block at `b` bytes/s of HBM (`hbm` is the shared-pipe bound, not a stage)."""
        load = self.hbm_in / min(self.read_rate, b) if self.hbm_in else 0.0
        load += self.l2_in / self.l2_rate if self.l2_in else 0.0
        store = self.out / min(self.store_rate, b) if self.out else 0.0
        return {
            "mte2": load,
            "cube": self.cube_s,
            "c2v": self.c2v_write_s + self.c2v_read_s,
            "vector": self.vector_s,
            "mte3": store,
            "compute": self.compute_s,
            "hbm": self.hbm / b if self.hbm else 0.0,
        }

    def body(self, b: float) -> float:
        """Time of one block (without the task overhead) at `b` bytes/s of HBM."""
        st = self.stages(b)
        if self.engine == "aicpu":  # a CPU core computes and moves data in turn
            return st["compute"] + st["mte2"] + st["mte3"]
        if self.engine == "dma":  # a copy streams: the slowest of read, write and the HBM pipe
            return max(st["mte2"] + st["mte3"], st["hbm"])
        if self.engine == "hccl":  # the links' steps, or the buffer's HBM traffic when it is slower
            return max(st["compute"], st["hbm"])
        pipe = (st["mte2"], st["cube"], self.c2v_write_s, self.c2v_read_s, st["vector"], st["mte3"])
        # the slowest resource (a stage, or the shared HBM pipe, which never exceeds sum(pipe)) plus
        # the rest of one tile: n = 1 gives the sum (no overlap), n -> inf the slowest
        slowest = max(max(pipe), st["hbm"])
        return slowest + max(0.0, sum(pipe) - slowest) / self.tiles

    def fill(self, b: float) -> float:
        """The fill/drain part of `body(b)`."""
        st = self.stages(b)
        if self.engine in ("aicpu", "dma", "hccl"):
            return 0.0
        pipe = (st["mte2"], st["cube"], self.c2v_write_s, self.c2v_read_s, st["vector"], st["mte3"])
        return max(0.0, sum(pipe) - max(max(pipe), st["hbm"])) / self.tiles

    def consumption(self, b: float) -> float:
        """HBM bytes/s one block actually moves when allotted `b` (never more than `b`)."""
        if not self.hbm:
            return 0.0
        t = self.body(b)
        return self.hbm / t if t > 0 else b

    @property
    def demand(self) -> float:
        """HBM bytes/s one block moves when HBM is not the limit."""
        return self.consumption(INF)


class _SharedFields(TypedDict):
    """The BlockCost fields every engine computes alike (engine, blocks and traffic)."""

    engine: str
    blocks: int
    hbm_in: float
    l2_in: float
    out: float
    hbm_read_bytes: int
    hbm_write_bytes: int
    l2_read_bytes: int


def block_cost(work: TaskWork, target, l2_hits: frozenset[str] | set[str] = frozenset()) -> BlockCost:
    """Per-block cost of `work` on `target`; inputs named in `l2_hits` are read from L2."""
    hw = Hardware.of(target)
    work.check()
    common = _shared_fields(work, l2_hits)
    if work.engine == "aicpu":
        return _aicpu_block_cost(work, hw, common)
    if work.engine == "dma":
        return _dma_block_cost(hw, common)
    if work.engine == "hccl":
        return _hccl_block_cost(work, hw, common)
    return _core_block_cost(work, hw, common)


def _shared_fields(work: TaskWork, l2_hits: frozenset[str] | set[str]) -> _SharedFields:
    """Engine, blocks and traffic of `work`: totals in bytes and per-block shares."""
    B = work.block_dim
    ins, outs = _unique(work.inputs), _unique(work.outputs)
    l2_bytes = sum(n for name, n in ins.items() if name in l2_hits)
    hbm_read = sum(ins.values()) - l2_bytes + work.reread_bytes
    write = sum(outs.values())
    return _SharedFields(
        engine=work.engine,
        blocks=B,
        hbm_in=hbm_read / B,
        l2_in=l2_bytes / B,
        out=write / B,
        hbm_read_bytes=hbm_read,
        hbm_write_bytes=write,
        l2_read_bytes=l2_bytes,
    )


def _aicpu_block_cost(work: TaskWork, hw: Hardware, common: _SharedFields) -> BlockCost:
    """An AI CPU task: all its operations at the CPU's flop rate, traffic at its bandwidth."""
    ops = 2 * work.cube_macs + work.vector_elems + hw.spec.vector.transcendental_cost * work.transcendental_elems
    return BlockCost(
        overhead_s=hw.spec.aicpu.task_device_s,
        tiles=1.0,
        cube_s=0.0,
        vector_s=0.0,
        c2v_write_s=0.0,
        c2v_read_s=0.0,
        compute_s=ops / common["blocks"] / hw.spec.aicpu.flops_per_s,
        read_rate=hw.spec.aicpu.bandwidth,
        l2_rate=hw.spec.aicpu.bandwidth,
        store_rate=hw.spec.aicpu.bandwidth,
        **common,
    )


def _dma_block_cost(hw: Hardware, common: _SharedFields) -> BlockCost:
    """A DMA task: no compute, traffic at the DMA engine's bandwidth."""
    return BlockCost(
        overhead_s=hw.spec.dma.task_device_s,
        tiles=1.0,
        cube_s=0.0,
        vector_s=0.0,
        c2v_write_s=0.0,
        c2v_read_s=0.0,
        compute_s=0.0,
        read_rate=hw.spec.dma.bandwidth,
        l2_rate=hw.spec.dma.bandwidth,
        store_rate=hw.spec.dma.bandwidth,
        **common,
    )


def _hccl_block_cost(work: TaskWork, hw: Hardware, common: _SharedFields) -> BlockCost:
    """A collective: its algorithm's steps on the cluster's links (`compute_s`, the alpha-beta-gamma
    time), while it reads its buffer from HBM and writes the result back, competing with the
    kernels for HBM bandwidth."""
    plan = all_reduce_plan(hw.spec.cluster, work.replicas, sum(_unique(work.inputs).values()))
    return BlockCost(
        overhead_s=0.0,  # the steps' latencies (alpha) are its overhead
        tiles=1.0,
        cube_s=0.0,
        vector_s=0.0,
        c2v_write_s=0.0,
        c2v_read_s=0.0,
        compute_s=plan.seconds,
        read_rate=INF,
        l2_rate=INF,
        store_rate=INF,
        **common,
    )


def _core_block_cost(work: TaskWork, hw: Hardware, common: _SharedFields) -> BlockCost:
    """A Cube, Vector or cube+vector task on the AI Cores."""
    B = work.block_dim
    r = hw.vec_per_block if work.engine == "cube+vector" else 1
    cube_s = hw.cube_cycles(work) / B / hw.spec.cores.clock_hz
    vector_s = hw.vector_cycles(work) / B / hw.spec.cores.clock_hz / r
    c2v_w, c2v_r = _cube_to_vector_times(work, hw, r)
    return BlockCost(
        overhead_s=hw.spec.overheads.task_device_s,
        tiles=_tiles(work, hw, common),
        cube_s=cube_s,
        vector_s=vector_s,
        c2v_write_s=c2v_w,
        c2v_read_s=c2v_r,
        compute_s=0.0,
        read_rate=hw.ddr_rate,
        l2_rate=hw.l2_read_rate,
        # stores of a separated cube+vector block are issued by its r AIVs
        store_rate=hw.store_rate * r,
        **common,
    )


def _cube_to_vector_times(work: TaskWork, hw: Hardware, r: int) -> tuple[float, float]:
    """Per-block (write, read) seconds of handing the Cube's result to the block's `r` Vector units."""
    c2v = work.cube_to_vector_bytes / work.block_dim
    if work.engine != "cube+vector" or not c2v:
        return 0.0, 0.0
    if hw.spec.cores.separated_cube_vector:  # AIC writes its result to L2, the block's AIVs read it back
        return c2v / hw.l2_write_rate, c2v / (hw.l2_read_rate * r)
    return c2v / hw.l0c_to_ub_rate, 0.0  # one core: L0C -> UB on chip


def _tiles(work: TaskWork, hw: Hardware, common: _SharedFields) -> float:
    """Tiles a block streams through, per dependent step.

    A tile of double-buffered staging is half the buffer it lives in (UB for a Vector kernel; L1 for
    the Cube's inputs and L0C for its results; a fused epilogue works on the Cube's result tiles, so a
    cube+vector kernel tiles as its Cube part). The count is kept fractional (bytes / tile, at least 1)
    so that more bytes never make a task faster. A kernel of `serial_steps` dependent steps overlaps
    its stages only within a step: its tiles are shared out among the steps, each at least one tile
    (a step's loads, Cube and Vector work then run one after another).
    """
    in_blk = common["hbm_in"] + common["l2_in"]
    out = common["out"]
    tiles = (
        (in_blk + out) / (hw.spec.buffers.ub / 2)
        if work.engine == "vector"
        else max(in_blk / (hw.spec.buffers.l1 / 2), out / (hw.spec.buffers.l0c / 2))
    )
    return max(1.0, tiles / work.serial_steps)


def hbm_level(groups: list[tuple[BlockCost, int]], bandwidth: float) -> float:
    """The per-block HBM allotment cap λ shared by running blocks (`groups` of (cost, blocks)).

    Every block is allotted λ; a block moves `consumption(λ) <= λ`. λ is infinite when the blocks'
    unconstrained demands fit `bandwidth`, else the λ at which their consumption sums to it
    (found by bisection; consumption is non-decreasing in λ)."""
    active = [(c, k) for c, k in groups if c.hbm and k]
    if not active:
        return INF
    if sum(c.demand * k for c, k in active) <= bandwidth:
        return INF
    lo = bandwidth / sum(k for _, k in active)  # every block consumes <= λ: total <= bandwidth
    hi = max(c.demand for c, _ in active) * 2 + lo
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if sum(c.consumption(mid) * k for c, k in active) > bandwidth:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo


# --------------------------------------------------------------------------------------------------
# One task


@dataclass(frozen=True)
class Phases:
    """Time of one task run alone on `cores` cores with a share of HBM. Stage times are those of one
    core over the task's waves (what a profiler's per-core pipe counters would see)."""

    total_s: float  # overhead + body
    overhead_s: float  # per-task device overhead
    body_s: float  # all waves of blocks
    cube_s: float
    vector_s: float
    mte2_s: float  # loads (HBM at the allotted rate, L2 hits at L2 rate)
    mte3_s: float  # stores
    c2v_s: float  # Cube -> Vector hand-off
    compute_s: float  # AI CPU compute
    hbm_s: float  # the task's HBM bytes at its allotted bandwidth
    fill_s: float  # pipeline fill/drain (part of body_s)
    cores: int  # blocks running at once
    waves: int  # ceil(block_dim / cores)
    tiles: float  # tiles per block (fractional: bytes / tile size, at least 1)
    hbm_read_bytes: int
    hbm_write_bytes: int
    l2_read_bytes: int
    bound_s: float  # roofline of the task on the whole chip

    def ratio(self, stage: str) -> float:
        return getattr(self, f"{stage}_s") / self.total_s if self.total_s > 0 else 0.0


def task_bound(work: TaskWork, target, hbm_bytes: float | None = None) -> float:
    """Roofline of one task on the whole chip: max(Cube work at peak, Vector work at peak, HBM
    bytes at full bandwidth) (AI CPU: its compute over all AI CPUs; DMA: all channels)."""
    hw = Hardware.of(target)
    if hbm_bytes is None:
        hbm_bytes = sum(_unique(work.inputs).values()) + sum(_unique(work.outputs).values())
    mem = hbm_bytes / hw.spec.hbm.bandwidth
    if work.engine == "aicpu":
        ops = 2 * work.cube_macs + work.vector_elems + hw.spec.vector.transcendental_cost * work.transcendental_elems
        return max(mem, ops / (hw.spec.aicpu.flops_per_s * hw.spec.cores.ai_cpu))
    if work.engine == "dma":
        moved = sum(_unique(work.inputs).values()) + sum(_unique(work.outputs).values())
        return max(mem, moved / (hw.spec.dma.bandwidth * hw.spec.dma.engines))
    if work.engine == "hccl":
        return max(mem, bandwidth_bound(hw.spec.cluster, work.replicas, sum(_unique(work.inputs).values())))
    cube = hw.cube_cycles(work) / hw.spec.cores.clock_hz / hw.cube_cores
    vector = hw.vector_cycles(work) / hw.spec.cores.clock_hz / hw.vector_cores
    return max(cube, vector, mem)


def task_time(
    work: TaskWork, target, cores: int, hbm_share: float = 1.0, l2_hits: frozenset[str] | set[str] = frozenset()
) -> Phases:
    """Time of `work` run alone on `cores` cores (blocks at once; capped by block_dim and the chip)
    with `hbm_share` (0 < share <= 1) of the HBM bandwidth; inputs in `l2_hits` are read from L2."""
    hw = Hardware.of(target)
    if not 0 < hbm_share <= 1:
        raise ValueError(f"task '{work.name}': hbm_share {hbm_share} not in (0, 1]")
    bc = block_cost(work, hw, l2_hits)
    p = max(1, min(int(cores), work.block_dim, hw.max_blocks(work.engine)))
    full, rem = divmod(work.block_dim, p)
    bw = hbm_share * hw.spec.hbm.bandwidth
    waves_list = [(p, full)] + ([(rem, 1)] if rem else [])
    acc = {k: 0.0 for k in ("body", "mte2", "mte3", "hbm", "fill")}
    for k, count in waves_list:
        b = hbm_level([(bc, k)], bw)
        st = bc.stages(b)
        acc["body"] += count * bc.body(b)
        acc["mte2"] += count * st["mte2"]
        acc["mte3"] += count * st["mte3"]
        acc["hbm"] += count * st["hbm"]
        acc["fill"] += count * bc.fill(b)
    waves = full + (1 if rem else 0)
    return Phases(
        total_s=bc.overhead_s + acc["body"],
        overhead_s=bc.overhead_s,
        body_s=acc["body"],
        cube_s=bc.cube_s * waves,
        vector_s=bc.vector_s * waves,
        mte2_s=acc["mte2"],
        mte3_s=acc["mte3"],
        c2v_s=(bc.c2v_write_s + bc.c2v_read_s) * waves,
        compute_s=bc.compute_s * waves,
        hbm_s=(bc.hbm_read_bytes + bc.hbm_write_bytes) / bw,
        fill_s=acc["fill"],
        cores=p,
        waves=waves,
        tiles=bc.tiles,
        hbm_read_bytes=bc.hbm_read_bytes,
        hbm_write_bytes=bc.hbm_write_bytes,
        l2_read_bytes=bc.l2_read_bytes,
        bound_s=task_bound(work, hw, bc.hbm_read_bytes + bc.hbm_write_bytes),
    )
