"""The Percept-V tasks: ``perceptv/<domain>`` for every domain (the reference's
distribution) and ``perceptv_fixed/<domain>`` for the domains whose reference shortcut a
variant removes. Sample ``index`` is problem size ``index // 10 % 20 + 1``."""
from __future__ import annotations

from . import colours, counting, grids, rows  # noqa: F401  (define the domains)
from .common import DOMAINS, draw_problem, size_instance
from .family import FAMILY


def _cases() -> dict[str, dict]:
    out = {f"perceptv/{name}": {"domain": name, "fixed": False} for name in DOMAINS}
    out.update({f"perceptv_fixed/{name}": {"domain": name, "fixed": True} for name, d in DOMAINS.items() if d.fixes})
    return out


def _about(domain: str, fixed: bool) -> str:
    d = DOMAINS[domain]
    return (d.fn.__doc__ or "").strip().split("\n")[0] + (f" Fixed: {d.fixes}." if fixed else "")


@FAMILY.task(cases=_cases(), description=_about, rank=lambda domain, fixed: list(DOMAINS).index(domain) + 1)
def problem(rng, index: int, domain: str, fixed: bool):
    """One problem of ``domain`` at the size and instance that ``index`` names."""
    size, instance = size_instance(index)
    return draw_problem(DOMAINS[domain], rng, size, instance, fixed)
