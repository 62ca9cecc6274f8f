"""The page on a Hugging Face folder of every family, in a process where torch cannot load.

Each family's tiny random model is saved by transformers (``save_pretrained``: safetensors and
the tokenizer's files) and listed in ``XATTN_MODELS``; the page runs in a fresh process whose
imports of torch and transformers fail, and draws, in Heads, Step through, Decode (over the
source's words: Whole words is on), the Alignment lab (a gold file for the pair on screen; the
special tokens it links to nothing left out of the score) and Switch heads off, the
cross-attention that transformers computes from the same folder (float64, here in the test's
own process).
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import APP, ROOT, decode

from xattn.alignlab import leave_out, read_gold, score_heads, unscored_specials
from xattn.subwords import merge_words, word_groups, word_marker, word_texts

SRC, TGT = "the red cat sees the dog", "le chat rouge voit le chien"
GOLD = "0-0 2-1 1-2 3-3 4-4 5-5\n"          # zero-based src-tgt: the adjective moves
FAMILIES = ("bart", "mbart", "m2m_100", "nllb", "t5")

PAGE = r"""
import importlib.abc, json, os, sys
class NoTorch(importlib.abc.MetaPathFinder):       # as on a server without the models extra
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("torch", "transformers"):
            raise ImportError(f"{name} cannot be imported in this test")
sys.meta_path.insert(0, NoTorch())
sys.path.insert(0, sys.argv[3])
from apptest_helpers import chart, heads_chart, heatmaps
from streamlit.testing.v1 import AppTest

app, folder = sys.argv[1], sys.argv[2]
at = AppTest.from_file(app, default_timeout=300)
src, tgt, gold = sys.argv[4:7]
for key, value in dict(weights="model", model=folder, src=src, tgt=tgt).items():
    at.query_params[key] = value
at.run()
out, problems = {}, []
def look(view):
    at.session_state["view"] = view
    at.run()
    problems.extend(str(e.value) for e in at.exception)
    problems.extend(f"{view}: {e.value}" for e in at.error)
look("Heads")
out["heads"] = [t["z"] for t in heatmaps(heads_chart(at))]
look("Step through")
out["step"] = heatmaps(chart(at, "step_pick"))[0]["z"]
look("Decode")
out["decode_rows"] = heatmaps(chart(at, "decode_rows"))[0]["z"]
out["decode_tokens"] = [m.value for m in at.markdown if m.value.startswith("**So far**")]
look("Switch heads off")
out["ablation"] = chart(at, "ablation_chart")["data"][0]["y"]
look("Alignment")
at.radio(key="gold_first").set_value(0)
at.file_uploader(key="gold_upload").set_value(("gold.txt", gold.encode(), "text/plain"))
at.run()
problems.extend(str(e.value) for e in at.exception)
out["aer"] = chart(at, "aer_chart")["data"][0]["z"]
out["problems"] = problems
out["imported"] = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print(json.dumps(out))
"""


def reference(folder: Path, src_ids, tgt_ids):
    """transformers' float64 cross-attention (L, H, T, S) of the folder, teacher forced."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    model = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager")
    model = model.double().eval()
    start = model.config.decoder_start_token_id
    with torch.no_grad():
        out = model(input_ids=torch.tensor([src_ids]), output_attentions=True,
                    decoder_input_ids=torch.tensor([[start, *tgt_ids[:-1]]]))
    return np.stack([a[0].numpy() for a in out.cross_attentions])


def words(weights, tokenizer, src_ids, tgt_ids):
    """Pieces merged to words as the page merges them, and the words (source, target)."""
    pieces = [tokenizer.convert_ids_to_tokens(ids) for ids in (src_ids, tgt_ids)]
    marker = word_marker(pieces[0] + pieces[1])
    specials = tokenizer.all_special_tokens
    groups = [word_groups(p, specials=specials, marker=marker) for p in pieces]
    return merge_words(weights, *groups), [word_texts(p, g, marker=marker)
                                           for p, g in zip(pieces, groups, strict=True)]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_view_draws_transformers_cross_attention_without_torch(family_dirs, family,
                                                                     tmp_path):
    from transformers import AutoTokenizer

    from xattn.encdec import EncoderDecoder

    folder = family_dirs(family)
    env = {"XATTN_MODELS": str(folder), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", PAGE, APP, str(folder),
                          str(Path(__file__).parent), SRC, TGT, GOLD], capture_output=True,
                         text=True, timeout=900, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    page = json.loads(run.stdout.strip().splitlines()[-1])
    assert page["problems"] == [] and page["imported"] == []

    tokenizer = AutoTokenizer.from_pretrained(folder)
    src_ids = list(tokenizer(SRC)["input_ids"])
    tgt_ids = list(tokenizer(text_target=TGT)["input_ids"])
    cross = reference(folder, src_ids, tgt_ids)                            # (L, H, T, S)
    word_level, (src_words, tgt_words) = words(cross, tokenizer, src_ids, tgt_ids)
    heads = np.stack([decode(z) for z in page["heads"]])                  # layer 1's heads
    np.testing.assert_allclose(heads, word_level[0], atol=1e-5)
    np.testing.assert_allclose(decode(page["step"]), cross[0, 0], atol=1e-5)   # pieces

    ours = EncoderDecoder.from_folder(folder)       # what decoded: its steps, teacher forced
    decoded = ours.decode_steps(src_ids)
    again = reference(folder, src_ids, [ours.tokenizer.piece_id(p) for p in decoded.tokens])
    pieces = tokenizer.convert_ids_to_tokens(src_ids)        # Whole words (on): word columns
    groups = word_groups(pieces, specials=tokenizer.all_special_tokens,
                         marker=word_marker(pieces + list(decoded.tokens)))
    again = merge_words(again, groups, np.arange(again.shape[2]))          # (L, H, T, S_words)
    rows = decode(page["decode_rows"])                   # the last step: every layer and head
    np.testing.assert_allclose(rows, again[:, :, -1].reshape(-1, again.shape[-1]), atol=1e-5)

    pair = read_gold(GOLD.encode(), format="pharaoh", first_index=0, order="src-tgt").pairs[0]
    unscored = unscored_specials(pair, src_words, tgt_words)    # </s>: not a word of the gold
    scores = score_heads([(leave_out(word_level, *unscored), pair)])
    aer = decode(page["aer"])                                       # layers x (heads + mean)
    np.testing.assert_allclose(aer[:, :-1], scores.aer, atol=1e-6)
    ablation = ours.switch_heads_off(src_ids, tgt_ids, 0, (int(np.argmax(
        ours.switch_heads_off(src_ids, tgt_ids, 0).per_head)),))
    np.testing.assert_allclose(decode(page["ablation"]), ablation.per_token, rtol=1e-4, atol=1e-6)
