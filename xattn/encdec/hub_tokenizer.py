"""A Hugging Face folder's tokenizer without transformers, for BART, mBART, M2M100/NLLB and T5.

The pieces come from ``tokenizer.json`` through the ``tokenizers`` library (BART, mBART-50,
NLLB, T5: what transformers' fast tokenizers read), or from sentencepiece where a folder has
only that (M2M100: ``sentencepiece.bpe.model`` and ``vocab.json``, its language codes after
the vocabulary; T5: ``spiece.model``). What surrounds a sentence's pieces is the family's
frame (``Family.frame``), as transformers' tokenizers add it::

    eos   (T5)                      X </s>
    bos   (BART)                    <s> X </s>
    lang  (mBART-50, M2M100, NLLB)  [lang] X </s>      (mBART-cc25, legacy NLLB: X </s> [lang])

The languages are ``src_lang`` and ``tgt_lang`` of ``tokenizer_config.json``; a translation
starts with the target's code (transformers' ``forced_bos_token_id``).
"""

from __future__ import annotations

from pathlib import Path

from xattn.encdec.files import present, read_json, read_text
from xattn.encdec.tokenizer import VOCAB_BYTES, load_spm

__all__ = ["HubTokenizer", "TOKENIZER_JSON", "M2M100_LANGUAGES"]

TOKENIZER_JSON = "tokenizer.json"
_TOKENIZER_BYTES = 64 << 20       # NLLB-200's and mBART-50's are ~17 MB
_CONFIG_BYTES = 16 << 20
# transformers' M2M100Tokenizer: language codes get ids after vocab.json's, in this order.
M2M100_LANGUAGES = {
    "m2m100": ("af am ar ast az ba be bg bn br bs ca ceb cs cy da de el en es et fa ff fi fr "
               "fy ga gd gl gu ha he hi hr ht hu hy id ig ilo is it ja jv ka kk km kn ko lb lg "
               "ln lo lt lv mg mk ml mn mr ms my ne nl no ns oc or pa pl ps pt ro ru sd si sk "
               "sl so sq sr ss su sv sw ta th tl tn tr uk ur uz vi wo xh yi yo zh zu").split(),
    "wmt21": "en ha is ja cs ru zh de".split()}


