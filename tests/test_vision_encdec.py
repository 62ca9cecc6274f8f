"""The NumPy VisionEncoderDecoder (``xattn.vision``) against transformers on tiny random models.

Three shapes cover TrOCR's layouts: a ViT encoder wider than the decoder (``enc_to_dec_proj``)
with learned positions and a tied output layer; a DeiT encoder (CLS and distillation tokens)
on a 16x64 image read at its own width by the decoder (``cross_attention_hidden_size``, as
TrOCR-small), sinusoidal positions, scaled embeddings, ReLU, no embedding norm, an untied
output layer; and a ViT of the decoder's width without query/key/value biases. Each model is
saved with ``save_pretrained`` and read back by ``xattn.vision`` from the folder; the reference
is the same model in float64 (transformers' ``from_pretrained`` leaves TrOCR's sinusoidal table
on the meta device, so the model in memory is the reference). Cross-attention, encoder output
and logits agree within 1e-5 of their scale; greedy ids equal ``generate``'s. The image
processing is compared with ``ViTImageProcessorPil``. These tests need torch
(``models_or_skip``: they fail instead where XATTN_REQUIRE_MODELS=1).
"""

import copy

import numpy as np
import pytest
from model_helpers import models_or_skip

from xattn.vision import VisionEncoderDecoder, WideSourceAttention, patch_boxes, preprocess
from xattn.vision.image import ImageProcessing, resize_bilinear

SHAPES = {
    "vit-proj": ("vit", {}, {}),
    "deit-wide": ("deit", dict(image_size=[16, 64]),
                  dict(cross_attention_hidden_size=24, use_learned_position_embeddings=False,
                       scale_embedding=True, activation_function="relu",
                       layernorm_embedding=False, tie_word_embeddings=False)),
    "vit-no-qkv-bias": ("vit", dict(hidden_size=16, qkv_bias=False), dict(decoder_layers=3)),
}
TARGET = [5, 9, 13, 21, 2]


@pytest.fixture(scope="module", params=list(SHAPES))
def models(request, tmp_path_factory):
    """(the transformers model in float32, the same in float64, the NumPy model)."""
    models_or_skip()
    import torch

    from devtools.tiny_vision import save_tiny_vision, tiny_vision
    torch.set_num_threads(1)
    kind, encoder, decoder = SHAPES[request.param]
    model = tiny_vision(kind, seed=len(request.param), encoder=encoder, decoder=decoder)
    folder = save_tiny_vision(model, tmp_path_factory.mktemp(request.param))
    return model, copy.deepcopy(model).double(), VisionEncoderDecoder.from_folder(folder)


