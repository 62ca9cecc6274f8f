"""``python -m xattn.torch_models``: list the allowed models, export one sentence's attention, or
convert a checkpoint with pickled weights into a folder that runs in NumPy (``xattn.encdec``).

    python -m xattn.torch_models --list
    python -m xattn.torch_models export --model NAME --src TEXT [--tgt TEXT] [--pieces] -o FILE.npz
    python -m xattn.torch_models convert NAME DIR [--float16]

Errors print one line and exit with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from xattn.torch_models._convert import convert
from xattn.torch_models._loading import load_model
from xattn.translator import ModelUnavailable, allowed_models, cross_attention

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):   # argparse would print the usage and exit by itself
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m xattn.torch_models",
                     description="Cross-attention of real translation models.")
    parser.add_argument("--list", action="store_true", help="print the models allowed here")
    commands = parser.add_subparsers(dest="command")
    export = commands.add_parser("export", help="write one sentence's attention to an .npz")
    export.add_argument("--model", required=True, help="a name from --list")
    export.add_argument("--src", required=True, help="source sentence")
    export.add_argument("--tgt", help="target sentence (default: the model's own translation)")
    export.add_argument("--pieces", action="store_true", help="keep subword pieces, not words")
    export.add_argument("--max-new-tokens", type=int, default=64,
                        help="longest translation, in pieces (default 64)")
    export.add_argument("-o", "--output", required=True, help="the .npz file to write")
    conv = commands.add_parser("convert", help="write a model as a folder NumPy reads "
                               "(xattn.encdec.load_encdec): config, safetensors, tokenizer")
    conv.add_argument("name", help="a name from --list (hub id or save_pretrained folder)")
    conv.add_argument("dir", help="a new or empty folder to write")
    conv.add_argument("--float16", action="store_true",
                      help="store the matrices in float16 (half the size; computed in float32)")
    return parser


def _quiet_libraries() -> None:
    """No retry warnings or progress bars from the hub and transformers: errors stay one line.
    (Read when they are first imported; in a process that imported them already, no change.)"""
    for name, value in (("TRANSFORMERS_VERBOSITY", "error"), ("HF_HUB_VERBOSITY", "error"),
                        ("HF_HUB_DISABLE_PROGRESS_BARS", "1")):
        os.environ.setdefault(name, value)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, or 2 after printing one error line)."""
    try:
        args = _parser().parse_args(argv)
        if args.list:
            print("\n".join(allowed_models()))
            return 0
        if args.command == "convert":
            return _convert(args)
        if args.command != "export":
            raise _UsageError("give --list or the export command or the convert command "
                              "(see --help)")
        _quiet_libraries()
        print(f"loading {args.model} (a hub model is downloaded on its first use)", flush=True)
        result = cross_attention(load_model(args.model), args.src, args.tgt,
                                 words=not args.pieces, max_new_tokens=args.max_new_tokens)
        result.save(args.output)
    except (_UsageError, ValueError, TypeError, ModelUnavailable, OSError) as err:
        return _error(err)
    if result.translated:
        print(f"translation: {result.tgt_text}")
    print(f"wrote {args.output}: {result!r}")
    return 0


def _error(err: Exception) -> int:
    message = " ".join(str(err).split()) or type(err).__name__
    print(f"python -m xattn.torch_models: error: {message}", file=sys.stderr)
    return 2


def _convert(args) -> int:
    try:
        _quiet_libraries()
        print(f"loading {args.name} (a hub model is downloaded on its first use)", flush=True)
        folder, diff = convert(args.name, args.dir,
                               dtype="float16" if args.float16 else "float32")
    except (ValueError, TypeError, ModelUnavailable, OSError) as err:
        return _error(err)
    print(f"wrote {folder}: {', '.join(sorted(p.name for p in folder.iterdir()))}")
    print(f"checked: logits of one sentence, the folder read back against the checkpoint, "
          f"differ by at most {diff:.2g}")
    print(f"serve it without torch: XATTN_MODELS={folder} (xattn.encdec.load_encdec)")
    return 0
