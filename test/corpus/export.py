"""Exports the corpus of real architectures (torchvision, timm, transformers) to test/corpus/models/.

Not part of the project's dependencies: it runs in a separate venv that has torch,

    python3 -m venv .corpus-venv
    .corpus-venv/bin/pip install torch==2.14.1 torchvision==0.29.1 timm transformers onnx onnxscript onnxruntime
    .corpus-venv/bin/python test/corpus/export.py [--only resnet18,bert] [--list]

Every architecture is built in a small configuration (a few layers, tiny widths, 28-128 px images,
batch 1, 8-token sequences) with seeded random weights (nothing is downloaded: transformers models
come from Config objects), and exported with the TorchScript exporter (opset 17) or the dynamo one
(opset 18), as its entry says. An architecture that does not export is skipped with the reason printed.

What is stored, per model, is `<name>.onnx.gz`: the graph with every float initializer of more than
64 elements removed and described instead, in the metadata entry "ge.corpus" (JSON), by its name,
dims, dtype, mean and std (and whether it was non-negative); weights.py (beside this file) draws
them again from those, for bench/corpus.py and the tests. A tensor of such size with std 0 (zeros,
ones, a constant layer scale) is recorded with std 0.02 around its mean, so regenerated weights are
never constant; a float tensor of two distinct values (a mask) stays stored as it is, and so do
small and integer tensors. The records are then calibrated on the drawn tensors (`calibrated`), so
that a drawn model is well conditioned. The same entry holds the library, family, exporter and
opset, and for every integer input its value range [low, high).
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import weights  # beside this file: the draws bench/corpus.py makes too

OUT = Path(__file__).resolve().parent / "models"
LARGE = 64
"""Float initializers of more elements than this are stored as records, not values."""
REDRAW_STD = 0.02
SEQ = 8
VOCAB = 100


@dataclass(frozen=True)
class Input:
    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    high: int | None = None  # integer inputs: values in [low, high)
    low: int = 0

    def tensor(self, generator: torch.Generator) -> torch.Tensor:
        if self.high is not None:
            return torch.randint(self.low, self.high, self.shape, generator=generator, dtype=getattr(torch, self.dtype))
        return torch.randn(self.shape, generator=generator)


@dataclass(frozen=True)
class Spec:
    name: str
    library: str
    family: str
    build: Callable[[], torch.nn.Module]
    inputs: tuple[Input, ...]
    dynamo: bool = False
    kwargs: dict = field(default_factory=dict)


def image(size: int = 32, channels: int = 3) -> tuple[Input, ...]:
    return (Input("pixel_values", (1, channels, size, size)),)


def tokens(*extra: str, vocab: int = VOCAB) -> tuple[Input, ...]:
    inputs = [Input("input_ids", (1, SEQ), "int64", vocab)]
    for name in extra:
        if name in ("attention_mask", "decoder_attention_mask"):
            inputs.append(Input(name, (1, SEQ), "int64", 2, 1))  # all ones: no padding
        elif name == "token_type_ids":
            inputs.append(Input(name, (1, SEQ), "int64", 2))
        elif name == "decoder_input_ids":
            inputs.append(Input(name, (1, SEQ), "int64", vocab))
    return tuple(inputs)


# --------------------------------------------------------------------------------- torchvision


def tv(name: str, **kwargs) -> Callable[[], torch.nn.Module]:
    def build():
        import torchvision

        return torchvision.models.get_model(name, weights=None, **kwargs)

    return build


def tv_resnext():
    from torchvision.models.resnet import Bottleneck, ResNet

    return ResNet(Bottleneck, [1, 1, 1, 1], num_classes=10, groups=4, width_per_group=8)


def tv_densenet():
    from torchvision.models.densenet import DenseNet

    return DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, num_classes=10)


def tv_vit():
    from torchvision.models.vision_transformer import VisionTransformer

    return VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10
    )


def tv_swin():
    from torchvision.models.swin_transformer import SwinTransformer

    return SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4], num_classes=10
    )


def tv_swin_v2():
    from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformer, SwinTransformerBlockV2

    return SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4], num_classes=10,
        block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2,
    )  # fmt: skip


def tv_convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt

    return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10)


def tv_maxvit():
    from torchvision.models.maxvit import MaxVit

    return MaxVit(
        input_size=(32, 32), stem_channels=16, partition_size=2, block_channels=[16, 32], block_layers=[1, 1],
        head_dim=8, stochastic_depth_prob=0.0, num_classes=10,
    )  # fmt: skip


VIDEO = (Input("video", (1, 3, 4, 16, 16)),)


def tv_r3d():
    from torchvision.models.video.resnet import BasicBlock, BasicStem, Conv3DSimple, VideoResNet

    return VideoResNet(BasicBlock, [Conv3DSimple] * 4, [1, 1, 1, 1], BasicStem, num_classes=10)


def tv_swin3d():
    from torchvision.models.video.swin_transformer import SwinTransformer3d

    return SwinTransformer3d(
        patch_size=[2, 4, 4], embed_dim=16, depths=[1, 1], num_heads=[1, 2], window_size=[2, 2, 2], num_classes=10
    )


def tv_raft():
    import torchvision

    return Output(torchvision.models.optical_flow.raft_small(weights=None), -1, num_flow_updates=2)


def tv_segmentation(name: str):
    def build():
        import torchvision

        model = torchvision.models.get_model(name, weights=None, weights_backbone=None, num_classes=4)
        return Output(model, "out")

    return build


class Output(torch.nn.Module):
    """One tensor of a model that returns a dict, a tuple or a ModelOutput."""

    def __init__(self, model: torch.nn.Module, key, **call):
        super().__init__()
        self.model, self.key, self.call = model, key, call

    def forward(self, *args):
        out = self.model(*args, **self.call)
        return out[self.key]


# --------------------------------------------------------------------------------------- timm


def timm_model(name: str, **kwargs) -> Callable[[], torch.nn.Module]:
    def build():
        import timm

        return timm.create_model(name, pretrained=False, num_classes=10, **kwargs)

    return build


def timm_class(module: str, cls: str, **kwargs) -> Callable[[], torch.nn.Module]:
    """A timm model built from its class, for the small sizes the registered builders fix."""

    def build():
        import importlib

        timm_module = importlib.import_module(f"timm.models.{module}")
        resolved = {
            k: getattr(timm_module, v[1:]) if isinstance(v, str) and v.startswith("@") else v for k, v in kwargs.items()
        }
        return getattr(timm_module, cls)(num_classes=10, **resolved)

    return build


MIXER = dict(img_size=32, patch_size=8, num_blocks=2, embed_dim=32)
METAFORMER = dict(depths=(1, 1, 1, 1), dims=(16, 16, 32, 32))


# ------------------------------------------------------------------------------- transformers

SMALL = dict(
    vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
    max_position_embeddings=64,
)  # fmt: skip


class Keywords(torch.nn.Module):
    """A transformers model called with its inputs by name, returning one output tensor."""

    def __init__(self, model: torch.nn.Module, names: tuple[str, ...], key: str, **call):
        super().__init__()
        self.model, self.names, self.key, self.call = model, names, key, call

    def forward(self, *args):
        out = self.model(**dict(zip(self.names, args)), **self.call, return_dict=True)
        return out[self.key]


def hf(config_name: str, model_name: str, inputs: tuple[Input, ...], key: str, call: dict | None = None, **config):
    def build():
        import transformers

        cfg = getattr(transformers, config_name)(**config)
        cfg._attn_implementation = "eager"
        model = getattr(transformers, model_name)(cfg)
        return Keywords(model, tuple(i.name for i in inputs), key, **(call or {}))

    return build


def hf_spec(name: str, family: str, config_name: str, model_name: str, inputs, key, dynamo=False, call=None, **config):
    return Spec(name, "transformers", family, hf(config_name, model_name, inputs, key, call, **config), inputs, dynamo)


DECODER = dict(SMALL, num_key_value_heads=1)
NO_CACHE = {"use_cache": False}
AUDIO = (Input("input_values", (1, 400)),)

SPECS: list[Spec] = [
    # torchvision
    Spec("resnet18", "torchvision", "resnet", tv("resnet18", num_classes=10), image()),
    Spec("resnext", "torchvision", "resnet", tv_resnext, image()),
    Spec("regnet_x", "torchvision", "resnet", tv("regnet_x_400mf", num_classes=10), image(), dynamo=True),
    Spec("mobilenet_v2", "torchvision", "mobile", tv("mobilenet_v2", num_classes=10, width_mult=0.25), image()),
    Spec("mobilenet_v3_small", "torchvision", "mobile", tv("mobilenet_v3_small", num_classes=10), image(), dynamo=True),
    Spec("mnasnet", "torchvision", "mobile", tv("mnasnet0_5", num_classes=10), image()),
    Spec("squeezenet", "torchvision", "cnn", tv("squeezenet1_1", num_classes=10), image(64)),
    Spec("shufflenet_v2", "torchvision", "mobile", tv("shufflenet_v2_x0_5", num_classes=10), image()),
    Spec("efficientnet_b0", "torchvision", "mobile", tv("efficientnet_b0", num_classes=10), image(), dynamo=True),
    Spec("regnet_y", "torchvision", "resnet", tv("regnet_y_400mf", num_classes=10), image()),
    Spec("densenet", "torchvision", "cnn", tv_densenet, image()),
    Spec("googlenet", "torchvision", "cnn", tv("googlenet", num_classes=10, aux_logits=False, init_weights=True), image()),
    Spec("vit", "torchvision", "vit", tv_vit, image()),
    Spec("swin", "torchvision", "window", tv_swin, image()),
    Spec("swin_v2", "torchvision", "window", tv_swin_v2, image(), dynamo=True),
    Spec("convnext", "torchvision", "cnn", tv_convnext, image(), dynamo=True),
    Spec("maxvit", "torchvision", "window", tv_maxvit, image()),
    Spec("deeplabv3", "torchvision", "segmentation", tv_segmentation("deeplabv3_mobilenet_v3_large"), image()),
    Spec("lraspp", "torchvision", "segmentation", tv_segmentation("lraspp_mobilenet_v3_large"), image()),
    Spec("r3d", "torchvision", "video", tv_r3d, VIDEO),
    Spec("swin3d", "torchvision", "video", tv_swin3d, VIDEO, dynamo=True),
    Spec("inception_v3", "torchvision", "cnn", tv("inception_v3", num_classes=10, aux_logits=False, init_weights=True), image(80)),
    Spec("raft", "torchvision", "flow", tv_raft, (Input("image1", (1, 3, 128, 128)), Input("image2", (1, 3, 128, 128)))),
    # timm
    Spec("mixer", "timm", "mlp", timm_class("mlp_mixer", "MlpMixer", **MIXER), image()),
    Spec("resmlp", "timm", "mlp", timm_class("mlp_mixer", "MlpMixer", **MIXER, mlp_ratio=4, block_layer="@ResBlock", norm_layer="@Affine"), image()),
    Spec("gmlp", "timm", "mlp", timm_class("mlp_mixer", "MlpMixer", **MIXER, mlp_ratio=6, block_layer="@SpatialGatingBlock", mlp_layer="@GatedMlp"), image()),
    Spec("poolformer", "timm", "metaformer", timm_class("metaformer", "MetaFormer", **METAFORMER, downsample_norm=None, mlp_act=torch.nn.GELU, mlp_bias=True, norm_layers="@GroupNorm1", layer_scale_init_values=1e-5, res_scale_init_values=None, use_mlp_head=False), image()),
    Spec("convformer", "timm", "metaformer", timm_class("metaformer", "MetaFormer", **METAFORMER, token_mixers="@SepConv", norm_layers="@LayerNorm2dNoBias"), image(), dynamo=True),
    Spec("ghostnet", "timm", "mobile", timm_model("ghostnet_050"), image()),
    Spec("levit", "timm", "vit", timm_model("levit_128s", img_size=64, embed_dim=(32, 48, 64), key_dim=8, num_heads=(2, 2, 2), depth=(1, 1, 1)), image(64)),
    Spec("deit", "timm", "vit", timm_model("deit_tiny_patch16_224", img_size=32, patch_size=8, depth=2, embed_dim=32, num_heads=2), image()),
    Spec("cait", "timm", "vit", timm_model("cait_xxs24_224", img_size=32, patch_size=8, depth=2, embed_dim=32, num_heads=2, init_values=0.1), image(), dynamo=True),
    Spec("pit", "timm", "vit", timm_model("pit_ti_224", img_size=32, patch_size=4, stride=2, base_dims=[16, 16], depth=[1, 1], heads=[1, 2]), image()),
    Spec("convmixer", "timm", "cnn", timm_class("convmixer", "ConvMixer", dim=32, depth=2, kernel_size=3, patch_size=4), image()),
    Spec("rexnet", "timm", "mobile", timm_model("rexnet_100", width_mult=0.5), image()),
    Spec("mobilevit", "timm", "vit", timm_model("mobilevit_xxs"), image(64), dynamo=True),
    Spec("resnest", "timm", "resnet", timm_model("resnest14d", channels=(16, 32, 64, 128), stem_width=16), image()),
    Spec("skresnet", "timm", "resnet", timm_model("skresnet18", layers=[1, 1, 1, 1], channels=(16, 32, 64, 128)), image()),
    Spec("repvgg", "timm", "resnet", timm_model("repvgg_a0"), image()),
    Spec("beit", "timm", "vit", timm_model("beit_base_patch16_224", img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2), image()),
    Spec("xcit", "timm", "vit", timm_model("xcit_nano_12_p8_224", img_size=32, depth=2, embed_dim=32, num_heads=2), image()),
    Spec("tnt", "timm", "vit", timm_model("tnt_s_patch16_224", img_size=32, patch_size=8, embed_dim=32, inner_dim=8, depth=2, num_heads_outer=2), image()),
    Spec("twins", "timm", "window", timm_model("twins_svt_small", embed_dims=[16, 32, 64, 128], num_heads=[1, 2, 4, 8], depths=[1, 1, 1, 1], wss=[2, 2, 2, 1]), image(64)),
    Spec("edgenext", "timm", "metaformer", timm_model("edgenext_xx_small", depths=(1, 1, 1, 1), dims=(16, 32, 48, 64), heads=(2, 2, 2, 2)), image(64)),
    Spec("efficientvit", "timm", "vit", timm_model("efficientvit_m0", img_size=64, embed_dim=[16, 32, 48], depth=[1, 1, 1], num_heads=[2, 2, 2], window_size=[2, 2, 2]), image(64), dynamo=True),
    Spec("mobilenet_v4", "timm", "mobile", timm_model("mobilenetv4_conv_small"), image()),
    Spec("lcnet", "timm", "mobile", timm_model("lcnet_050"), image()),
    Spec("sequencer", "timm", "mlp", timm_model("sequencer2d_s", layers=[1, 1, 1, 1], embed_dims=[16, 32, 32, 32], hidden_sizes=[8, 16, 16, 16]), image()),
    Spec("volo", "timm", "vit", timm_class("volo", "VOLO", layers=(1, 1, 1, 1), embed_dims=(16, 32, 32, 32), num_heads=(1, 2, 2, 2), img_size=32, stem_hidden_dim=16), image(), dynamo=True),
    Spec("pvt_v2", "timm", "window", timm_model("pvt_v2_b0", depths=(1, 1, 1, 1), embed_dims=(16, 32, 32, 64), num_heads=(1, 2, 2, 4)), image(64)),
    Spec("eva", "timm", "vit", timm_model("eva02_tiny_patch14_224", img_size=28, patch_size=14, depth=2, embed_dim=32, num_heads=2), image(28), dynamo=True),
    Spec("focalnet", "timm", "metaformer", timm_class("focalnet", "FocalNet", depths=(1, 1, 1, 1), embed_dim=16), image()),
    Spec("fastvit", "timm", "mobile", timm_model("fastvit_t8", layers=(1, 1, 1, 1), embed_dims=(16, 32, 64, 128)), image(64)),
    # transformers
    hf_spec("bert", "encoder", "BertConfig", "BertModel", tokens("attention_mask", "token_type_ids"), "last_hidden_state", **SMALL),
    hf_spec("roberta", "encoder", "RobertaConfig", "RobertaModel", tokens("attention_mask"), "last_hidden_state", **SMALL),
    hf_spec("albert", "encoder", "AlbertConfig", "AlbertModel", tokens("attention_mask"), "last_hidden_state", embedding_size=16, **SMALL),
    hf_spec("electra", "encoder", "ElectraConfig", "ElectraModel", tokens("attention_mask"), "last_hidden_state", embedding_size=16, **SMALL),
    hf_spec("distilbert", "encoder", "DistilBertConfig", "DistilBertModel", tokens("attention_mask"), "last_hidden_state", vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64),
    hf_spec("deberta_v2", "encoder", "DebertaV2Config", "DebertaV2Model", tokens("attention_mask"), "last_hidden_state", dynamo=True, **SMALL),
    hf_spec("mpnet", "encoder", "MPNetConfig", "MPNetModel", tokens("attention_mask"), "last_hidden_state", **SMALL),
    hf_spec("gpt2", "decoder", "GPT2Config", "GPT2LMHeadModel", tokens("attention_mask"), "logits", call=NO_CACHE, vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=64),
    hf_spec("gpt_neo", "decoder", "GPTNeoConfig", "GPTNeoForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, vocab_size=VOCAB, hidden_size=32, num_layers=2, attention_types=[[["global", "local"], 1]], num_heads=2, max_position_embeddings=64, window_size=4),
    hf_spec("opt", "decoder", "OPTConfig", "OPTForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, ffn_dim=64, max_position_embeddings=64, word_embed_proj_dim=32),
    hf_spec("bloom", "decoder", "BloomConfig", "BloomForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=2),
    hf_spec("llama", "decoder", "LlamaConfig", "LlamaForCausalLM", tokens("attention_mask"), "logits", dynamo=True, call=NO_CACHE, **DECODER),
    hf_spec("mistral", "decoder", "MistralConfig", "MistralForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, **DECODER),
    hf_spec("qwen2", "decoder", "Qwen2Config", "Qwen2ForCausalLM", tokens("attention_mask"), "logits", dynamo=True, call=NO_CACHE, **DECODER),
    hf_spec("phi3", "decoder", "Phi3Config", "Phi3ForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, pad_token_id=0, **DECODER),
    hf_spec("gemma", "decoder", "GemmaConfig", "GemmaForCausalLM", tokens("attention_mask"), "logits", dynamo=True, call=NO_CACHE, head_dim=16, **DECODER),
    hf_spec("gemma2", "decoder", "Gemma2Config", "Gemma2ForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, head_dim=16, sliding_window=4, final_logit_softcapping=30.0, attn_logit_softcapping=50.0, **DECODER),
    hf_spec("mixtral", "decoder", "MixtralConfig", "MixtralForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, num_local_experts=4, num_experts_per_tok=2, **DECODER),
    hf_spec("gpt_neox", "decoder", "GPTNeoXConfig", "GPTNeoXForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, rotary_pct=0.5, **SMALL),
    hf_spec("falcon", "decoder", "FalconConfig", "FalconForCausalLM", tokens("attention_mask"), "logits", call=NO_CACHE, vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2),
    hf_spec("clip_text", "encoder", "CLIPTextConfig", "CLIPTextModel", tokens("attention_mask"), "pooler_output", eos_token_id=2, **SMALL),
    hf_spec("convbert", "encoder", "ConvBertConfig", "ConvBertModel", tokens("attention_mask"), "last_hidden_state", embedding_size=32, conv_kernel_size=3, **SMALL),
    hf_spec("squeezebert", "encoder", "SqueezeBertConfig", "SqueezeBertModel", tokens("attention_mask"), "last_hidden_state", embedding_size=32, q_groups=2, k_groups=2, v_groups=2, post_attention_groups=2, intermediate_groups=2, output_groups=2, **SMALL),
    hf_spec("funnel", "encoder", "FunnelConfig", "FunnelModel", tokens("attention_mask"), "last_hidden_state", vocab_size=VOCAB, block_sizes=[1, 1], d_model=32, n_head=2, d_head=16, d_inner=64),
    hf_spec("xlnet", "encoder", "XLNetConfig", "XLNetModel", tokens("attention_mask"), "last_hidden_state", call=NO_CACHE, vocab_size=VOCAB, d_model=32, n_layer=2, n_head=2, d_inner=64),
    hf_spec("whisper", "seq2seq", "WhisperConfig", "WhisperModel", (Input("input_features", (1, 8, 16)), *tokens("decoder_input_ids", "decoder_attention_mask")[1:]), "last_hidden_state", call=NO_CACHE, vocab_size=VOCAB, num_mel_bins=8, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=8, max_target_positions=16, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
    hf_spec("wavlm", "audio", "WavLMConfig", "WavLMModel", AUDIO, "last_hidden_state", hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 4, 4), conv_kernel=(10, 8, 4), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, num_buckets=16, max_bucket_distance=32),
    hf_spec("dinov2", "vit", "Dinov2Config", "Dinov2Model", image(), "last_hidden_state", dynamo=True, image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2),
    hf_spec("convnext_v2", "cnn", "ConvNextV2Config", "ConvNextV2Model", image(), "pooler_output", num_stages=2, hidden_sizes=[16, 32], depths=[1, 1]),
    hf_spec("fnet", "encoder", "FNetConfig", "FNetModel", tokens("token_type_ids"), "last_hidden_state", dynamo=True, use_tpu_fourier_optimizations=False, vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, intermediate_size=64, max_position_embeddings=64),
    hf_spec("mobilebert", "encoder", "MobileBertConfig", "MobileBertModel", tokens("attention_mask"), "last_hidden_state", embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16, num_feedforward_networks=2, **SMALL),
    hf_spec("longformer", "encoder", "LongformerConfig", "LongformerModel", tokens("attention_mask"), "last_hidden_state", attention_window=4, **SMALL),
    hf_spec("mamba", "decoder", "MambaConfig", "MambaForCausalLM", tokens(), "logits", dynamo=True, call=NO_CACHE, vocab_size=VOCAB, hidden_size=32, state_size=4, num_hidden_layers=2, expand=2, conv_kernel=4),
    hf_spec("patchtst", "timeseries", "PatchTSTConfig", "PatchTSTModel", (Input("past_values", (1, 32, 2)),), "last_hidden_state", dynamo=True, num_input_channels=2, context_length=32, patch_length=8, patch_stride=8, d_model=16, num_attention_heads=2, num_hidden_layers=1, ffn_dim=32),
    hf_spec("dpt", "segmentation", "DPTConfig", "DPTForDepthEstimation", image(), "predicted_depth", hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64, image_size=32, patch_size=8, backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[8, 16, 32, 32], fusion_hidden_size=16, head_in_index=-1),
    hf_spec("t5", "seq2seq", "T5Config", "T5Model", tokens("decoder_input_ids"), "last_hidden_state", call=NO_CACHE, vocab_size=VOCAB, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, relative_attention_num_buckets=8),
    hf_spec("bart", "seq2seq", "BartConfig", "BartModel", tokens("decoder_input_ids"), "last_hidden_state", call=NO_CACHE, vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64),
    hf_spec("wav2vec2", "audio", "Wav2Vec2Config", "Wav2Vec2Model", AUDIO, "last_hidden_state", hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 4, 4), conv_kernel=(10, 8, 4), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, do_stable_layer_norm=True, feat_extract_norm="layer"),
    hf_spec("vit_hf", "vit", "ViTConfig", "ViTModel", image(), "last_hidden_state", dynamo=True, image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    hf_spec("segformer", "segmentation", "SegformerConfig", "SegformerForSemanticSegmentation", image(), "logits", num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2], decoder_hidden_size=32, num_labels=4),
]  # fmt: skip


# --------------------------------------------------------------------------------------- export


def export(spec: Spec) -> onnx.ModelProto:
    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)  # nn.MultiheadAttention as its ops, not one fused aten op
    model = spec.build().eval()
    generator = torch.Generator().manual_seed(1)
    args = tuple(i.tensor(generator) for i in spec.inputs)
    names = [i.name for i in spec.inputs]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if spec.dynamo:
            program = torch.onnx.export(
                model, args, input_names=names, output_names=["output"], opset_version=18, dynamo=True, verbose=False
            )
            proto = program.model_proto
        else:
            buffer = io.BytesIO()
            torch.onnx.export(
                model, args, buffer, input_names=names, output_names=["output"], opset_version=17, dynamo=False
            )
            proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto)
    _runs_in_onnxruntime(proto, spec, args)
    return proto


def _runs_in_onnxruntime(proto: onnx.ModelProto, spec: Spec, args) -> None:
    import onnxruntime

    session = onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    session.run(None, {i.name: a.numpy() for i, a in zip(spec.inputs, args)})


def _constants_to_initializers(graph: onnx.GraphProto) -> None:
    """Large float Constant nodes become initializers, so that they are recorded like the rest."""
    keep = []
    for node in graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
            tensor = node.attribute[0].t
            if _is_float(tensor) and int(np.prod(tensor.dims)) > LARGE:
                tensor.name = node.output[0]
                graph.initializer.append(tensor)
                continue
        keep.append(node)
    del graph.node[:]
    graph.node.extend(keep)


def _is_float(tensor: onnx.TensorProto) -> bool:
    return tensor.data_type in (
        onnx.TensorProto.FLOAT,
        onnx.TensorProto.FLOAT16,
        onnx.TensorProto.DOUBLE,
        onnx.TensorProto.BFLOAT16,
    )


def strip(proto: onnx.ModelProto, spec: Spec) -> onnx.ModelProto:
    """The model as stored: large float initializers replaced by their records (module docstring)."""
    graph = proto.graph
    _constants_to_initializers(graph)
    for node in graph.node:  # the dynamo exporter's stack traces and FX names: size, not meaning
        kept_props = [p for p in node.metadata_props if not p.key.startswith("pkg.torch.onnx.")]
        del node.metadata_props[:]
        node.metadata_props.extend(kept_props)
    records, kept = [], []
    for tensor in graph.initializer:
        values = numpy_helper.to_array(tensor)
        if not _is_float(tensor) or values.size <= LARGE:
            kept.append(tensor)
            continue
        values = values.astype(np.float64)
        std = float(values.std())
        if std > 0 and len(np.unique(values)) <= 2:  # a mask: its values are what it means
            kept.append(tensor)
            continue
        records.append(
            {
                "name": tensor.name,
                "dims": list(tensor.dims),
                "dtype": onnx.TensorProto.DataType.Name(tensor.data_type),
                "mean": float(values.mean()),
                "std": std if std > 0 else REDRAW_STD,
                "nonnegative": bool(values.min() >= 0),
            }
        )
    del graph.initializer[:]
    graph.initializer.extend(kept)
    meta = {
        "library": spec.library,
        "family": spec.family,
        "exporter": "dynamo" if spec.dynamo else "torchscript",
        "opset": next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
        "weights": records,
        "int_ranges": {i.name: [i.low, i.high] for i in spec.inputs if i.high is not None},
    }
    del proto.metadata_props[:]
    weights.set_meta(proto, meta)
    return proto


WEIGHTED = {"Conv": 2, "ConvTranspose": 2, "Gemm": 2, "MatMul": None}
"""The ops whose input 1 is a weight that sets their output's scale, and the index of their bias."""
BAND = (0.5, 2.0)
"""Output RMS values a weighted op may keep; outside, its weight is scaled to bring it to 1."""


