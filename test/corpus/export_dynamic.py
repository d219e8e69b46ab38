"""Exports the dynamic-shape models of the corpus to test/corpus/dynamic/: models whose input dims
are dim_params, exported by torch as a user exports them.

Not part of the project's dependencies: it runs in a venv that has torch,

    python3 -m venv .corpus-venv
    .corpus-venv/bin/pip install torch==2.13.0 onnx onnxscript transformers
    .corpus-venv/bin/python test/corpus/export_dynamic.py

- `yolo_style.onnx.gz`: a YOLOv8-style detector (Conv-BN-SiLU backbone with a C2f block, an
  upsample-and-concat neck, a decoupled head on two levels whose anchors and strides are computed
  from the feature maps' own height and width, distribution-focal box decoding), images
  [1, 3, h, w] with h and w as dim_params, exported by the TorchScript exporter (opset 17) with
  seeded random weights, stored whole (it is small).
- `scripted_control.onnx.gz`: a scripted (torch.jit.script) model with a data-dependent branch
  (a gate on the input's mean picks one of two MLP paths) and a loop whose trip count is a graph
  input (`steps` refinements of a recurrent state), exported by the TorchScript exporter as ONNX
  If and Loop.
- `vad_style.onnx.gz`: a voice-activity-style streaming model: one frame and the recurrent state
  in, a speech probability and the next state out; an If on the frame's energy updates the state
  (a GRU-like cell) or lets it decay, as exported VAD models do. A caller feeds the state back.
- `hf_bert.onnx.gz`: transformers' BertModel (a small configuration: 2 layers, hidden 32, 2 heads,
  seeded random weights, nothing downloaded) exported with batch and sequence as dynamic axes, as a
  user exports it: the architecture nobody here wrote, with the shape chains its own code makes.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import onnx
import torch
from torch import nn

HERE = Path(__file__).parent / "dynamic"


class Conv(nn.Module):
    def __init__(self, c_in: int, c_out: int, k: int = 3, s: int = 1):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.cv1, self.cv2 = Conv(c, c), Conv(c, c)

    def forward(self, x):
        return x + self.cv2(self.cv1(x))


class C2f(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.c = c_out // 2
        self.cv1 = Conv(c_in, 2 * self.c, 1)
        self.m = Bottleneck(self.c)
        self.cv2 = Conv(3 * self.c, c_out, 1)

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.append(self.m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class Detect(nn.Module):
    def __init__(self, nc: int, channels: tuple[int, ...], strides: tuple[int, ...], reg_max: int = 4):
        super().__init__()
        self.nc, self.reg_max, self.strides = nc, reg_max, strides
        self.no = nc + 4 * reg_max
        self.box = nn.ModuleList(nn.Sequential(Conv(c, 16), nn.Conv2d(16, 4 * reg_max, 1)) for c in channels)
        self.cls = nn.ModuleList(nn.Sequential(Conv(c, 16), nn.Conv2d(16, nc, 1)) for c in channels)
        self.register_buffer("proj", torch.arange(reg_max, dtype=torch.float32))

    def forward(self, feats):
        outs = [torch.cat((b(x), c(x)), 1) for x, b, c in zip(feats, self.box, self.cls)]
        anchors, strides = [], []
        for x, stride in zip(outs, self.strides):
            h, w = x.shape[2], x.shape[3]
            sy = torch.arange(h, dtype=torch.float32) + 0.5
            sx = torch.arange(w, dtype=torch.float32) + 0.5
            gy, gx = torch.meshgrid(sy, sx, indexing="ij")
            anchors.append(torch.stack((gx, gy), -1).view(-1, 2))
            strides.append(torch.full((h * w, 1), float(stride)))
        anchor = torch.cat(anchors).transpose(0, 1)
        stride = torch.cat(strides).transpose(0, 1)
        batch = outs[0].shape[0]
        x = torch.cat([o.view(batch, self.no, -1) for o in outs], 2)
        box, cls = x.split((4 * self.reg_max, self.nc), 1)
        a = box.shape[2]
        dist = box.view(batch, 4, self.reg_max, a).transpose(2, 1).softmax(1)
        dist = (dist * self.proj.view(1, -1, 1, 1)).sum(1)
        lt, rb = dist.chunk(2, 1)
        x1y1, x2y2 = anchor.unsqueeze(0) - lt, anchor.unsqueeze(0) + rb
        xywh = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1)
        return torch.cat((xywh * stride, cls.sigmoid()), 1)


class YoloStyle(nn.Module):
    def __init__(self, nc: int = 3):
        super().__init__()
        self.stem = nn.Sequential(Conv(3, 8, 3, 2), Conv(8, 16, 3, 2), C2f(16, 16))
        self.p3 = nn.Sequential(Conv(16, 32, 3, 2), C2f(32, 32))
        self.p4 = nn.Sequential(Conv(32, 48, 3, 2), C2f(48, 48))
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest")
        self.n3 = C2f(48 + 32, 32)
        self.down = Conv(32, 32, 3, 2)
        self.n4 = C2f(32 + 48, 48)
        self.detect = Detect(nc, (32, 48), (8, 16))

    def forward(self, images):
        p3 = self.p3(self.stem(images))
        p4 = self.p4(p3)
        n3 = self.n3(torch.cat((self.up(p4), p3), 1))
        n4 = self.n4(torch.cat((self.down(n3), p4), 1))
        return self.detect([n3, n4])


class ScriptedControl(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 8)
        self.down = nn.Linear(8, 8)
        self.cell = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
        if bool(x.mean() > 0):  # noqa: SIM108 - the branch TorchScript exports as an ONNX If
            h = torch.relu(self.up(x))
        else:
            h = torch.tanh(self.down(x)) * 2.0
        for _ in range(int(steps)):
            h = torch.tanh(self.cell(h)) + h
        return h


class VadStyle(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Linear(16, 8)
        self.gate = nn.Linear(16, 8)
        self.update = nn.Linear(16, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, frame: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if bool(frame.abs().mean() > 0.5):
            joined = torch.cat((torch.relu(self.encode(frame)), state), 1)
            z = torch.sigmoid(self.gate(joined))
            state = z * state + (1.0 - z) * torch.tanh(self.update(joined))
        else:
            state = state * 0.9
        return torch.sigmoid(self.head(state)), state


def export(name: str, model, args, inputs, outputs, dynamic_axes) -> None:
    """`model` (an nn.Module, or a scripted one) exported by the TorchScript exporter to
    `<name>.onnx.gz`, checked and stored whole."""
    buffer = io.BytesIO()
    torch.onnx.export(
        model,
        args,
        buffer,
        input_names=inputs,
        output_names=outputs,
        dynamic_axes=dynamic_axes,
        opset_version=17,
        dynamo=False,
    )
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto)
    HERE.mkdir(exist_ok=True)
    (HERE / f"{name}.onnx.gz").write_bytes(gzip.compress(proto.SerializeToString(), mtime=0))
    ops = sorted({n.op_type for n in proto.graph.node})
    print(f"{name}: {len(proto.graph.node)} nodes: {', '.join(ops)}")


def export_hf_bert() -> None:
    from transformers import BertConfig, BertModel

    torch.manual_seed(3)
    config = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )

    class ByName(nn.Module):  # the inputs by keyword, as a user calls the model
        def __init__(self):
            super().__init__()
            self.bert = BertModel(config)

        def forward(self, input_ids, attention_mask):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
            return out.last_hidden_state, out.pooler_output

    model = ByName().eval()
    ids = torch.randint(0, 100, (2, 8))
    axes = {0: "batch", 1: "seq"}
    export(
        "hf_bert",
        model,
        (ids, torch.ones(2, 8, dtype=torch.int64)),
        ["input_ids", "attention_mask"],
        ["last_hidden_state", "pooler_output"],
        {"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes, "pooler_output": {0: "batch"}},
    )


def main() -> None:
    torch.manual_seed(0)
    model = YoloStyle().eval()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):  # trained-looking statistics, not the identity
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    export(
        "yolo_style",
        model,
        (torch.randn(1, 3, 64, 96),),
        ["images"],
        ["detections"],
        {"images": {2: "h", 3: "w"}, "detections": {2: "anchors"}},
    )
    torch.manual_seed(1)
    export(
        "scripted_control",
        torch.jit.script(ScriptedControl().eval()),
        (torch.randn(2, 8), torch.tensor(3)),
        ["x", "steps"],
        ["h"],
        {"x": {0: "batch"}, "h": {0: "batch"}},
    )
    torch.manual_seed(2)
    export(
        "vad_style",
        torch.jit.script(VadStyle().eval()),
        (torch.randn(1, 16), torch.zeros(1, 8)),
        ["frame", "state"],
        ["speech", "next_state"],
        {},
    )

    export_hf_bert()


if __name__ == "__main__":
    main()
