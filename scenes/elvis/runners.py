"""The runners the ELVIS family adds to ``--model``."""
from .family import FAMILY


@FAMILY.runner("vit", help="the ELVIS ViT-B/16 baseline, a classifier trained per task (vit:WEIGHTS for a local "
                           "checkpoint); answers the elvis protocols only")
def vit_runner(weights, seed=0, device="cpu", batch_size=8):
    from .vit_runner import ViTRunner       # torch and transformers: only when this runner is asked for

    return ViTRunner(weights=weights, seed=seed, device=device)