def calibrated(proto: onnx.ModelProto, limit: int = 400) -> tuple[onnx.ModelProto, int]:
    """The stored model with its records rescaled so that the drawn model is well conditioned, and
    the number of rescalings: layer-sequential unit variance (LSUV, Mishkin & Matas 2016) on the
    very tensors `weights.with_weights` draws.

    Drawn independently, the weights of a deep network lose the balance of the trained or
    initialised ones (an exporter folds BatchNorm into the convolutions before them, and the folded
    scales and biases are matched per channel): activations grow or shrink layer after layer
    (EfficientNet's logits at 1e5, where onnxruntime at two optimization levels disagrees by 3%).
    Walking the weighted ops in graph order, the first whose output RMS (on the drawn weights and
    inputs) is outside BAND has its weight and bias scaled to bring it to 1; the model is drawn
    and run again, until every one is inside."""
    import onnxruntime

    record = weights.meta(proto)
    records = {r["name"]: r for r in record["weights"]}
    kept = {t.name: t for t in proto.graph.initializer}
    targets, seen = [], set()
    for node in proto.graph.node:
        if node.op_type in WEIGHTED and len(node.input) > 1 and node.input[1] in records and node.input[1] not in seen:
            seen.add(node.input[1])
            index = WEIGHTED[node.op_type]
            bias = node.input[index] if index is not None and len(node.input) > index else None
            targets.append((node.output[0], node.input[1], bias or None))
    if not targets:
        return proto, 0
    probe = onnx.ModelProto()
    probe.CopyFrom(proto)
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(out) for out, _, _ in targets)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    feeds = weights.inputs(proto, 0)
    for count in range(limit):
        weights.set_meta(probe, record)
        session = onnxruntime.InferenceSession(weights.with_weights(probe, 0).SerializeToString(), options)
        values = session.run([out for out, _, _ in targets], feeds)
        for (_, weight, bias), value in zip(targets, values):
            rms = float(np.sqrt(np.mean(np.square(value, dtype=np.float64))))
            if not np.isfinite(rms) or rms == 0 or BAND[0] <= rms <= BAND[1]:
                continue
            factor = 1.0 / rms
            for r in (records[weight], records.get(bias)):
                if r is not None:
                    r["mean"], r["std"] = r["mean"] * factor, r["std"] * factor
            if bias in kept and bias not in records:
                scaled = (numpy_helper.to_array(kept[bias]) * factor).astype(numpy_helper.to_array(kept[bias]).dtype)
                kept[bias].CopyFrom(numpy_helper.from_array(scaled, bias))
                probe.graph.initializer[[t.name for t in probe.graph.initializer].index(bias)].CopyFrom(kept[bias])
            break
        else:
            weights.set_meta(proto, record)
            return proto, count
    raise RuntimeError(f"calibration did not settle in {limit} rescalings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="comma-separated names (default: all)")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the traceback of a skipped export")
    args = parser.parse_args()
    specs = [s for s in SPECS if not args.only or s.name in args.only.split(",")]
    if args.list:
        for s in specs:
            print(s.name, s.library, s.family, "dynamo" if s.dynamo else "torchscript")
        return
    OUT.mkdir(exist_ok=True)
    skipped = []
    for spec in specs:
        try:
            proto, rescaled = calibrated(strip(export(spec), spec))
        except Exception as e:
            lines = str(e).strip().splitlines()
            reason = f"{type(e).__name__}: {lines[0] if lines else ''}"[:200]
            skipped.append((spec.name, reason))
            print(f"SKIP {spec.name}: {reason}", flush=True)
            if args.verbose:
                traceback.print_exc()
            continue
        data = gzip.compress(proto.SerializeToString(), mtime=0)
        (OUT / f"{spec.name}.onnx.gz").write_bytes(data)
        print(
            f"{spec.name}: {len(proto.graph.node)} nodes, {rescaled} rescaled, {len(data) / 1024:.1f} KiB", flush=True
        )
    print(f"{len(specs) - len(skipped)} exported, {len(skipped)} skipped")


if __name__ == "__main__":
    main()
