"""Tiny, randomly initialised checkpoints of the vision-language families ``procvis eval``
runs in process, each built offline the way the family ships: its model class and config
(tiny dimensions), its processor with the image processor that needs no torchvision (the
PIL backend), a byte-level BPE tokenizer carrying the family's special tokens, and a chat
template laid out like the family's own (PaliGemma's, like the real checkpoints, has none).
``HFRunner`` loads each folder exactly like a downloaded checkpoint, so tests cover every
family's real processor and model code end to end. Replies are noise: they test plumbing.

:data:`FAMILIES` maps a family name to its builder; :func:`build_family` writes one.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

import torch

from .hf_runner import without_video

CORPUS = ["USER: ASSISTANT: user assistant model system A B C D yes no positive negative left right",
          "How many circles are there? Which shape is different? Answer with one option: [1, 2, 3, 4].",
          "The first image shows a red square, the second a blue triangle. Are they the same shape?",
          "Judgment: Error Position: Type: colour size count rotation order missing piece panel"]
VISION = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2)
TEXT = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
            max_position_embeddings=4096)


def tokenizer(special: list[str], named: dict[str, str] | None = None, vocab_size: int = 400,
              bos: str | None = "<s>", eos: str = "</s>", pad: str = "<pad>"):
    """A byte-level BPE tokenizer trained on :data:`CORPUS` whose first ids are ``pad``,
    ``bos``, ``eos`` and then ``special``; ``named`` gives attribute names to special tokens
    (``image_token`` and the like, which processors read). Returns the fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    first = [t for t in (pad, bos, eos) if t] + [t for t in special if t not in (pad, bos, eos)]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=first, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token=pad, bos_token=bos, eos_token=eos,
                                   extra_special_tokens=dict(named or {}), padding_side="left")


def _ids(tok, *tokens: str) -> list[int]:
    """The ids of ``tokens`` in ``tok``."""
    return [tok.convert_tokens_to_ids(t) for t in tokens]


def _text(tok, **extra) -> dict:
    """Tiny text-model config keywords for ``tok``'s vocabulary and special ids (output
    embeddings untied: tied random ones repeat the last token forever)."""
    return dict(TEXT, vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                eos_token_id=tok.eos_token_id, tie_word_embeddings=False, **extra)


# Chat templates: every user turn lists its images first, then its text.
def _template(turn: str, image: str, cue: str, end: str) -> str:
    """A chat template writing each message as ``turn`` (with ``{role}``) + its content
    (``image`` per image) + ``end``, and ``cue`` after the last when asked to (newlines as
    expressions: a processor's Jinja drops the one after a block tag). Returns the source."""
    turn, image, cue, end = (p.replace("\n", "{{ '\\n' }}") for p in (turn, image, cue, end))
    head = turn.replace("{role}", "{{ m['role'] }}")
    return ("{% for m in messages %}" + head + "{% for c in m['content'] %}{% if c['type'] == 'image' %}" + image
            + "{% else %}{{ c['text'] }}{% endif %}{% endfor %}" + end + "{% endfor %}"
            "{% if add_generation_prompt %}" + cue + "{% endif %}")


LLAVA_TEMPLATE = _template("{role}: ", "<image>", "assistant:", "\n")
CHATML = _template("<|im_start|>{role}\n", "<|vision_start|><|image_pad|><|vision_end|>", "<|im_start|>assistant\n",
                   "<|im_end|>\n")
INTERNVL_TEMPLATE = _template("<|im_start|>{role}\n", "<IMG_CONTEXT>\n", "<|im_start|>assistant\n", "<|im_end|>\n")
IDEFICS_TEMPLATE = _template("{role}:", "<image>", "assistant:", "<end_of_utterance>\n")
GEMMA_TEMPLATE = _template("<start_of_turn>{role}\n", "<start_of_image>", "<start_of_turn>model\n", "<end_of_turn>\n")


def _llava() -> tuple:
    """LLaVA: a CLIP vision tower, a Llama text model. Returns (model, processor)."""
    from transformers import CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor
    from transformers.models.llava.image_processing_pil_llava import LlavaImageProcessorPil

    tok = tokenizer(["<image>"], {"image_token": "<image>"})
    config = LlavaConfig(vision_config=CLIPVisionConfig(**VISION, image_size=28, patch_size=14),
                         text_config=dict(_text(tok), model_type="llama"), image_token_index=_ids(tok, "<image>")[0],
                         image_seq_length=4, vision_feature_select_strategy="default")
    images = LlavaImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(image_processor=images, tokenizer=tok, patch_size=14, num_additional_image_tokens=1,
                               vision_feature_select_strategy="default", chat_template=LLAVA_TEMPLATE)
    return LlavaForConditionalGeneration(config), processor


