"""A tiny random Marian translation model and its tokenizer, made offline in seconds.

For the tests and benchmarks of ``xattn.torch_models``: no download. The tokenizer is trained by
sentencepiece on a few sentences; the vocabulary is laid out like opus-mt's (``</s>`` = 0,
``<unk>`` = 1, ``<pad>`` last, which is also the decoder's start token). The weights are random,
so the "translations" are nonsense and the attention patterns come from the seed, not from
language. torch, transformers and sentencepiece are imported inside the functions.

``save_tiny_numpy`` writes the same kind of model as a folder ``xattn.encdec`` reads (what
``python -m xattn.torch_models convert`` writes), for the NumPy model's tests.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["SRC_SENTENCES", "TGT_SENTENCES", "GERMAN", "make_tokenizer", "tiny_marian", "save_tiny",
           "save_tiny_numpy"]

SRC_SENTENCES = ("the cat sat on the mat.", "the dog is happy, really happy!",
                 "a bird sings in the garden", "unbelievable things happen every day",
                 "where is the station? it is near the river.")
TGT_SENTENCES = ("le chat est assis sur le tapis.", "le chien est heureux, vraiment heureux!",
                 "un oiseau chante dans le jardin", "des choses incroyables arrivent chaque jour",
                 "où est la gare? elle est près de la rivière.")


def make_tokenizer(folder, src_sentences=SRC_SENTENCES, tgt_sentences=TGT_SENTENCES,
                   vocab_size: int = 40):
    """Train source and target sentencepiece models in ``folder``; return a MarianTokenizer."""
    import sentencepiece as spm
    from transformers import MarianTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pieces = ["</s>", "<unk>"]
    for side, sentences in (("source", src_sentences), ("target", tgt_sentences)):
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(list(sentences) * 4), model_prefix=str(folder / side),
            vocab_size=vocab_size, hard_vocab_limit=False, model_type="unigram",
            character_coverage=1.0, unk_id=0, bos_id=-1, eos_id=-1, minloglevel=2)
        (folder / f"{side}.model").replace(folder / f"{side}.spm")
        processor = spm.SentencePieceProcessor(model_file=str(folder / f"{side}.spm"))
        pieces += [p for p in map(processor.id_to_piece, range(processor.get_piece_size()))
                   if p not in pieces and p != "<unk>"]
    pieces.append("<pad>")
    (folder / "vocab.json").write_text(json.dumps({p: i for i, p in enumerate(pieces)}))
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Recommended: pip install sacremoses")
        return MarianTokenizer(source_spm=str(folder / "source.spm"),
                               target_spm=str(folder / "target.spm"),
                               vocab=str(folder / "vocab.json"))


def tiny_marian(tokenizer, *, seed: int = 0, attn_implementation: str = "eager",
                spread: float | None = None, **config):
    """A random MarianMTModel for ``tokenizer`` (eval mode). ``config`` overrides the sizes.

    ``spread``: redraw every weight and bias as normal(0, spread) (LayerNorm scales around 1),
    for peaked attention and large activations instead of the near-uniform attention of
    transformers' small initial weights.
    """
    import torch
    from transformers import MarianConfig, MarianMTModel

    sizes = dict(d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32,
                 max_position_embeddings=256)
    sizes.update(config)
    cfg = MarianConfig(vocab_size=sizes.pop("vocab_size", len(tokenizer)),
                       pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
                       forced_eos_token_id=tokenizer.eos_token_id,
                       decoder_start_token_id=tokenizer.pad_token_id, **sizes)
    with torch.random.fork_rng():     # seeded without touching the caller's global RNG
        torch.manual_seed(seed)
        model = MarianMTModel(cfg)
        if spread is not None:
            with torch.no_grad():
                for name, param in model.named_parameters():
                    if "embed_positions" not in name:      # sinusoids, not learnt
                        param.normal_(1.0 if "layer_norm.weight" in name else 0.0, spread)
                model.final_logits_bias.normal_(0.0, spread)
    if cfg.decoder_vocab_size > len(tokenizer):  # a bigger model vocabulary (benchmarks):
        with torch.no_grad():     # generate only ids the tokenizer can turn back into text
            model.final_logits_bias[:, len(tokenizer):] = -1e4
    model.set_attn_implementation(attn_implementation)
    return model.eval()


GERMAN = ("die Katze sitzt auf der Matte.", "der Hund ist glücklich, wirklich glücklich!",
          "ein Vogel singt im Garten", "die schwarze Katze schläft auf der Matte",
          "weil die Katze schläft, ist der Hund glücklich.")


def save_tiny(folder, *, tgt_sentences=TGT_SENTENCES, **config) -> Path:
    """Tokenizer and model saved with ``save_pretrained`` in ``folder``, for ``load_model``
    (``tgt_sentences``: what the target side's tokenizer is trained on, e.g. `GERMAN`)."""
    folder = Path(folder)
    tokenizer = make_tokenizer(folder / "spm", tgt_sentences=tgt_sentences)
    tiny_marian(tokenizer, **config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def save_tiny_numpy(folder, *, dtype: str = "float32", **config) -> Path:
    """A tiny random Marian as a NumPy folder (config.json, model.safetensors, source.spm,
    target.spm, vocab.json), as ``python -m xattn.torch_models convert`` writes it. ``config``
    as for ``tiny_marian`` (``seed``, ``spread`` and sizes)."""
    import shutil

    from xattn.torch_models import write_folder

    folder = Path(folder)
    spm = folder.with_name(folder.name + "-spm")
    tokenizer = make_tokenizer(spm)
    write_folder(tiny_marian(tokenizer, **config), folder, dtype=dtype)
    for name in ("source.spm", "target.spm", "vocab.json"):
        shutil.copy(spm / name, folder / name)
    return folder