def pixels(ours, seed=0):
    shape = (3, *ours.config.encoder.image_size)
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(got, want, what):
    want = np.asarray(want, dtype=np.float64)
    np.testing.assert_allclose(got, want, rtol=0, err_msg=what,
                               atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_teacher_forcing_matches_transformers_float64(models):
    import torch

    _, exact, ours = models
    px = pixels(ours)
    start = ours.config.decoder.decoder_start_token_id
    with torch.no_grad():
        ref = exact(pixel_values=torch.tensor(px[None]).double(), output_attentions=True,
                    decoder_input_ids=torch.tensor([[start, *TARGET[:-1]]]))
    run = ours.forward(px, TARGET)
    cross = np.stack([a[0].numpy() for a in ref.cross_attentions])           # (L, h, T, S)
    e = ours.config.encoder
    assert run.cross_attention.shape == cross.shape == (
        ours.n_layers, ours.n_heads, len(TARGET), e.n_positions)
    encoder = ref.encoder_last_hidden_state
    if ours.enc_to_dec_proj is not None:                  # the decoder reads it projected
        with torch.no_grad():
            encoder = exact.enc_to_dec_proj(encoder)
    close(run.encoder_output, encoder[0], "encoder output")
    for layer in range(ours.n_layers):
        close(run.cross_attention[layer], cross[layer], f"cross-attention of layer {layer}")
    close(run.logits, ref.logits[0], "logits")
    assert np.ptp(cross, axis=-1).max() > 0.05     # rows far from uniform: a real comparison


@pytest.mark.parametrize("seed", [0, 1])
def test_greedy_with_and_without_cache_equals_generate(models, seed):
    import torch

    model, _, ours = models
    px = pixels(ours, seed)
    with torch.no_grad():
        out = model.generate(pixel_values=torch.tensor(px[None]), num_beams=1, do_sample=False,
                             max_new_tokens=10)
    want = out[0].tolist()[1:]                                 # without the start token
    cached = ours.greedy(px, max_new_tokens=10)
    uncached = ours.greedy(px, max_new_tokens=10, use_cache=False)
    assert list(cached.tgt_ids) == list(uncached.tgt_ids) == want
    np.testing.assert_allclose(cached.cross_attention, uncached.cross_attention, atol=5e-6)
    forced = ours.forward(px, cached.tgt_ids)                  # each step is its teacher row
    np.testing.assert_allclose(cached.cross_attention, forced.cross_attention, atol=5e-6)


def test_every_layer_opens_as_the_model_computes_it(models):
    """Step through and Switch heads off open the layer's own attention module on what it
    read (for TrOCR-small's shape, a source wider than the decoder)."""
    _, _, ours = models
    run = ours.forward(pixels(ours), TARGET)
    for layer in range(ours.n_layers):
        trace = ours.layer_trace(run, layer)
        np.testing.assert_allclose(trace.weights, run.cross_attention[layer], atol=1e-6)
        assert ours.layer_ablation(run, layer, heads_off=[0]).per_head.shape == (ours.n_heads,)
    wide = ours.config.source_width != ours.config.decoder.d_model
    assert isinstance(ours.cross(0), WideSourceAttention) is wide


def test_switching_heads_off_gates_the_real_layer(models):
    import torch

    _, exact, ours = models
    px = pixels(ours)
    gates = np.ones((ours.n_layers, ours.n_heads), dtype=np.float32)
    gates[0, 0] = gates[-1, -1] = 0.0
    layers = exact.decoder.model.decoder.layers
    width = ours.config.decoder.d_model // ours.n_heads

    def hook(i):
        cols = torch.as_tensor(gates[i], dtype=torch.float64).repeat_interleave(width)
        return lambda module, args: (args[0] * cols, *args[1:])

    handles = [layer.encoder_attn.out_proj.register_forward_pre_hook(hook(i))
               for i, layer in enumerate(layers)]
    try:
        with torch.no_grad():
            start = ours.config.decoder.decoder_start_token_id
            ref = exact(pixel_values=torch.tensor(px[None]).double(),
                        decoder_input_ids=torch.tensor([[start, *TARGET[:-1]]]))
    finally:
        for h in handles:
            h.remove()
    close(ours.forward(px, TARGET, head_mask=gates).logits, ref.logits[0], "gated logits")


def test_the_weights_map_the_file(models):
    """Nothing of the weights is copied: the big matrices are views of the mapped file."""
    _, _, ours = models
    for a in (ours.embed_tokens, ours.encoder_layers[0].fc1.weight,
              ours.patch_embedding.weight, ours.decoder_layers[0].fc2.weight):
        base = a
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        assert not isinstance(base, np.ndarray), "a weight was copied out of the file"


def test_boxes_cover_the_image_patch_by_patch(models):
    _, _, ours = models
    e = ours.config.encoder
    boxes = ours.boxes((100, 300, 3))
    assert len(boxes) == e.n_positions
    assert boxes[:e.n_special] == [None] * e.n_special
    area = sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in boxes[e.n_special:])
    assert area == pytest.approx(100 * 300)
    rows, cols = e.grid
    assert boxes[e.n_special + cols] == pytest.approx((0, 100 / rows, 300 / cols, 200 / rows))


