"""Host-to-device copies of a batch's many small tensors."""
from __future__ import annotations

from collections.abc import Sequence

import torch


def to_device(tensors: Sequence[torch.Tensor], device) -> list[torch.Tensor]:
    """``tensors`` on ``device``, each with its own shape and dtype, in the same order.

    CPU tensors bound for a CUDA device are packed into one pinned buffer per dtype and each
    buffer is copied without blocking the host: a handful of transfers the GPU queues behind
    earlier work, instead of one host-blocking copy from pageable memory per tensor. The
    results of one buffer are views of it, and the inputs may be changed as soon as this
    returns. Tensors already pinned (by torch, e.g. a DataLoader's ``pin_memory``) are copied
    without blocking straight from their memory: leave them unchanged until the device has
    used them (torch keeps their memory alive meanwhile). Anything else is a plain
    ``.to(device)``.
    """
    device = torch.device(device)
    if device.type != "cuda":
        return [t.to(device) for t in tensors]
    out: list[torch.Tensor | None] = [None] * len(tensors)
    groups: dict[torch.dtype, list[int]] = {}
    for i, t in enumerate(tensors):
        if t.device.type == "cpu" and not t.is_pinned():
            groups.setdefault(t.dtype, []).append(i)
        else:                                   # already pinned (a DataLoader did it): copied as it is
            out[i] = t.to(device, non_blocking=t.is_pinned())
    for dtype, idx in groups.items():
        sizes = [tensors[i].numel() for i in idx]
        host = torch.empty(sum(sizes), dtype=dtype, pin_memory=True)
        torch.cat([tensors[i].reshape(-1) for i in idx], out=host)
        for i, part in zip(idx, host.to(device, non_blocking=True).split(sizes)):
            out[i] = part.view(tensors[i].shape)
    return out
