"""A Whisper folder's ``tokenizer.json`` through the ``tokenizers`` library (no transformers):
token ids to pieces and text. Optional: a folder without it still transcribes, to ids."""

from __future__ import annotations

from pathlib import Path

from xattn.encdec.files import present, read_text

__all__ = ["SpeechTokenizer"]

_TOKENIZER_BYTES = 64 << 20       # whisper's tokenizer.json is about 2.5 MB


class SpeechTokenizer:
    """Pieces and text of Whisper's byte-level BPE ids (its specials: ``<|en|>``, ...)."""

    def __init__(self, tokenizer) -> None:
        self.tok = tokenizer
        self.size = tokenizer.get_vocab_size(with_added_tokens=True)

    @classmethod
    def from_folder(cls, folder) -> SpeechTokenizer | None:
        """The tokenizer of ``folder/tokenizer.json``, or None where there is none.

        Raises
        ------
        ValueError
            The file is too large or not a ``tokenizers`` file.
        """
        path = Path(folder) / "tokenizer.json"
        if not present(path):
            return None
        from tokenizers import Tokenizer

        try:
            return cls(Tokenizer.from_str(read_text(path, _TOKENIZER_BYTES)))
        except Exception as err:  # noqa: BLE001  (the library's own errors: one line)
            raise ValueError(f"{path.name} is not a tokenizers file: "
                             f"{str(err).splitlines()[0][:160]}") from None

    def id_to_piece(self, ids) -> list[str]:
        return [self.tok.id_to_token(int(i)) or "<unk>" for i in ids]

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)

    def __repr__(self) -> str:
        return f"SpeechTokenizer(size={self.size})"