class _Json:
    """Pieces from ``tokenizer.json`` (the ``tokenizers`` library), without its template."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        try:
            self.tok = Tokenizer.from_str(read_text(path, _TOKENIZER_BYTES))
        except Exception as err:  # noqa: BLE001  (the library's own errors: one line)
            raise ValueError(f"{path.name} is not a tokenizers file: "
                             f"{str(err).splitlines()[0][:160]}") from None
        self.specials = tuple(t.content for t in self.tok.get_added_tokens_decoder().values()
                              if t.special)
        self.size = self.tok.get_vocab_size(with_added_tokens=True)

    def cut(self, text: str) -> tuple[list[int], list[str]]:
        out = self.tok.encode(text, add_special_tokens=False)
        return list(out.ids), list(out.tokens)

    def piece(self, i: int) -> str:
        return self.tok.id_to_token(int(i)) or "<unk>"

    def piece_id(self, piece: str) -> int | None:
        return self.tok.token_to_id(piece)

    def decode(self, ids) -> str:
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=True).strip()


class _Sentencepiece:
    """Pieces from sentencepiece; ids from ``vocab.json`` (M2M100) or the model (T5), and
    extra tokens (M2M100's language codes) after them."""

    def __init__(self, spm: Path, vocab: Path | None, extra: tuple[str, ...]) -> None:
        self.spm = load_spm(spm, "the tokenizer")
        if vocab is not None:
            encoder = read_json(vocab, VOCAB_BYTES)
            if not all(isinstance(k, str) and type(v) is int and v >= 0
                       for k, v in encoder.items()):
                raise ValueError(f"{vocab.name} must map each piece (a string) to an id (an "
                                 f"int >= 0).")
        else:
            encoder = {self.spm.id_to_piece(i): i for i in range(self.spm.get_piece_size())}
        base = len(encoder)
        self.encoder = {**encoder, **{t: base + i for i, t in enumerate(extra)}}
        self.decoder = {i: p for p, i in self.encoder.items()}
        self.specials = tuple(p for p in ("<s>", "</s>", "<pad>", "<unk>") if p in encoder) + extra
        self.size = max(self.encoder.values()) + 1

    def cut(self, text: str) -> tuple[list[int], list[str]]:
        pieces = list(self.spm.encode(text, out_type=str))
        unk = self.encoder.get("<unk>", 0)
        return [self.encoder.get(p, unk) for p in pieces], pieces

    def piece(self, i: int) -> str:
        return self.decoder.get(int(i), "<unk>")

    def piece_id(self, piece: str) -> int | None:
        return self.encoder.get(piece)

    def decode(self, ids) -> str:
        pieces = [self.piece(i) for i in ids]
        return self.spm.decode_pieces([p for p in pieces if p not in self.specials]).strip()


class HubTokenizer:
    """Pieces and ids of source and target sentences, framed as the family frames them.

    Attributes
    ----------
    eos_id, pad_id, unk_id : int
    specials : tuple of str
        Pieces that are words of their own (``</s>``, language codes, ...).
    size : int
        Ids it can give.
    target_prefix : tuple of int
        Tokens every translation starts with (the target language's code), or none.
    """

    def __init__(self, pieces, frame: str, *, src: list[int], tgt: list[int],
                 suffix: bool = False) -> None:
        self._pieces, self.frame, self._suffix = pieces, frame, suffix
        self.specials, self.size = pieces.specials, pieces.size
        ids = {p: pieces.piece_id(p) for p in ("<s>", "</s>", "<pad>", "<unk>")}
        if ids["</s>"] is None:
            raise ValueError("the tokenizer has no </s>, which ends every sentence.")
        self.eos_id, self.pad_id, self.bos_id = ids["</s>"], ids["<pad>"], ids["<s>"]
        self.unk_id = ids["<unk>"] if ids["<unk>"] is not None else 0
        if frame == "bos" and self.bos_id is None:
            raise ValueError("the tokenizer has no <s>, which starts every BART sentence.")
        self._lang = {"source": src, "target": tgt}
        self.target_prefix = tuple(tgt) if not suffix else ()

    @classmethod
    def from_folder(cls, folder, family) -> HubTokenizer:
        """The tokenizer of a Hugging Face folder for a model of ``family``.

        Raises
        ------
        ValueError
            No tokenizer file, a file that is not one, or languages that are missing.
        """
        folder = Path(folder)
        config = read_json(folder / "tokenizer_config.json", _CONFIG_BYTES) if \
            present(folder / "tokenizer_config.json") else {}
        kind = str(config.get("tokenizer_class", ""))
        if present(folder / TOKENIZER_JSON):
            pieces = _Json(folder / TOKENIZER_JSON)
        elif present(folder / "sentencepiece.bpe.model") and present(folder / "vocab.json"):
            codes = M2M100_LANGUAGES.get(str(config.get("language_codes", "m2m100")), ())
            pieces = _Sentencepiece(folder / "sentencepiece.bpe.model", folder / "vocab.json",
                                    tuple(f"__{c}__" for c in codes))
        elif present(folder / "spiece.model"):
            pieces = _Sentencepiece(folder / "spiece.model", None, ())
        else:
            raise ValueError(f"{folder} has no tokenizer: tokenizer.json, or sentencepiece's "
                             f"files (sentencepiece.bpe.model and vocab.json, or spiece.model).")
        if family.frame != "lang":
            return cls(pieces, family.frame, src=[], tgt=[])
        codes = [_code(pieces, config, key) for key in ("src_lang", "tgt_lang")]
        suffix = kind.startswith("MBartTokenizer") or (kind.startswith("Nllb") and
                                                       config.get("legacy_behaviour") is True)
        return cls(pieces, "lang", src=[codes[0]], tgt=[codes[1]], suffix=suffix)

    def check(self, config) -> None:
        """Refuse a tokenizer that does not fit the model's ``config`` (a ModelConfig)."""
        if self.size > config.decoder_vocab_size or self.eos_id != config.eos_token_id or \
                (self.pad_id is not None and self.pad_id != config.pad_token_id):
            raise ValueError(f"the tokenizer does not fit config.json: {self.size} ids, </s> = "
                             f"{self.eos_id}, <pad> = {self.pad_id}; the model has "
                             f"{config.decoder_vocab_size} ids, eos_token_id = "
                             f"{config.eos_token_id}, pad_token_id = {config.pad_token_id}.")

    def pieces(self, text: str, *, side: str = "source") -> list[str]:
        """The pieces of ``text`` (nothing around them), as the model reads them."""
        return self._pieces.cut(_text(text))[1]

    def piece_id(self, piece: str) -> int | None:
        """The id of a piece as it is, or None."""
        return self._pieces.piece_id(piece)

    def encode(self, text: str, *, side: str = "source") -> list[int]:
        """Ids of ``text``'s pieces in the family's frame."""
        if side not in self._lang:
            raise ValueError(f"side must be 'source' or 'target'; received {side!r}.")
        ids = self._pieces.cut(_text(text))[0]
        lang = self._lang[side]
        if self.frame == "bos":
            return [self.bos_id, *ids, self.eos_id]
        if self._suffix:
            return [*ids, self.eos_id, *lang]
        return [*lang, *ids, self.eos_id]

    def id_to_piece(self, ids) -> list[str]:
        return [self._pieces.piece(i) for i in ids]

    def decode(self, ids) -> str:
        """Text of ``ids``, specials left out."""
        return self._pieces.decode(ids)

    def __repr__(self) -> str:
        return f"HubTokenizer(frame={self.frame!r}, ids={self.size}, eos_id={self.eos_id})"


def _text(text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a string; received {type(text).__name__}.")
    return text


def _code(pieces, config: dict, key: str) -> int:
    """The id of language ``config[key]``'s code (M2M100 writes "en" as "__en__")."""
    lang = config.get(key)
    if not isinstance(lang, str) or not lang:
        raise ValueError(f"tokenizer_config.json must name the languages of this multilingual "
                         f"model: set src_lang and tgt_lang (e.g. \"en_XX\" and \"fr_XX\" for "
                         f"mBART-50, \"eng_Latn\" and \"fra_Latn\" for NLLB, \"en\" and \"fr\" "
                         f"for M2M100); {key} is {str(lang)[:40]!r}.")
    for token in (lang, f"__{lang}__"):
        i = pieces.piece_id(token)
        if i is not None:
            return i
    raise ValueError(f"tokenizer_config.json: {key} {lang[:40]!r} is not a language of this "
                     f"tokenizer (it has no token {lang[:40]!r}).")
