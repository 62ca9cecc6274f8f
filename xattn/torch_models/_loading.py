"""A transformers model as a ``xattn.translator.Translator``, whether the packages are there,
and loading one by name from the deployer's allow-list.

torch and transformers are imported inside the functions only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import warnings

from xattn.ablation import AblationResult
from xattn.attention import AttentionTrace
from xattn.torch_models._attention import cross_attentions, translate_ids
from xattn.torch_models._layers import layer_ablation, layer_trace
from xattn.torch_models._sizes import check_declared_sizes
from xattn.translator import ModelUnavailable, check_allowed

__all__ = ["LoadedModel", "load_model", "missing_packages", "use_threads"]

_PACKAGES = ("torch", "transformers", "sentencepiece")
_INSTALL = "pip install -r requirements-models.txt"


def _installed(package: str) -> bool:
    if package in sys.modules:           # None there means "import refused" (as in the tests)
        return sys.modules[package] is not None
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def missing_packages() -> str | None:
    """None when torch, transformers and sentencepiece are installed, else one line saying what
    is missing and the command that installs it. Nothing is imported."""
    missing = [p for p in _PACKAGES if not _installed(p)]
    if not missing:
        return None
    return (f"Real translation models need {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {_INSTALL}")


class LoadedModel:
    """A tokenizer and an encoder-decoder model, ready for ``xattn.translator.cross_attention``.

    A ``Translator`` whose layers are opened with forward hooks (``trace_layer``: the model's
    own scaling, so ``rescalable`` is False; ``switch_heads_off``); it has no ``query_inputs``,
    does not decode step by step (``decode_steps`` is None) and does not measure what masking a
    source word does (``effects`` is None).

    Parameters
    ----------
    model : transformers encoder-decoder model
        E.g. ``MarianMTModel``; switched to eval mode. Use ``attn_implementation="eager"``:
        the default SDPA attention reports no weights.
    tokenizer : transformers tokenizer
    name : str, default "custom"

    Attributes
    ----------
    lock : threading.RLock
        Held by every pass through the model (a server shares one model between sessions).
    """

    def __init__(self, model, tokenizer, name: str = "custom") -> None:
        config = getattr(model, "config", None)
        if not getattr(config, "is_encoder_decoder", False):
            raise TypeError(f"model must be a transformers encoder-decoder model (e.g. "
                            f"MarianMTModel); received {type(model).__name__}.")
        if not callable(tokenizer) or not hasattr(tokenizer, "convert_ids_to_tokens"):
            raise TypeError(f"tokenizer must be a transformers tokenizer; received "
                            f"{type(tokenizer).__name__}.")
        if not isinstance(name, str):
            raise TypeError(f"name must be a string; received {type(name).__name__}.")
        self.model, self.tokenizer, self.name = model.eval(), tokenizer, name
        # One pass at a time through this model: the hooks of layer_trace and layer_ablation
        # would otherwise record (or switch heads off in) another session's pass.
        self.lock = threading.RLock()

    rescalable = False
    query_inputs = None
    decode_steps = None
    effects = None

    def _config(self, *keys: str) -> int:
        for key in keys:
            if isinstance(getattr(self.model.config, key, None), int):
                return getattr(self.model.config, key)
        raise ValueError(f"the model's config has none of {keys}.")

    @property
    def n_layers(self) -> int:
        """Decoder layers, each with its own cross-attention."""
        return self._config("decoder_layers", "num_decoder_layers", "num_layers")

    @property
    def n_heads(self) -> int:
        return self._config("decoder_attention_heads", "num_heads")

    @property
    def d_model(self) -> int:
        return self._config("d_model", "hidden_size")

    @property
    def max_tokens(self) -> int | None:
        limit = getattr(self.model.config, "max_position_embeddings", None)
        return limit if isinstance(limit, int) else None

    @property
    def specials(self) -> tuple[str, ...]:
        return tuple(self.tokenizer.all_special_tokens)

    def tokenize(self, text: str, side: str = "source") -> list[int]:
        if side not in ("source", "target"):
            raise ValueError(f"side must be 'source' or 'target'; received {side!r}.")
        out = self.tokenizer(text) if side == "source" else self.tokenizer(text_target=text)
        return list(out["input_ids"])

    def pieces(self, ids) -> list[str]:
        return list(self.tokenizer.convert_ids_to_tokens(list(ids)))

    def detokenize(self, ids) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def translate_ids(self, src_ids, max_new_tokens: int) -> list[int]:
        return translate_ids(self, src_ids, max_new_tokens)

    def attention(self, src_ids, tgt_ids):
        return cross_attentions(self, src_ids, tgt_ids)

    def trace_layer(self, src_ids, tgt_ids, layer: int, scale: bool = True) -> AttentionTrace:
        """The hooked trace (the model's own scaling: ``scale`` is not used)."""
        return layer_trace(self, (src_ids, tgt_ids), layer)

    def switch_heads_off(self, src_ids, tgt_ids, layer: int, heads_off=()) -> AblationResult:
        return layer_ablation(self, (src_ids, tgt_ids), layer, heads_off=heads_off)

    def __repr__(self) -> str:
        n_params = sum(p.numel() for p in self.model.parameters())
        return (f"LoadedModel(name={self.name!r}, n_layers={self.n_layers}, "
                f"n_heads={self.n_heads}, d_model={self.d_model}, "
                f"parameters={n_params / 1e6:.3g}M)")


def use_threads(n: int) -> None:
    """Run torch's CPU kernels on ``n`` threads. A classroom server wants 1: with several
    sessions at once, one thread per pass is steadier than two passes each fighting for two
    (measured in benchmarks/bench_models.py)."""
    from xattn._checks import check_int

    n = check_int(n, "n", minimum=1)
    import torch

    torch.set_num_threads(n)


def load_model(name: str, *, allowed=None) -> LoadedModel:
    """Load a tokenizer and model by name (a hub id, or a local ``save_pretrained`` folder).

    Parameters
    ----------
    name : str
        Must be in ``allowed``: a link to the page must never make the server download an
        arbitrary model.
    allowed : iterable of str, optional
        Defaults to ``xattn.translator.allowed_models()``.

    Raises
    ------
    ValueError
        ``name`` is not allowed, or its folder declares sizes beyond its weights
        (``xattn.torch_models._sizes``).
    ModelUnavailable
        Packages missing, no network on first use, not a model...: said in one or two sentences.
    """
    check_allowed(name, allowed)
    reason = missing_packages()
    if reason:
        raise ModelUnavailable(reason)
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    if not _on_disk(name) and not _hub_reachable():
        raise ModelUnavailable(_offline(name))
    if os.path.isdir(name):
        check_declared_sizes(name)       # before transformers builds what it declares
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Recommended: pip install sacremoses")
        tokenizer = _load("tokenizer", name, AutoTokenizer.from_pretrained)
        model = _load("model", name, AutoModelForSeq2SeqLM.from_pretrained,
                      attn_implementation="eager")
    return LoadedModel(model, tokenizer, name)


def _offline(name: str) -> str:
    return (f"{name!r} is not on this machine and the Hugging Face hub cannot be reached. The "
            "first use downloads it once; later loads read the local cache (HF_HOME).")


def _on_disk(name: str) -> bool:
    """A local folder, or a hub model already in the local cache."""
    if os.path.isdir(name):
        return True
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(name, "config.json"), str)


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether huggingface.co answers within ``timeout`` seconds: transformers' own retries
    take about 50 s to give up on a machine without network, and a class would wait."""
    import socket

    if os.environ.get("HF_HUB_OFFLINE", "").strip() not in ("", "0"):
        return False
    host = os.environ.get("HF_ENDPOINT", "https://huggingface.co").split("//")[-1].split("/")[0]
    try:
        with socket.create_connection((host.split(":")[0], 443), timeout=timeout):
            return True
    except OSError:
        return False


def _load(part: str, name: str, from_pretrained, **kwargs):
    try:
        return from_pretrained(name, trust_remote_code=False, **kwargs)
    except Exception as err:    # any failure of a third-party loader becomes one plain message
        text = (str(err).strip().splitlines() or [type(err).__name__])[0]
        if "connect" in text or "offline" in text.lower():
            raise ModelUnavailable(_offline(name)) from err
        raise ModelUnavailable(f"Could not load the {part} of {name!r}: {text[:200]}") from err
