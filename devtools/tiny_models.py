"""Tiny random encoder-decoders of every family the NumPy models run, made offline in seconds.

For the tests and benchmarks of ``xattn.encdec``: no download. Each family's tokenizer is
trained on the toy corpus (``xattn.corpus``: English and French) by sentencepiece or the
``tokenizers`` library and wrapped in transformers' own tokenizer class for that family, so
the folder holds what a Hub folder holds (``tokenizer.json``, or M2M100's sentencepiece files);
the model is built from a config with random weights and saved with ``save_pretrained``
(safetensors). torch, transformers, sentencepiece and tokenizers are imported inside the
functions. Marian's tiny model is ``devtools.tiny_marian``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

__all__ = ["FAMILY_NAMES", "LANGUAGES", "corpus", "make_tokenizer", "tiny_model", "save_tiny"]

FAMILY_NAMES = ("bart", "mbart", "m2m_100", "nllb", "t5")
# (source, target) language of the multilingual families, as tokenizer_config.json names them
LANGUAGES = {"mbart": ("en_XX", "fr_XX"), "m2m_100": ("en", "fr"),
             "nllb": ("eng_Latn", "fra_Latn")}
_NLLB_CODES = ["eng_Latn", "fra_Latn", "deu_Latn"]
_SIZES = dict(d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
              decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32,
              max_position_embeddings=64)


def corpus(n: int = 300, seed: int = 7) -> list[str]:
    """Toy English and French sentences (``xattn.corpus.generate_pairs``), with punctuation."""
    from devtools.tiny_marian import SRC_SENTENCES, TGT_SENTENCES
    from xattn.corpus import generate_pairs

    pairs = generate_pairs(n, seed=seed)
    return ([" ".join(p.source) for p in pairs] + [" ".join(p.target) for p in pairs]
            + list(SRC_SENTENCES) + list(TGT_SENTENCES))


def _spm(folder: Path, name: str, model_type: str, vocab_size: int = 120) -> Path:
    import sentencepiece as spm

    folder.mkdir(parents=True, exist_ok=True)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus()), model_prefix=str(folder / "sp"), vocab_size=vocab_size,
        model_type=model_type, character_coverage=1.0, hard_vocab_limit=False, minloglevel=2,
        num_threads=1)
    (folder / "sp.model").replace(folder / name)
    (folder / "sp.vocab").unlink()
    return folder


def make_tokenizer(family: str, folder):
    """The family's transformers tokenizer, trained on the toy corpus, with its files in
    ``folder`` (a scratch folder: ``save_pretrained`` writes the model's own)."""
    import transformers as tf

    folder = Path(folder)
    if family == "bart":
        from tokenizers import ByteLevelBPETokenizer

        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(corpus(), vocab_size=300, min_frequency=1, show_progress=False,
                                special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        folder.mkdir(parents=True, exist_ok=True)
        bpe.save_model(str(folder))
        return tf.BartTokenizer.from_pretrained(folder)
    if family == "mbart":
        _spm(folder, "sentencepiece.bpe.model", "unigram")
        return tf.MBart50Tokenizer.from_pretrained(folder, src_lang="en_XX", tgt_lang="fr_XX")
    if family == "nllb":
        _spm(folder, "sentencepiece.bpe.model", "bpe")
        return tf.NllbTokenizer.from_pretrained(folder, src_lang="eng_Latn", tgt_lang="fra_Latn",
                                                extra_special_tokens=_NLLB_CODES)
    if family == "t5":
        _spm(folder, "spiece.model", "unigram")
        return tf.T5Tokenizer.from_pretrained(folder, extra_ids=0)
    if family == "m2m_100":
        import sentencepiece as spm

        _spm(folder, "sentencepiece.bpe.model", "unigram")
        processor = spm.SentencePieceProcessor(model_file=str(folder / "sentencepiece.bpe.model"))
        vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}     # fairseq's first four
        for i in range(processor.get_piece_size()):
            vocab.setdefault(processor.id_to_piece(i), len(vocab))
        (folder / "vocab.json").write_text(json.dumps(vocab))
        return tf.M2M100Tokenizer(vocab_file=str(folder / "vocab.json"),
                                  spm_file=str(folder / "sentencepiece.bpe.model"),
                                  src_lang="en", tgt_lang="fr")
    raise ValueError(f"family must be one of {FAMILY_NAMES}; received {family!r}.")


def _ids(tokenizer) -> dict:
    t = tokenizer
    return dict(pad_token_id=t.pad_token_id, eos_token_id=t.eos_token_id,
                bos_token_id=getattr(t, "bos_token_id", None))


def _vocab_size(tokenizer) -> int:
    """Ids the tokenizer can give (M2M100's language codes sit after its vocabulary)."""
    return max(len(tokenizer), *tokenizer.get_vocab().values(),
               *getattr(tokenizer, "lang_code_to_id", {0: 0}).values()) + 1


def tiny_model(family: str, tokenizer, *, seed: int = 0, spread: float | None = None,
               attn_implementation: str = "eager", **config):
    """A random model of ``family`` for ``tokenizer`` (eval mode); ``config`` overrides the
    sizes (transformers' names for the family).

    ``spread``: redraw every weight as normal(0, spread) (norm scales around 1), for peaked
    attention instead of the near-uniform attention of transformers' small initial weights.
    """
    import torch
    import transformers as tf

    ids, vocab = _ids(tokenizer), _vocab_size(tokenizer)
    if family == "t5":
        sizes = dict(d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4,
                     relative_attention_num_buckets=8, relative_attention_max_distance=20)
        sizes.update(config)
        cfg = tf.T5Config(vocab_size=sizes.pop("vocab_size", vocab), decoder_start_token_id=0,
                          pad_token_id=ids["pad_token_id"], eos_token_id=ids["eos_token_id"],
                          **sizes)
        cls = tf.T5ForConditionalGeneration
    else:
        kind = {"bart": (tf.BartConfig, tf.BartForConditionalGeneration),
                "mbart": (tf.MBartConfig, tf.MBartForConditionalGeneration),
                "m2m_100": (tf.M2M100Config, tf.M2M100ForConditionalGeneration),
                "nllb": (tf.M2M100Config, tf.M2M100ForConditionalGeneration)}[family]
        sizes = {**_SIZES, **config}
        cfg = kind[0](vocab_size=sizes.pop("vocab_size", vocab),
                      decoder_start_token_id=ids["eos_token_id"], **ids, **sizes)
        cls = kind[1]
    with torch.random.fork_rng():     # seeded without touching the caller's global RNG
        torch.manual_seed(seed)
        model = cls(cfg)
        if spread is not None:
            with torch.no_grad():
                for name, param in model.named_parameters():
                    norm = name.endswith("norm.weight") or "layernorm" in name
                    param.normal_(1.0 if norm and name.endswith("weight") else 0.0, spread)
                if hasattr(model, "final_logits_bias"):
                    model.final_logits_bias.normal_(0.0, spread)
    model.set_attn_implementation(attn_implementation)
    return model.eval()


def save_tiny(family: str, folder, *, tokenizer=None, **config) -> Path:
    """Tokenizer and model of ``family`` saved with ``save_pretrained`` in ``folder`` (as a
    Hub folder is laid out); ``config`` as for ``tiny_model``."""
    folder = Path(folder)
    scratch = folder.with_name(folder.name + "-tokenizer")
    tokenizer = tokenizer or make_tokenizer(family, scratch)
    tiny_model(family, tokenizer, **config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    shutil.rmtree(scratch, ignore_errors=True)
    return folder


def numpy_t5(folder, *, seed: int = 0) -> Path:
    """A tiny random T5 folder made without torch or transformers: ``config.json``,
    ``model.safetensors`` (NumPy, every tensor the config names) and a ``tokenizer.json``
    trained on the toy corpus by the ``tokenizers`` library. For tests of how a folder is read
    (hostile files) where torch is not installed; its numbers are checked nowhere."""
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from xattn.encdec.config import read_config
    from xattn.encdec.weights import expected_shapes, names

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.Metaspace(), decoders.Metaspace()
    tok.train_from_iterator(corpus(), trainers.UnigramTrainer(
        vocab_size=100, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>",
        show_progress=False))
    tok.save(str(folder / "tokenizer.json"))
    config = dict(model_type="t5", vocab_size=tok.get_vocab_size(), d_model=16, d_kv=4, d_ff=32,
                  num_layers=2, num_heads=4, relative_attention_num_buckets=8,
                  relative_attention_max_distance=20, pad_token_id=0, eos_token_id=1,
                  decoder_start_token_id=0, feed_forward_proj="relu")
    (folder / "config.json").write_text(json.dumps(config))
    c = read_config(folder / "config.json")
    rng = np.random.default_rng(seed)
    shapes = expected_shapes(c, names(c, ()))
    save_file({n: (rng.standard_normal(s) * 0.3).astype(np.float32) for n, s in shapes.items()},
              str(folder / "model.safetensors"))
    return folder
