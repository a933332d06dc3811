"""A tiny, randomly initialised vision-language checkpoint built entirely in-process: a
byte-level BPE tokenizer trained on questions of the registered tasks (one per group), a
2-layer CLIP vision tower and a 2-layer Llama text model joined LLaVA-style, its
numpy-backed image processor and a chat template. ``HFRunner`` loads it exactly like a
downloaded model, so tests run the real runner end to end offline. Its replies are noise:
it validates plumbing, not skill.
"""
from __future__ import annotations

import functools
from pathlib import Path

import torch

from engine.registry import get_task, representatives

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'].upper() }}: {% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}")
IMAGE_SIZE, PATCH = 28, 14   # 2x2 patches: 4 image tokens per image


@functools.lru_cache(maxsize=1)
def _corpus() -> tuple[str, ...]:
    """The first question and answer of one task per group of the registry (its first three
    id parts: family, kind, category), plus the reply words the protocols use: drawn once per
    process, then reused. One task per group, not every task: tasks of a group share their
    wording, and drawing all 3,500 took about 30 s in every process that built a model."""
    texts = ["USER: ASSISTANT: A B C D yes no positive negative [1, 2, 3, 4] Judgment: Error Position: Type:"]
    for t in representatives(3):
        s = get_task(t).sample(0, 0)
        texts += [s.question, s.answer_text]
    return tuple(texts)


def build_tiny_model(out: str | Path, seed: int = 0, vocab_size: int = 512) -> Path:
    """Write the checkpoint (config, weights, tokenizer, processor, chat template) to ``out``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration,
                              LlavaProcessor, PreTrainedTokenizerFast)
    from transformers.models.llava.image_processing_pil_llava import LlavaImageProcessorPil

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<pad>", "<s>", "</s>", "<image>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(_corpus(), trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                        padding_side="left")
    vision = CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2,
                              image_size=IMAGE_SIZE, patch_size=PATCH)
    text = LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=4,
                       num_hidden_layers=2, vocab_size=len(tokenizer), pad_token_id=0, bos_token_id=1, eos_token_id=2,
                       max_position_embeddings=4096)
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
                         image_seq_length=(IMAGE_SIZE // PATCH) ** 2, vision_feature_select_strategy="default")
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = 0
    processor = LlavaProcessor(
        image_processor=LlavaImageProcessorPil(size={"shortest_edge": IMAGE_SIZE},
                                               crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}),
        tokenizer=tokenizer, patch_size=PATCH, vision_feature_select_strategy="default",
        num_additional_image_tokens=1, chat_template=CHAT_TEMPLATE)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out