def test_a_folder_of_another_kind_is_refused(models, tmp_path):
    import json
    import shutil

    _, _, ours = models
    folder = tmp_path / "m"
    shutil.copytree(ours.name, folder)
    config = json.loads((folder / "config.json").read_text())
    config["decoder"]["model_type"] = "gpt2"
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="the decoder is 'gpt2'"):
        VisionEncoderDecoder.from_folder(folder)
    config["decoder"]["model_type"] = "trocr"
    config["decoder"]["decoder_layers"] += 1
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"has no tensor decoder\.model\.decoder\.layers\."):
        VisionEncoderDecoder.from_folder(folder)
    config["decoder"]["decoder_layers"] = 10 ** 9
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="declares decoder.decoder_layers = 1000000000"):
        VisionEncoderDecoder.from_folder(folder)


def test_wrong_pixels_and_ids_are_named(models):
    _, _, ours = models
    shape = (3, *ours.config.encoder.image_size)
    with pytest.raises(ValueError, match=rf"pixel_values must have shape \({shape[0]}, "):
        ours.encode(np.zeros((3, 5, 5), np.float32))
    with pytest.raises(ValueError, match="each of tgt_ids"):
        ours.forward(pixels(ours), [10 ** 6])
    with pytest.raises(ValueError, match=r"head_mask must have shape"):
        ours.forward(pixels(ours), TARGET, head_mask=np.ones((1, 1)))


# ---------------------------------------------------------------- the image processing
IMAGES = [(20, 100, 3), (16, 64, 3), (40, 30, 3), (33, 70, 4), (25, 25)]


@pytest.mark.parametrize("shape", IMAGES, ids=str)
def test_preprocess_equals_vit_image_processor(shape):
    """ViTImageProcessorPil on the same image: equal where Pillow takes columns first, else
    within one 8-bit level (2/255 after normalising by std 0.5)."""
    models_or_skip()
    from PIL import Image
    from transformers import ViTImageProcessorPil

    image = np.random.default_rng(len(shape) + shape[0]).integers(0, 256, shape, np.uint8)
    processor = ViTImageProcessorPil(size={"height": 16, "width": 64}, image_mean=[0.5] * 3,
                                     image_std=[0.5] * 3)
    want = processor(Image.fromarray(image).convert("RGB"), return_tensors="np")
    got = preprocess(image, ImageProcessing((16, 64)))
    assert got.shape == want["pixel_values"][0].shape == (3, 16, 64)
    np.testing.assert_allclose(got, want["pixel_values"][0], rtol=0, atol=2 / 255 + 1e-6)


@pytest.mark.parametrize("size", [(37, 91, 32, 32), (100, 300, 384, 384), (10, 10, 64, 16),
                                  (20, 640, 16, 64), (5, 7, 3, 2), (1, 1, 16, 64)], ids=str)
def test_resize_equals_pil_to_the_bit(size):
    """Shapes where Pillow resizes columns first (or one side only): equal to the bit."""
    pil = pytest.importorskip("PIL.Image")
    h, w, height, width = size
    image = np.random.default_rng(h * w).integers(0, 256, (h, w, 3), np.uint8)
    want = np.asarray(pil.fromarray(image).resize((width, height), pil.BILINEAR))
    np.testing.assert_array_equal(resize_bilinear(image, height, width), want)


def test_patch_boxes_mark_the_special_tokens():
    boxes = patch_boxes((10, 20), (1, 2), n_special=2)
    assert boxes == [None, None, (0.0, 0.0, 10.0, 10.0), (10.0, 0.0, 20.0, 10.0)]


def test_patch_boxes_leave_out_what_the_conv_leaves_out():
    """An image resized to 20 x 20 in 8 x 8 patches: the 2 x 2 grid covers 16 of 20 pixels
    each way, so the last patch ends at 80 % of the original image's height and width."""
    boxes = patch_boxes((40, 20), (2, 2), n_special=0, covered=(16 / 20, 16 / 20))
    assert boxes[-1] == pytest.approx((8.0, 16.0, 16.0, 32.0))