def _llava_next() -> tuple:
    """LLaVA-NeXT: any-resolution tiles of a CLIP tower, a Llama text model. Returns (model, processor)."""
    from transformers import CLIPVisionConfig, LlavaNextConfig, LlavaNextForConditionalGeneration, LlavaNextProcessor
    from transformers.models.llava_next.image_processing_pil_llava_next import LlavaNextImageProcessorPil

    tok = tokenizer(["<image>"], {"image_token": "<image>"})
    grid = [[28, 28], [28, 56], [56, 28]]
    config = LlavaNextConfig(vision_config=CLIPVisionConfig(**VISION, image_size=28, patch_size=14),
                             text_config=dict(_text(tok), model_type="llama"), image_grid_pinpoints=grid,
                             image_token_index=_ids(tok, "<image>")[0], image_seq_length=4,
                             vision_feature_select_strategy="default", vision_feature_layer=-1)
    images = LlavaNextImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28},
                                        image_grid_pinpoints=grid)
    processor = LlavaNextProcessor(image_processor=images, tokenizer=tok, patch_size=14, num_additional_image_tokens=1,
                                   vision_feature_select_strategy="default", chat_template=LLAVA_TEMPLATE)
    return LlavaNextForConditionalGeneration(config), processor


def _idefics(kind: str) -> Callable:
    """A builder for Idefics3 (``kind`` "idefics3") or SmolVLM ("smolvlm"): a SigLIP-style
    vision tower, pixel shuffle, a Llama text model, images split into tiles."""
    def build() -> tuple:
        import transformers as tf

        cls = {"idefics3": "Idefics3", "smolvlm": "SmolVLM"}[kind]
        pil = getattr(importlib.import_module(f"transformers.models.{kind}.image_processing_pil_{kind}"),
                      f"{cls}ImageProcessorPil")
        tok = tokenizer(["<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>"],
                        {"image_token": "<image>"})
        vision = dict(VISION, image_size=28, patch_size=14)
        config = getattr(tf, f"{cls}Config")(vision_config=vision, text_config=dict(_text(tok), model_type="llama"),
                                             image_token_id=_ids(tok, "<image>")[0], scale_factor=2)
        images = pil(size={"longest_edge": 56}, max_image_size={"longest_edge": 28}, do_image_splitting=True)
        extra = {"video_processor": None} if kind == "smolvlm" else {}
        processor = without_video(getattr(tf, f"{cls}Processor"))(
            image_processor=images, tokenizer=tok, image_seq_len=1, chat_template=IDEFICS_TEMPLATE, **extra)
        return getattr(tf, f"{cls}ForConditionalGeneration")(config), processor
    return build


def _paligemma() -> tuple:
    """PaliGemma: a SigLIP vision tower, a Gemma text model, no chat template. Returns (model, processor)."""
    from transformers import PaliGemmaConfig, PaliGemmaForConditionalGeneration, PaliGemmaProcessor
    from transformers.models.siglip.image_processing_pil_siglip import SiglipImageProcessorPil

    tok = tokenizer(["<image>"], {"image_token": "<image>"}, bos="<bos>", eos="<eos>")
    images = SiglipImageProcessorPil(size={"height": 28, "width": 28})
    processor = PaliGemmaProcessor(image_processor=images, tokenizer=tok)      # adds its location tokens
    images.image_seq_length = 4
    config = PaliGemmaConfig(vision_config=dict(VISION, model_type="siglip_vision_model", image_size=28, patch_size=14,
                                                projection_dim=64),
                             text_config=dict(_text(tok), model_type="gemma", head_dim=16),
                             image_token_index=_ids(tok, "<image>")[0], vocab_size=len(tok), projection_dim=64,
                             hidden_size=64, tie_word_embeddings=False)
    return PaliGemmaForConditionalGeneration(config), processor


