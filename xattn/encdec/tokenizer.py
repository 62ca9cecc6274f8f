"""A Marian tokenizer without transformers: two sentencepiece models and ``vocab.json``.

What transformers' ``MarianTokenizer`` does, for one shared vocabulary (opus-mt): the source is
cut into pieces by ``source.spm``, the target by ``target.spm``; ``vocab.json`` maps pieces to
the model's ids (a piece missing there becomes ``<unk>``); ``</s>`` ends every sentence. A
leading language code such as ``>>fr<<`` (multilingual opus-mt) is one piece of its own. The
files are read as untrusted input (``xattn.encdec.files``: regular files of bounded size).
"""

from __future__ import annotations

from pathlib import Path

from xattn._checks import quote
from xattn.encdec.files import read_bytes, read_json

__all__ = ["MarianTokenizer", "TOKENIZER_FILES", "SPM_BYTES", "VOCAB_BYTES", "load_spm"]

TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json")
SPM_BYTES = 64 << 20      # a sentencepiece model: opus-mt's are ~800 kB, NLLB-200's 4.8 MB
VOCAB_BYTES = 64 << 20    # a vocab.json: opus-mt's are ~1.5 MB, M2M100's 3 MB
_SPECIALS = ("</s>", "<unk>", "<pad>")


def load_spm(path, what: str):
    """A sentencepiece model from a regular file of at most ``SPM_BYTES``."""
    import sentencepiece

    data = read_bytes(path, SPM_BYTES)
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(data)
    except (OSError, RuntimeError, TypeError) as err:
        raise ValueError(f"{Path(path).name} is not a sentencepiece model ({what}): "
                         f"{str(err).strip()[:160]}") from None
    return processor


class MarianTokenizer:
    """Pieces and ids of source and target sentences.

    Parameters
    ----------
    source_spm, target_spm : path
        sentencepiece models.
    vocab : path
        ``vocab.json``: piece -> id, holding ``</s>``, ``<unk>`` and ``<pad>``.

    Attributes
    ----------
    eos_id, unk_id, pad_id : int
    specials : tuple of str
        Pieces that are never cut or joined: ``</s>``, ``<unk>``, ``<pad>``.
    target_prefix : tuple of int
        Tokens every translation starts with: none.
    """

    def __init__(self, source_spm, target_spm, vocab) -> None:
        self._spm = {side: load_spm(path, f"{side} side") for side, path in
                     (("source", source_spm), ("target", target_spm))}
        encoder = read_json(vocab, VOCAB_BYTES)
        if not all(isinstance(k, str) and type(v) is int and v >= 0
                   for k, v in encoder.items()):
            raise ValueError(f"{Path(vocab).name} must map each piece (a string) to an id (an "
                             f"int >= 0).")
        missing = [s for s in _SPECIALS if s not in encoder]
        if missing:
            raise ValueError(f"{Path(vocab).name} must hold the pieces {', '.join(_SPECIALS)}; "
                             f"missing {', '.join(missing)}.")
        self.encoder: dict[str, int] = encoder
        self.decoder: dict[int, str] = {i: p for p, i in encoder.items()}
        self.eos_id, self.unk_id, self.pad_id = (encoder[s] for s in _SPECIALS)
        self.specials = _SPECIALS
        self.size = max(encoder.values()) + 1
        self.target_prefix: tuple[int, ...] = ()

    @classmethod
    def from_folder(cls, folder) -> MarianTokenizer:
        folder = Path(folder)
        if (folder / "target_vocab.json").exists():
            raise ValueError(f"{folder} has a separate target vocabulary (target_vocab.json), "
                             "which this tokenizer does not read; use the transformers path.")
        return cls(*(folder / name for name in TOKENIZER_FILES))

    def check(self, config) -> None:
        """Refuse a vocabulary that does not fit the model's ``config`` (a ModelConfig)."""
        if self.size > config.decoder_vocab_size or \
                (self.eos_id, self.pad_id) != (config.eos_token_id, config.pad_token_id):
            raise ValueError(f"vocab.json does not fit config.json: {self.size} ids, </s> = "
                             f"{self.eos_id}, <pad> = {self.pad_id}; the model has "
                             f"{config.decoder_vocab_size} ids, eos_token_id = "
                             f"{config.eos_token_id}, pad_token_id = {config.pad_token_id}.")

    def pieces(self, text: str, *, side: str = "source") -> list[str]:
        """The pieces of ``text`` (without ``</s>``), as the model reads them."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string; received {type(text).__name__} "
                            f"{quote(text)}.")
        if side not in self._spm:
            raise ValueError(f"side must be 'source' or 'target'; received {quote(side)}.")
        code = []
        if text.startswith(">>") and (end := text.find("<<")) != -1:   # >>fr<<: a language code
            code, text = [text[:end + 2]], text[end + 2:]
        return code + list(self._spm[side].encode(text, out_type=str))

    def piece_id(self, piece: str) -> int | None:
        """The id of a piece as it is ("▁chien", "</s>"), or None."""
        return self.encoder.get(piece)

    def encode(self, text: str, *, side: str = "source") -> list[int]:
        """Ids of ``text``'s pieces followed by ``</s>``."""
        return [self.encoder.get(p, self.unk_id) for p in self.pieces(text, side=side)] + \
            [self.eos_id]

    def id_to_piece(self, ids) -> list[str]:
        """The piece of each id (``<unk>`` for an id outside the vocabulary)."""
        return [self.decoder.get(int(i), "<unk>") for i in ids]

    def decode(self, ids, *, skip_special: bool = True) -> str:
        """Target text of ``ids``: pieces joined by ``target.spm``, specials left out."""
        text, run = [], []
        for piece in self.id_to_piece(ids):
            if piece in self.specials:
                text.append(self._spm["target"].decode_pieces(run))
                run = []
                if not skip_special:
                    text.append(piece)
            else:
                run.append(piece)
        text.append(self._spm["target"].decode_pieces(run))
        return " ".join(t for t in text if t).replace("\u2581", " ").strip()

    def __repr__(self) -> str:
        return f"MarianTokenizer(pieces={len(self.encoder)}, eos_id={self.eos_id})"