@pytest.mark.parametrize("image,match", [
    (np.zeros((4, 4), np.float32), "uint8 pixels"),
    (np.zeros((4, 4, 2), np.uint8), r"\(height, width, 1\|3\|4\)"),
    (np.zeros((0, 4, 3), np.uint8), "received shape"),
])
def test_bad_images_are_refused_by_name(image, match):
    with pytest.raises(ValueError, match=match):
        preprocess(image)


def test_float32_gelu_is_the_float64_one_within_float32():
    from xattn.encdec.layers import activation
    from xattn.vision.gelu import gelu

    x = np.random.default_rng(0).standard_normal(20000).astype(np.float32) * 4
    x[:6] = [0.0, -30.0, 30.0, 1e-30, -1e-30, -5.0]
    got, want = gelu(x), activation("gelu")(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    assert (np.abs(got - want) <= 2e-7 * np.maximum(1, np.abs(x))).all()
    assert gelu(np.float32([-30.0]))[0] == 0 and gelu(np.float32([30.0]))[0] == 30


@pytest.mark.parametrize("fields,match", [
    ({"resample": 3}, "not bilinear"),
    ({"do_center_crop": True}, "do_center_crop, which is not implemented"),
    ({"size": {"shortest_edge": 384}}, "size must be a number or"),
    ({"image_mean": "half"}, "image_mean must be a list of numbers"),
])
def test_a_processor_asking_what_is_not_implemented_is_refused(tmp_path, fields, match):
    import json

    from xattn.vision.image import read_processing

    path = tmp_path / "preprocessor_config.json"
    path.write_text(json.dumps({"size": 384, **fields}))
    with pytest.raises(ValueError, match=match):
        read_processing(path)


def test_a_processor_config_is_read_as_trocr_writes_it(tmp_path):
    import json

    from xattn.vision.image import read_processing

    path = tmp_path / "preprocessor_config.json"
    path.write_text(json.dumps({"size": 384, "resample": 2, "image_mean": [0.5, 0.5, 0.5],
                                "image_std": [0.5, 0.5, 0.5], "do_normalize": True}))
    assert read_processing(path) == ImageProcessing((384, 384))


def test_transformers_reading_the_folder_agrees(models):
    """The folder as transformers reads it (``from_pretrained``: its tying, its defaults) gives
    the logits the NumPy model gives. Not for sinusoidal positions: transformers 5.25 leaves
    TrOCR's sinusoidal table on the meta device when it loads a folder."""
    import torch
    from transformers import VisionEncoderDecoderModel

    _, _, ours = models
    if not ours.config.decoder.use_learned_position_embeddings:
        pytest.skip("from_pretrained cannot run TrOCR's sinusoidal positions (meta tensor)")
    loaded = VisionEncoderDecoderModel.from_pretrained(ours.name, attn_implementation="eager")
    px = pixels(ours, 3)
    start = ours.config.decoder.decoder_start_token_id
    with torch.no_grad():
        ref = loaded.eval()(pixel_values=torch.tensor(px[None]),
                            decoder_input_ids=torch.tensor([[start, *TARGET[:-1]]]))
    close(ours.forward(px, TARGET).logits, ref.logits[0], "logits of the loaded folder")


def test_text_comes_out_through_the_folder_s_tokenizer(models, tmp_path):
    import shutil

    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    _, _, ours = models
    with pytest.raises(ValueError, match="has no tokenizer.json"):
        ours.detokenize([5, 6])
    folder = tmp_path / "m"
    shutil.copytree(ours.name, folder)
    vocab = {f"w{i}": i for i in range(ours.config.decoder.vocab_size)}
    Tokenizer(WordLevel(vocab, unk_token="w3")).save(str(folder / "tokenizer.json"))
    assert VisionEncoderDecoder.from_folder(folder).detokenize([5, 6]) == "w5 w6"