def _gemma3() -> tuple:
    """Gemma 3: a SigLIP vision tower pooled to a few tokens, a Gemma 3 text model. Returns (model, processor)."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor
    from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil

    named = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"}
    tok = tokenizer([*named.values(), "<start_of_turn>", "<end_of_turn>"], named, bos="<bos>", eos="<eos>")
    boi, eoi, image = _ids(tok, *named.values())
    config = Gemma3Config(vision_config=dict(VISION, model_type="siglip_vision_model", image_size=28, patch_size=14),
                          text_config=dict(_text(tok), model_type="gemma3_text", head_dim=16, sliding_window=64,
                                           query_pre_attn_scalar=16),
                          mm_tokens_per_image=4, boi_token_index=boi, eoi_token_index=eoi, image_token_index=image,
                          tie_word_embeddings=False)
    images = Gemma3ImageProcessorPil(size={"height": 28, "width": 28})
    processor = Gemma3Processor(image_processor=images, tokenizer=tok, image_seq_length=4, chat_template=GEMMA_TEMPLATE)
    return Gemma3ForConditionalGeneration(config), processor


def _qwen(version: str) -> Callable:
    """A builder for Qwen2-VL (``version`` "2"), Qwen2.5-VL ("2_5") or Qwen3-VL ("3"): a ViT
    with 2x2 patch merging and multimodal rotary positions, a Qwen text model."""
    def build() -> tuple:
        import transformers as tf
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

        named = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>"}
        tok = tokenizer(["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", *named.values()], named,
                        bos=None, eos="<|im_end|>")
        image, video, start, end = _ids(tok, "<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>")
        patch = 16 if version == "3" else 14
        vision = {"2": dict(depth=2, embed_dim=32, hidden_size=64, num_heads=4, patch_size=patch),
                  "2_5": dict(depth=2, hidden_size=32, intermediate_size=64, out_hidden_size=64, num_heads=4,
                              fullatt_block_indexes=[1], window_size=56, patch_size=patch),
                  "3": dict(depth=2, hidden_size=32, intermediate_size=64, out_hidden_size=64, num_heads=4,
                            num_position_embeddings=16, deepstack_visual_indexes=[0], patch_size=patch)}[version]
        rope = {"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0}
        if version == "3":
            rope["mrope_interleaved"] = True
        name = {"2": "Qwen2VL", "2_5": "Qwen2_5_VL", "3": "Qwen3VL"}[version]
        text = _text(tok, head_dim=16, rope_parameters=rope)
        config = getattr(tf, f"{name}Config")(vision_config=vision, text_config=text, image_token_id=image,
                                              video_token_id=video, vision_start_token_id=start,
                                              vision_end_token_id=end)
        pixels = (2 * patch) ** 2
        images = Qwen2VLImageProcessorPil(size={"shortest_edge": pixels, "longest_edge": 4 * pixels},
                                          patch_size=patch, merge_size=2, temporal_patch_size=2)
        processor = without_video(getattr(tf, f"{name}Processor"))(image_processor=images, tokenizer=tok,
                                                                   video_processor=None, chat_template=CHATML)
        return getattr(tf, f"{name}ForConditionalGeneration")(config), processor
    return build


def _internvl() -> tuple:
    """InternVL: an InternViT tower with pixel shuffle, a Qwen2 text model. Returns (model, processor)."""
    from transformers import InternVLConfig, InternVLForConditionalGeneration, InternVLProcessor
    from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

    named = {"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
             "video_token": "<video>"}
    tok = tokenizer(["<|im_start|>", "<|im_end|>", *named.values()], named, bos=None, eos="<|im_end|>")
    config = InternVLConfig(vision_config=dict(VISION, image_size=28, patch_size=14),
                            text_config=dict(_text(tok), model_type="qwen2"),
                            image_token_id=_ids(tok, "<IMG_CONTEXT>")[0], image_seq_length=1, tie_word_embeddings=False)
    images = GotOcr2ImageProcessorPil(size={"height": 28, "width": 28}, crop_to_patches=False)
    processor = without_video(InternVLProcessor)(image_processor=images, tokenizer=tok, video_processor=None,
                                                 image_seq_length=1, chat_template=INTERNVL_TEMPLATE)
    return InternVLForConditionalGeneration(config), processor


FAMILIES: dict[str, Callable[[], tuple]] = {      # name -> () -> (random model, processor)
    "llava": _llava, "llava_next": _llava_next, "idefics3": _idefics("idefics3"), "smolvlm": _idefics("smolvlm"),
    "paligemma": _paligemma, "gemma3": _gemma3, "qwen2_vl": _qwen("2"), "qwen2_5_vl": _qwen("2_5"),
    "qwen3_vl": _qwen("3"), "internvl": _internvl,
}


def build_family(name: str, out: str | Path, seed: int = 0) -> Path:
    """Write the tiny checkpoint of family ``name`` (a key of :data:`FAMILIES`: config,
    random weights drawn from ``seed``, tokenizer, processor) to ``out``; returns ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model, processor = FAMILIES[name]()
    model = model.eval()
    tok = processor.tokenizer
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out
