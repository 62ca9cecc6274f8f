"""Image to text in NumPy: a VisionEncoderDecoder (ViT or DeiT encoder, TrOCR decoder) read
from a Hugging Face folder as it is, its image processing, and each encoder position's box of
the image::

    from xattn.vision import VisionEncoderDecoder
    model = VisionEncoderDecoder.from_folder("trocr-small-printed")   # a folder as it is
    run = model.greedy(model.pixel_values(image))     # image: (H, W, 3) uint8
    run.cross_attention                               # (n_layers, n_heads, n_tgt, n_src)
    model.boxes(image.shape)[2]                       # encoder position 2: (x0, y0, x1, y1)
    model.detokenize(run.tgt_ids)                     # with the folder's tokenizer.json
"""

from xattn.vision.attention import WideSourceAttention
from xattn.vision.config import VisionConfig, read_vision_config
from xattn.vision.decode import ImageDecoding, decode
from xattn.vision.image import ImageProcessing, patch_boxes, preprocess, resize_bilinear
from xattn.vision.model import ImagePass, VisionEncoderDecoder

__all__ = ["ImageDecoding", "ImagePass", "ImageProcessing", "VisionConfig",
           "VisionEncoderDecoder", "WideSourceAttention", "decode", "patch_boxes", "preprocess",
           "read_vision_config", "resize_bilinear"]
