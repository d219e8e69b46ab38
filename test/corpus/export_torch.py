"""Exports the torch.export programs of the corpus to test/corpus/torch/: transformers' models,
small configurations with seeded random weights (nothing downloaded), exported by torch.export as a
user exports them and saved by torch.export.save. Loading one needs only torch (the graphs hold ATen
operators, the outputs are tuples), so the tests run them in PyTorch as the oracle.

Not part of the project's dependencies: it runs in a venv that has torch and transformers,

    python3 -m venv .corpus-venv
    .corpus-venv/bin/pip install torch==2.13.0 transformers
    .corpus-venv/bin/python test/corpus/export_torch.py

- `hf_bert.pt2`: BertModel (2 layers, hidden 32, 2 heads), ids and mask [batch, 8], batch a Dim.
- `hf_gpt2.pt2`: GPT2Model (2 layers, hidden 32, 2 heads), ids [1, 8].
- `hf_vit.pt2`: ViTModel (2 layers, hidden 32, 2 heads, 16x16 images of 4x4 patches), pixels [1, 3, 16, 16].
"""

from __future__ import annotations

from pathlib import Path

import torch

HERE = Path(__file__).parent / "torch"


def export(name: str, model, args: tuple, dynamic=None) -> None:
    model = model.eval()
    program = torch.export.export(model, args, dynamic_shapes=dynamic, strict=False)
    torch.export.save(program, HERE / f"{name}.pt2")


def main() -> None:
    import transformers as tf

    HERE.mkdir(exist_ok=True)
    torch.manual_seed(0)
    small = dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64)
    bert = tf.BertModel(tf.BertConfig(vocab_size=100, max_position_embeddings=64, **small, attn_implementation="eager"))
    bert.config.return_dict = False
    ids = torch.randint(0, 100, (2, 8))
    batch = torch.export.Dim("batch", min=1, max=16)
    export("hf_bert", bert, (ids, torch.ones_like(ids)), ({0: batch}, {0: batch}))
    gpt2 = tf.GPT2Model(
        tf.GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2, attn_implementation="eager")
    )
    gpt2.config.return_dict = False
    gpt2.config.use_cache = False
    export("hf_gpt2", gpt2, (torch.randint(0, 100, (1, 8)),))
    vit = tf.ViTModel(
        tf.ViTConfig(image_size=16, patch_size=4, **small, attn_implementation="eager"), add_pooling_layer=False
    )
    vit.config.return_dict = False
    export("hf_vit", vit, (torch.randn(1, 3, 16, 16),))


if __name__ == "__main__":
    main()
