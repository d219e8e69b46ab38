"""What a target file holds: one frozen dataclass per TOML table, one field per key, named as in the file.

The field types are the schema the loader (`ge.target.loader`) checks every file against: a key the
classes do not name, a key they name that the file lacks, or a value of another type is an error.
The meaning and source of each number is written next to it in the TOML files (target/*.toml).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Cores:
    ai_core: int
    cube_core: int
    vector_core: int
    ai_cpu: int
    separated_cube_vector: bool
    clock_hz: float


@dataclass(frozen=True)
class Cube:
    m: int
    k: int
    n: int
    int4_k: int
    int8_k: int
    fp32_ratio: float
    sustained: float
    """The share of the nominal MAC rate the Cube sustains on large matrix products (measured)."""


@dataclass(frozen=True)
class Vector:
    fp16_lanes: int
    fp32_lanes: int
    transcendental_cost: float
    tile_bytes: int
    """Output bytes one Vector block takes at least (a kernel asks for no more blocks than slabs)."""
    transdata_5hd_bits: int
    """The widest element, in bits, the Vector's TransDataTo5HD (vnchwconv) converts between NCHW
    and NC1HWC0 in the UB: a kernel with Vector work converts such an input or result itself."""


@dataclass(frozen=True)
class Buffers:
    """Bytes per core (l2: shared by all cores)."""

    l0a: int
    l0b: int
    l0c: int
    l1: int
    ub: int
    l2: int
    ub_block: int
    """The Unified Buffer's block: data moves in and out of the UB in whole 32-byte blocks."""


@dataclass(frozen=True)
class Hbm:
    bytes: int
    bandwidth: float
    alignment: int
    """Every device buffer starts and ends on this many bytes (GE's memory alignment)."""


@dataclass(frozen=True)
class Mte:
    """Transfer rates, bytes per cycle per core."""

    ddr: float
    l2_read: float
    l2_write: float
    l1_to_l0a: float
    l1_to_l0b: float
    l1_to_ub: float
    l0c_to_ub: float
    ub_to_l2: float
    ub_to_ddr: float
    ub_to_l1: float
    nd_nz_on_the_move: bool
    """The MTE converts between ND and FRACTAL_NZ while it moves data (ND2NZ on load, NZ2ND on
    store), so a kernel reads or writes the other format without a TransData kernel."""


@dataclass(frozen=True)
class Overheads:
    task_device_s: float


@dataclass(frozen=True)
class Host:
    launch_s: float
    shape_infer_s: float
    """Host shape inference of one op at run time (dynamic-shape execution)."""
    tiling_s: float
    """Host tiling of one op at run time (dynamic-shape execution)."""
    d2h_read_s: float
    """The host reading a small value (a condition, a trip count) back from the device."""


@dataclass(frozen=True)
class Events:
    record_s: float
    wait_s: float
    label_s: float
    """A label task (LabelSwitchByIndex, LabelGoto) of control flow sunk to the device."""


@dataclass(frozen=True)
class Aicpu:
    flops_per_s: float
    bandwidth: float
    task_device_s: float


@dataclass(frozen=True)
class Dma:
    engines: int
    bandwidth: float
    task_device_s: float


@dataclass(frozen=True)
class Cluster:
    """The modeled training cluster: servers of chips, the links between chips and what a
    collective costs on them (the alpha-beta-gamma model: a message of n bytes over a link costs
    latency + n / bandwidth, reducing it n / reduce_bandwidth)."""

    servers: int
    """Servers in the modeled cluster."""
    chips_per_server: int
    hccs_group: int
    """Chips fully meshed by HCCS inside a server (the 910's two groups of 4, the 910B's one of 8)."""
    hccs_bandwidth: float
    """Bytes/s one way over one HCCS link between two chips of a group."""
    hccs_latency_s: float
    inter_group_bandwidth: float
    """Bytes/s one way between the HCCS groups of one server, per chip."""
    inter_group_latency_s: float
    roce_bandwidth: float
    """Bytes/s one way of a chip's RoCE port to the other servers."""
    roce_latency_s: float
    reduce_bandwidth: float
    """Bytes/s at which a chip adds a received buffer into its own (gamma: the reduction's compute)."""

    @property
    def chips(self) -> int:
        return self.servers * self.chips_per_server


@dataclass(frozen=True)
class Target:
    """One chip: `load_target("ascend910b").buffers.ub` is the 910B's Unified Buffer in bytes."""

    name: str
    source: str
    cores: Cores
    cube: Cube
    vector: Vector
    buffers: Buffers
    hbm: Hbm
    mte: Mte
    overheads: Overheads
    host: Host
    events: Events
    aicpu: Aicpu
    dma: Dma
    cluster: Cluster
